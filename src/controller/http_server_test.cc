#include "controller/http_server.h"

#include <httplib.h>

#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "controller/exposition.h"
#include "controller/http_fakes_test.h"
#include "core/status.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tide::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

using testing::FakeSource;

constexpr char kToken[] = "s3cret-token";

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartWith(kToken); }

  void StartWith(std::string token) {
    server_.reset();
    HttpOptions o;
    o.port = 0;
    o.token = std::move(token);
    server_ = std::make_unique<HttpServer>(o, &source_);
    Status s = server_->Start();
    ASSERT_TRUE(s.ok()) << s;
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_connection_timeout(std::chrono::seconds(5));
    client_->set_read_timeout(std::chrono::seconds(5));
    client_->set_url_encode(false);  // send the test's targets as written
  }

  httplib::Result Post(const std::string& path, const std::string& auth, const std::string& body = "",
                       const std::string& type = "") {
    httplib::Headers h;
    if (!auth.empty()) h.emplace("Authorization", auth);
    if (type.empty()) return client_->Post(path.c_str(), h);
    return client_->Post(path.c_str(), h, body, type.c_str());
  }

  FakeSource source_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(HttpServerTest, PortZeroPicksAFreePort) {
  EXPECT_GT(server_->port(), 0);
  EXPECT_NE(server_->port(), 9464);
}

TEST_F(HttpServerTest, MetricsHasThePrometheusContentType) {
  auto res = client_->Get("/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(res->body, "# TYPE tide_up gauge\ntide_up 1\n");
}

TEST_F(HttpServerTest, StatusIsJson) {
  auto res = client_->Get("/status");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(res->body, "{\"loops\": 3}\n");
}

TEST_F(HttpServerTest, HealthzOk) {
  auto res = client_->Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "ok\n");
}

TEST_F(HttpServerTest, HealthzUnhealthyIs503WithTheReason) {
  source_.SetUnhealthy("no loop has completed yet");
  auto res = client_->Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->body, "no loop has completed yet\n");
}

TEST_F(HttpServerTest, UnknownPathIs404) {
  for (const char* path : {"/nope", "/index.html", "/metrics/extra", "/api/v2/pause", "/api/v1/report/x"}) {
    SCOPED_TRACE(path);
    auto res = client_->Get(path);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 404);
    EXPECT_THAT(res->body, HasSubstr("not found"));
  }
}

TEST_F(HttpServerTest, RootServesTheLivePage) {
  auto res = client_->Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_THAT(res->body, HasSubstr("data-source=\"/api/v1/report\""));
}

TEST_F(HttpServerTest, ReportIsJsonAndNeedsNoToken) {
  auto res = client_->Get("/api/v1/report");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(res->get_header_value("Cache-Control"), "no-store");
  EXPECT_EQ(res->body, "{\"mode\": \"live\"}");
  EXPECT_THAT(source_.calls(), IsEmpty());  // not a command
}

TEST_F(HttpServerTest, ReportErrorIs503WithAJsonBody) {
  source_.FailReport(absl::UnavailableError("/var/lib/tide/state.db: database is locked (in Samples)"));
  auto res = client_->Get("/api/v1/report");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  auto body = nlohmann::json::parse(res->body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << res->body;
  EXPECT_THAT(body.value("error", ""), HasSubstr("/var/lib/tide/state.db"));
  // The other endpoints do not depend on it.
  auto status = client_->Get("/status");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->status, 200);
}

TEST_F(HttpServerTest, ReadEndpointsAnswerGetOnly) {
  for (const char* path : {"/", "/api/v1/report", "/metrics", "/status", "/healthz"}) {
    SCOPED_TRACE(path);
    auto res = Post(path, StrCat("Bearer ", kToken));
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 405);
    EXPECT_EQ(res->get_header_value("Allow"), "GET, HEAD");
    auto del = client_->Delete(path);
    ASSERT_TRUE(del);
    EXPECT_EQ(del->status, 405);
  }
  auto get = client_->Get("/api/v1/pause");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  EXPECT_EQ(get->get_header_value("Allow"), "POST");
  EXPECT_THAT(source_.calls(), IsEmpty());
}

