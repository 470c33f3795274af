// No secret in what tide shows: with a real controller, state file, live
// report and HTTP server, the API token appears in no log line, no reply
// (the live page, /status, /metrics, /api/v1/report, /healthz, error
// replies) and not in the state file.
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "controller/controller.h"
#include "controller/fakes_test.h"
#include "controller/http_server.h"
#include "controller/live_report.h"
#include "controller/store.h"
#include "controller/token_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::SlurmJob;
using testing::SlurmNode;

const Timestamp kNow = FromUnixSeconds(1'800'000'200);

// The HTTP server's view of a controller, as `tide run` wires it.
class ControllerSource final : public StatusSource {
 public:
  ControllerSource(Controller* c, LiveReportSource* report, const config::Config& cfg)
      : c_(c), report_(report), page_(LiveReportPage(cfg)) {}
  std::string MetricsText() override { return c_->MetricsText(); }
  std::string StatusJson() override { return c_->StatusJson(); }
  bool Healthy(std::string* why) override { return c_->Healthy(kNow, why); }
  std::string ReportPage() override { return page_; }
  Result<std::string> ReportJson() override { return report_->Json(kNow + Seconds(30)); }
  Result<std::string> Command(const std::string& name, const std::map<std::string, std::string>&) override {
    if (name != "pause") return absl::NotFoundError(StrCat("no command '", name, "'"));
    c_->Pause(true);
    return std::string("{\"paused\": true}\n");
  }

 private:
  Controller* c_;
  LiveReportSource* report_;
  const std::string page_;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(Secrets, TheApiTokenAppearsInNoLogReplyOrStateFile) {
  std::string dir = StrCat(::testing::TempDir(), "/tide_secrets_test_XXXXXX");
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  config::Config cfg = testing::TwoPools();
  cfg.live.state = dir + "/state.db";
  cfg.live.http.token_file = dir + "/token";
  auto token = LoadToken(cfg.live.http.token_file);
  ASSERT_TRUE(token.ok()) << token.status();
  ASSERT_TRUE(token->created);
  const std::string secret = token->value;

  testing::FakeSlurm slurm;
  for (int i = 1; i <= 4; ++i) {
    slurm.view.nodes.push_back(SlurmNode(StrCat("gpu", i), "idle", {"CLOUD", "POWERED_DOWN", "DRAIN"}, 0,
                                          "tide: not provisioned"));
  }
  for (int j = 1; j <= 6; ++j) slurm.view.jobs.push_back(SlurmJob(j, "PENDING", 2));
  auto backend = testing::SlurmOver(cfg, &slurm);
  testing::FakeProvider provider;
  auto store = Store::Open(cfg.live.state);
  ASSERT_TRUE(store.ok()) << store.status();
  std::mutex log_mu;
  std::vector<std::string> log;
  {
    Controller ctl(cfg, *autoscale::Autoscaler::Make(cfg.policies.tide), backend.get(), &provider, store->get(),
                   nullptr, ControllerOptions{}, [&](const std::string& line) {
                     std::lock_guard<std::mutex> lock(log_mu);
                     log.push_back(line);
                   });
    LiveReportSource report(cfg, cfg.live.state);
    ControllerSource source(&ctl, &report, cfg);
    HttpOptions o;
    o.port = 0;
    o.token = secret;
    HttpServer server(o, &source);
    ASSERT_TRUE(server.Start().ok());

    // Loops that act, fail and act again: every kind of log line and status.
    ASSERT_TRUE(ctl.RunLoop(kNow).ok);
    slurm.query_error = absl::UnavailableError("slurmctld does not answer");
    EXPECT_FALSE(ctl.RunLoop(kNow + Seconds(10)).ok);
    slurm.query_error = OkStatus();
    ctl.RunLoop(kNow + Seconds(20));

    httplib::Client client("127.0.0.1", server.port());
    std::vector<std::string> replies;
    auto keep = [&](const httplib::Result& res) {
      ASSERT_TRUE(res);
      std::ostringstream all;
      for (const auto& [name, value] : res->headers) all << name << ": " << value << "\n";
      replies.push_back(all.str() + res->body);
    };
    for (const char* path : {"/", "/status", "/metrics", "/api/v1/report", "/healthz", "/nope"}) {
      auto res = client.Get(path);
      keep(res);
      if (std::string_view(path) != "/nope") {
        EXPECT_EQ(res->status, 200) << path;
      }
    }
    const httplib::Headers right = {{"Authorization", StrCat("Bearer ", secret)}};
    const httplib::Headers wrong = {{"Authorization", StrCat("Bearer ", secret.substr(0, 32))}};
    keep(client.Post("/api/v1/pause", wrong));
    keep(client.Post("/api/v1/pause", right));
    keep(client.Post("/api/v1/nope", right));
    EXPECT_TRUE(ctl.paused());
    ctl.RunLoop(kNow + Seconds(30));  // paused: logs and publishes that too
    keep(client.Get("/status"));

    // What was looked at is the real thing: the loops' log and errors.
    EXPECT_THAT(StrJoin(log, "\n"), HasSubstr("slurmctld does not answer"));
    EXPECT_THAT(StrJoin(replies, "\n"), HasSubstr("slurmctld does not answer"));
    for (const std::string& line : log) EXPECT_THAT(line, Not(HasSubstr(secret)));
    for (const std::string& reply : replies) EXPECT_THAT(reply, Not(HasSubstr(secret)));
    // The first half of the token, in case something printed a part of it.
    for (const std::string& reply : replies) EXPECT_THAT(reply, Not(HasSubstr(secret.substr(0, 32))));
  }
  store->reset();
  for (const char* suffix : {"", "-wal", "-journal"}) {
    EXPECT_THAT(Slurp(cfg.live.state + suffix), Not(HasSubstr(secret))) << suffix;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tide::controller
