// The live controller's threads together, for ThreadSanitizer (scripts/build
// tsan runs this and http_test under it; the ordinary build runs it too).
// `tide run` has one loop thread that observes, decides and acts, and the
// HTTP server's workers, which read what the loop published (/metrics,
// /status, /healthz), read the state file through their own connection
// (/api/v1/report) and queue commands (pause, resume). Here the loop runs
// passes over fakes, with a file-backed store, while clients hit every
// endpoint at once. The assertions are on outcomes; the race detector does
// the rest.
#include <atomic>
#include <filesystem>
#include <thread>

#include "controller/controller.h"
#include "controller/fakes_test.h"
#include "controller/http_server.h"
#include "controller/live_report.h"
#include "gtest/gtest.h"
#include "httplib.h"

namespace tide::controller {
namespace {

const Timestamp kStart = FromUnixSeconds(1'800'000'200);

// The server's view of the controller, as cli/run.cc's: reads are the
// controller's thread-safe copies, commands only flip what the loop reads.
class Source final : public StatusSource {
 public:
  Source(Controller* c, LiveReportSource* report, std::atomic<int64_t>* now) : c_(c), report_(report), now_(now) {}
  std::string MetricsText() override { return c_->MetricsText(); }
  std::string StatusJson() override { return c_->StatusJson(); }
  bool Healthy(std::string* why) override { return c_->Healthy(FromUnixSeconds(*now_), why); }
  std::string ReportPage() override { return "<html></html>"; }
  Result<std::string> ReportJson() override { return report_->Json(FromUnixSeconds(*now_)); }
  Result<std::string> Command(const std::string& name, const std::map<std::string, std::string>&) override {
    if (name != "pause" && name != "resume") return absl::NotFoundError(name);
    c_->Pause(name == "pause");
    return std::string("{}");
  }

 private:
  Controller* c_;
  LiveReportSource* report_;
  std::atomic<int64_t>* now_;
};

TEST(ControllerThreads, TheLoopAndTheHttpServerShareNothingUnguarded) {
  const std::string dir = StrCat(::testing::TempDir(), "/tide_controller_threads");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string state = dir + "/state.db";

  config::Config cfg = testing::TwoPools();
  testing::FakeSlurm slurm;
  for (int i = 1; i <= 4; ++i) {
    slurm.view.nodes.push_back(
        testing::SlurmNode(StrCat("gpu", i), "idle", {"CLOUD", "POWERED_DOWN", "DRAIN"}, 0, "tide: not provisioned"));
  }
  for (int j = 1; j <= 6; ++j) slurm.view.jobs.push_back(testing::SlurmJob(j, "PENDING", 2));
  auto backend = testing::SlurmOver(cfg, &slurm);
  testing::FakeProvider provider;
  auto store = Store::Open(state);
  ASSERT_TRUE(store.ok()) << store.status();
  Controller c(cfg, *autoscale::Autoscaler::Make(cfg.policies.tide), backend.get(), &provider, store->get(), nullptr,
               ControllerOptions{}, [](const std::string&) {});
  LiveReportSource report(cfg, state);
  std::atomic<int64_t> now{ToUnixSeconds(kStart)};
  Source source(&c, &report, &now);
  HttpOptions ho;
  ho.port = 0;
  ho.token = "threads-test-token";
  HttpServer server(ho, &source);
  ASSERT_TRUE(server.Start().ok());

  // Each endpoint once first, one at a time: Debian's cpp-httplib is built
  // without TSan, so the statics it builds on first use (under a guard TSan
  // cannot see in uninstrumented code) read as a race when two workers meet
  // them first at once. Built here, they are published to the workers below
  // through the server's queue, which TSan does see.
  {
    httplib::Client warm("127.0.0.1", server.port());
    warm.set_keep_alive(false);
    warm.set_bearer_token_auth(ho.token);
    for (const std::string path : {"/metrics", "/status", "/healthz", "/api/v1/report"}) ASSERT_TRUE(warm.Get(path));
    ASSERT_TRUE(warm.Post("/api/v1/resume"));
  }

  std::atomic<bool> done{false};
  std::atomic<int> answered{0}, failed{0};
  std::vector<std::thread> clients;
  // POST resume: a command crosses to the loop's thread (through the
  // controller's flag) without changing what the loop does, so that the
  // outcome below does not depend on the threads' timing.
  for (const std::string path : {"/metrics", "/status", "/healthz", "/api/v1/report", "/api/v1/resume"}) {
    clients.emplace_back([&, path] {
      httplib::Client client("127.0.0.1", server.port());
      client.set_bearer_token_auth(ho.token);
      while (!done) {
        auto res = path.starts_with("/api/v1/r") && path != "/api/v1/report" ? client.Post(path) : client.Get(path);
        (res ? answered : failed)++;
      }
    });
  }
  int passes = 0;
  for (; passes < 40; ++passes) {
    // The loop's own thread: each pass observes, decides, acts and publishes.
    c.RunLoop(FromUnixSeconds(now));
    now += 10;
  }
  done = true;
  for (auto& t : clients) t.join();
  server.Stop();
  EXPECT_EQ(passes, 40);
  EXPECT_GT(answered.load(), 0);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_FALSE(provider.instances.empty());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tide::controller