TEST_F(HttpServerTest, PostAuthentication) {
  struct Case {
    std::string name;
    std::string auth;
    int status;
    bool called;
  };
  const std::vector<Case> cases = {
      {"no header", "", 401, false},
      {"not bearer", StrCat("Basic ", kToken), 401, false},
      {"wrong token", "Bearer wrong-token!", 403, false},
      {"token prefix", "Bearer s3cret", 403, false},
      {"token longer", StrCat("Bearer ", kToken, "x"), 403, false},
      {"right token", StrCat("Bearer ", kToken), 200, true},
      {"scheme in lower case", StrCat("bearer ", kToken), 200, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const size_t before = source_.calls().size();
    auto res = Post("/api/v1/pause", c.auth);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, c.status);
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
    EXPECT_EQ(source_.calls().size(), before + (c.called ? 1 : 0));
    if (c.status == 401) {
      EXPECT_THAT(res->get_header_value("WWW-Authenticate"), HasSubstr("Bearer"));
    }
    if (c.status == 200) {
      EXPECT_EQ(res->body, "{\"done\": \"pause\"}\n");
    }
  }
}

TEST_F(HttpServerTest, NoTokenConfiguredRefusesEveryPost) {
  StartWith("");
  for (const std::string& auth : {std::string(), std::string("Bearer "), StrCat("Bearer ", kToken)}) {
    SCOPED_TRACE(auth);
    auto res = Post("/api/v1/pause", auth);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 403);
    EXPECT_THAT(res->body, HasSubstr("no token is configured"));
  }
  EXPECT_THAT(source_.calls(), IsEmpty());
  // Reading still works.
  auto res = client_->Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(HttpServerTest, CommandErrorsMapToStatusCodes) {
  struct Case {
    std::string name;
    Status error;
    int status;
  };
  const std::vector<Case> cases = {
      {"invalid argument", absl::InvalidArgumentError("give node=<slurm node>"), 400},
      {"not found", absl::NotFoundError("no command 'x'"), 404},
      {"failed precondition", absl::FailedPreconditionError("local provider only"), 409},
      {"unavailable", absl::UnavailableError("slurm is down"), 500},
      {"internal", absl::InternalError("bug"), 500},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    source_.FailNext(c.error);
    auto res = Post("/api/v1/interrupt", StrCat("Bearer ", kToken));
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, c.status);
    EXPECT_THAT(res->body, HasSubstr(std::string(Message(c.error))));
  }
}

TEST_F(HttpServerTest, ParamsFromQueryFormAndJson) {
  struct Case {
    std::string name;
    std::string path;
    std::string body;
    std::string type;
    std::map<std::string, std::string> want;
    std::string command = "interrupt";
  };
  const std::vector<Case> cases = {
      {"query", "/api/v1/interrupt?node=gpu1&notice=30s", "", "", {{"node", "gpu1"}, {"notice", "30s"}}},
      {"query escapes", "/api/v1/interrupt?node=gpu%5B1%5D&why=a+b", "", "", {{"node", "gpu[1]"}, {"why", "a b"}}},
      {"form",
       "/api/v1/interrupt",
       "node=gpu2&notice=1m",
       "application/x-www-form-urlencoded",
       {{"node", "gpu2"}, {"notice", "1m"}}},
      {"json",
       "/api/v1/interrupt",
       R"({"node": "gpu3", "notice": 45, "force": true})",
       "application/json",
       {{"force", "true"}, {"node", "gpu3"}, {"notice", "45"}}},
      {"body replaces query",
       "/api/v1/interrupt?node=gpu1&notice=5s",
       R"({"node": "gpu4"})",
       "application/json",
       {{"node", "gpu4"}, {"notice", "5s"}}},
      // interrupt's old name, still accepted: passed on as is, and `tide run`'s
      // command handler (src/cli/run.cc) takes it for interrupt.
      {"reclaim alias",
       "/api/v1/reclaim?node=gpu1&notice=30s",
       "",
       "",
       {{"node", "gpu1"}, {"notice", "30s"}},
       "reclaim"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto res = Post(c.path, StrCat("Bearer ", kToken), c.body, c.type);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200) << res->body;
    auto calls = source_.calls();
    ASSERT_FALSE(calls.empty());
    EXPECT_EQ(calls.back().name, c.command);
    EXPECT_EQ(calls.back().params, c.want);
  }
}

TEST_F(HttpServerTest, BadBodiesAreRefused) {
  struct Case {
    std::string name;
    std::string body;
    std::string type;
    int status;
  };
  const std::vector<Case> cases = {
      {"not json", "{node", "application/json", 400},
      {"json array", "[1, 2]", "application/json", 400},
      {"nested json", R"({"node": {"a": 1}})", "application/json", 400},
      {"unknown type", "node=gpu1", "text/plain", 415},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto res = Post("/api/v1/interrupt", StrCat("Bearer ", kToken), c.body, c.type);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, c.status);
  }
  EXPECT_THAT(source_.calls(), IsEmpty());
}

TEST_F(HttpServerTest, BindFailureIsUnavailableNamingAddressAndPort) {
  HttpOptions o;
  o.port = server_->port();  // taken by the fixture's server
  HttpServer second(o, &source_);
  Status s = second.Start();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(Message(s)), HasSubstr(StrCat("127.0.0.1:", server_->port())));
}

TEST_F(HttpServerTest, StartTwiceFailsAndStopIsIdempotent) {
  EXPECT_EQ(server_->Start().code(), absl::StatusCode::kFailedPrecondition);
  server_->Stop();
  server_->Stop();
  auto res = client_->Get("/metrics");
  EXPECT_FALSE(res);  // nothing listens any more
}

TEST(HttpServerLifecycleTest, StopRightAfterStartAndDestructorStops) {
  FakeSource source;
  for (int i = 0; i < 20; ++i) {
    HttpOptions o;
    o.port = 0;
    HttpServer s(o, &source);
    ASSERT_TRUE(s.Start().ok());
    if (i % 2 == 0) s.Stop();  // odd rounds: the destructor stops it
  }
  HttpServer never_started(HttpOptions{}, &source);
  never_started.Stop();
}

TEST(ConstantTimeEqualsTest, Cases) {
  struct Case {
    std::string a, b;
    bool want;
  };
  for (const auto& c : std::vector<Case>{{"", "", true},
                                         {"abc", "abc", true},
                                         {"abc", "abd", false},
                                         {"abc", "ab", false},
                                         {"ab", "abc", false},
                                         {"", "a", false},
                                         {std::string("a\0b", 3), std::string("a\0c", 3), false}}) {
    SCOPED_TRACE(c.a + " vs " + c.b);
    EXPECT_EQ(ConstantTimeEquals(c.a, c.b), c.want);
  }
}

// The exposition builder is part of tide_http; its tests live here, with
// the endpoint that serves its text.

TEST(ExpositionTest, ExactText) {
  Exposition m;
  m.Gauge("tide_up", "1 while tide's controller runs.", {}, 1);
  m.Counter("tide_loop_errors_total", "Loops that failed, by source.", {{"source", "slurm"}}, 3);
  m.Gauge("tide_nodes", "Nodes by pool and state.", {{"pool", "a100"}, {"state", "ready"}}, 2);
  m.Counter("tide_loop_errors_total", "ignored: the first help stays", {{"source", "prometheus"}}, 1);
  m.Gauge("tide_nodes", "", {{"pool", "a100"}, {"state", "draining"}}, 0);
  m.Gauge("no_help", "", {}, 0.25);
  ASSERT_TRUE(m.status().ok()) << m.status();
  EXPECT_EQ(m.Text(),
            "# HELP tide_up 1 while tide's controller runs.\n"
            "# TYPE tide_up gauge\n"
            "tide_up 1\n"
            "# HELP tide_loop_errors_total Loops that failed, by source.\n"
            "# TYPE tide_loop_errors_total counter\n"
            "tide_loop_errors_total{source=\"slurm\"} 3\n"
            "tide_loop_errors_total{source=\"prometheus\"} 1\n"
            "# HELP tide_nodes Nodes by pool and state.\n"
            "# TYPE tide_nodes gauge\n"
            "tide_nodes{pool=\"a100\",state=\"ready\"} 2\n"
            "tide_nodes{pool=\"a100\",state=\"draining\"} 0\n"
            "# TYPE no_help gauge\n"
            "no_help 0.25\n");
}

TEST(ExpositionTest, EmptyPageIsEmpty) { EXPECT_EQ(Exposition().Text(), ""); }

TEST(ExpositionTest, Escaping) {
  Exposition m;
  m.Gauge("tide_reason", "Help with \\ and\nnewline and \"quotes\".", {{"reason", "a \"b\" \\ c\nd"}}, 1);
  ASSERT_TRUE(m.status().ok()) << m.status();
  EXPECT_EQ(m.Text(),
            "# HELP tide_reason Help with \\\\ and\\nnewline and \"quotes\".\n"
            "# TYPE tide_reason gauge\n"
            "tide_reason{reason=\"a \\\"b\\\" \\\\ c\\nd\"} 1\n");
}

TEST(ExpositionTest, SampleValues) {
  struct Case {
    std::string name;
    double value;
    std::string want;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Case> cases = {
      {"zero", 0, "0"},
      {"negative zero", -0.0, "0"},
      {"small integer", 42, "42"},
      {"negative integer", -7, "-7"},
      {"unix time", 1767603600, "1767603600"},
      {"million", 1e6, "1000000"},
      {"large integer", 123456789012345678.0, "123456789012345680"},
      {"2^53", 9007199254740992.0, "9007199254740992"},
      {"half", 0.5, "0.5"},
      {"tenth", 0.1, "0.1"},
      {"third", 1.0 / 3, "0.3333333333333333"},
      {"money", 1234.56, "1234.56"},
      {"tiny", 1.5e-9, "1.5e-09"},
      {"huge", 1e300, "1e+300"},
      {"nan", std::nan(""), "NaN"},
      {"plus inf", inf, "+Inf"},
      {"minus inf", -inf, "-Inf"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(FormatSampleValue(c.value), c.want);
    if (std::isfinite(c.value)) {
      EXPECT_EQ(std::stod(c.want), c.value);  // round-trips
    }
  }
}

TEST(ExpositionTest, NameValidation) {
  struct Case {
    std::string name;
    std::string metric;
    Labels labels;
    bool ok;
  };
  const std::vector<Case> cases = {
      {"plain", "tide_up", {}, true},
      {"colons", "job:tide_up:rate5m", {}, true},
      {"leading underscore", "_tide", {{"_pool", "x"}}, true},
      {"digits after the first", "gpu0_util", {{"gpu0", "0"}}, true},
      {"empty metric", "", {}, false},
      {"leading digit", "0tide", {}, false},
      {"dash", "tide-up", {}, false},
      {"space", "tide up", {}, false},
      {"empty label", "tide_up", {{"", "x"}}, false},
      {"label with colon", "tide_up", {{"a:b", "x"}}, false},
      {"label leading digit", "tide_up", {{"1a", "x"}}, false},
      {"reserved label", "tide_up", {{"__name__", "x"}}, false},
      {"label twice", "tide_up", {{"pool", "a"}, {"pool", "b"}}, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Exposition m;
    Status s = m.Add(MetricType::kGauge, c.metric, "help", c.labels, 1);
    EXPECT_EQ(s.ok(), c.ok) << s;
    if (!c.ok) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_EQ(m.Text(), "");
    }
  }
}

TEST(ExpositionTest, ConflictsAreInvalidArgumentAndLeaveThePageAsItWas) {
  Exposition m;
  ASSERT_TRUE(m.Add(MetricType::kCounter, "tide_loops_total", "Loops.", {}, 1).ok());
  ASSERT_TRUE(m.Add(MetricType::kGauge, "tide_nodes", "Nodes.", {{"pool", "a"}}, 1).ok());
  const std::string before = m.Text();
  struct Case {
    std::string name;
    MetricType type;
    std::string metric;
    Labels labels;
    double value;
  };
  const std::vector<Case> cases = {
      {"other type", MetricType::kGauge, "tide_loops_total", {{"x", "y"}}, 1},
      {"same labels", MetricType::kGauge, "tide_nodes", {{"pool", "a"}}, 2},
      {"same unlabelled", MetricType::kCounter, "tide_loops_total", {}, 2},
      {"negative counter", MetricType::kCounter, "tide_cost_total", {}, -1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Status s = m.Add(c.type, c.metric, "", c.labels, c.value);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(std::string(Message(s)), HasSubstr(c.metric));
  }
  EXPECT_EQ(m.Text(), before);
}

TEST(ExpositionTest, GaugeAndCounterKeepTheFirstError) {
  Exposition m;
  m.Gauge("ok_metric", "", {}, 1);
  m.Gauge("bad-name", "", {}, 1);
  m.Counter("bad counter", "", {}, 1);
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(Message(m.status())), HasSubstr("bad-name"));
  EXPECT_EQ(m.Text(), "# TYPE ok_metric gauge\nok_metric 1\n");
}

}  // namespace
}  // namespace tide::controller
