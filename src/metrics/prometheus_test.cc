#include "metrics/prometheus.h"

#include <httplib.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

std::string Msg(const Status& s) { return std::string(Message(s)); }

// A reply of `result` series, as Prometheus writes it.
std::string Vector(const std::string& result) {
  return StrCat(R"({"status":"success","data":{"resultType":"vector","result":[)", result, "]}}");
}
std::string Series(const std::string& labels, const std::string& value) {
  return StrCat(R"({"metric":{)", labels, R"(},"value":[1767603600.123,")", value, R"("]})");
}

TEST(ParseQueryResponseTest, ReadsDcgmSeries) {
  const std::string body =
      Vector(Series(R"("__name__":"DCGM_FI_DEV_GPU_UTIL","Hostname":"gpu1","gpu":"0","instance":"x:9400","job":"dcgm")",
                    "85") +
             "," + Series(R"("Hostname":"gpu1","gpu":"1","hpc_job":"1234","job":"dcgm")", "42.5") + "," +
             Series(R"("Hostname":"gpu2","gpu":"x")", "0"));
  auto got = ParseQueryResponse(body, PrometheusOptions{});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[0].node, "gpu1");
  EXPECT_EQ((*got)[0].job, "");  // Prometheus's own "job" label is not the Slurm job
  EXPECT_EQ((*got)[0].gpu, 0);
  EXPECT_DOUBLE_EQ((*got)[0].util, 0.85);
  EXPECT_EQ((*got)[1].job, "1234");
  EXPECT_EQ((*got)[1].gpu, 1);
  EXPECT_DOUBLE_EQ((*got)[1].util, 0.425);
  EXPECT_EQ((*got)[2].gpu, -1);  // not an integer
  EXPECT_DOUBLE_EQ((*got)[2].util, 0);
}

TEST(ParseQueryResponseTest, ValuesAndOptions) {
  struct Case {
    std::string name;
    std::string value;
    double scale;
    double want;
  };
  const std::vector<Case> cases = {
      {"integer percent", "50", 100, 0.5},
      {"exponent", "1e+01", 100, 0.1},
      {"leading plus", "+25", 100, 0.25},
      {"fraction scale", "0.75", 1, 0.75},
      {"above scale reads as fully busy", "103", 100, 1.0},
      {"zero", "0", 100, 0.0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    PrometheusOptions o;
    o.scale = c.scale;
    auto got = ParseQueryResponse(Vector(Series(R"("Hostname":"n1")", c.value)), o);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 1u);
    EXPECT_DOUBLE_EQ((*got)[0].util, c.want);
  }
}

TEST(ParseQueryResponseTest, OtherLabelNames) {
  PrometheusOptions o;
  o.node_label = "node";
  o.job_label = "slurm_job";
  o.gpu_label = "minor";
  auto got = ParseQueryResponse(Vector(Series(R"("node":"a1","slurm_job":"77","minor":"3")", "10")), o);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].node, "a1");
  EXPECT_EQ((*got)[0].job, "77");
  EXPECT_EQ((*got)[0].gpu, 3);
}

TEST(ParseQueryResponseTest, KubernetesPodMapping) {
  // The DCGM exporter on Kubernetes: a GPU in use carries its pod's name
  // and namespace; a free one only the node's. A series naming a pod needs
  // no node label.
  auto got = ParseQueryResponse(
      Vector(Series(R"("Hostname":"n1","gpu":"0","namespace":"ml","pod":"train-0","container":"main")", "90") + "," +
             Series(R"("Hostname":"n1","gpu":"1")", "0") + "," + Series(R"("namespace":"ml","pod":"train-1")", "30") +
             "," + Series(R"("Hostname":"n2","pod":"x")", "30")),
      PrometheusOptions{});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 4u);
  EXPECT_EQ((*got)[0].pod, "ml/train-0");
  EXPECT_EQ((*got)[0].node, "n1");
  EXPECT_EQ((*got)[1].pod, "");
  EXPECT_EQ((*got)[2].pod, "ml/train-1");
  EXPECT_EQ((*got)[2].node, "");
  EXPECT_EQ((*got)[3].pod, "");  // a pod label without a namespace names no pod
  // Series without a node count for no node.
  EXPECT_THAT(NodeUtilization(*got), UnorderedElementsAre(Pair("n1", 0.45), Pair("n2", 0.3)));

  PrometheusOptions o;
  o.pod_label = "exported_pod";
  o.namespace_label = "exported_namespace";
  got = ParseQueryResponse(Vector(Series(R"("exported_namespace":"a","exported_pod":"b")", "5")), o);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].pod, "a/b");
}

// Found by fuzzing: a reply's status was quoted raw, control bytes and all.
TEST(ParseQueryResponseTest, AnUnexpectedStatusIsQuotedEscaped) {
  auto got = ParseQueryResponse(R"({"status":"su\u0000ccess","data":{"resultType":"vector","result":[]}})",
                                PrometheusOptions{});
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(std::string(Message(got.status())), "prometheus reply: status \"su\\x00ccess\"");
}

TEST(ParseQueryResponseTest, EmptyResultIsEmptyNotAnError) {
  auto got = ParseQueryResponse(Vector(""), PrometheusOptions{});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(*got, IsEmpty());
}

TEST(ParseQueryResponseTest, BadRepliesAreInvalidArgumentNamingWhat) {
  struct Case {
    std::string name;
    std::string body;
    std::string want;  // in the message
  };
  const std::vector<Case> cases = {
      {"empty body", "", "not JSON"},
      {"not json", "<html>proxy error</html>", "not JSON"},
      {"not an object", "[]", "not a JSON object"},
      {"no status", R"({"data":{}})", "no \"status\""},
      {"status error", R"({"status":"error","errorType":"bad_data","error":"parse error at char 5"})",
       "parse error at char 5"},
      {"no data", R"({"status":"success"})", "no \"data\""},
      {"matrix", R"({"status":"success","data":{"resultType":"matrix","result":[]}})", "\"matrix\", not \"vector\""},
      {"scalar", R"({"status":"success","data":{"resultType":"scalar","result":[1,"2"]}})", "not \"vector\""},
      {"result not array", R"({"status":"success","data":{"resultType":"vector","result":{}}})", "not an array"},
      {"series not object", Vector("1"), "result[0] is not an object"},
      {"no node label", Vector(Series(R"("gpu":"0","instance":"x")", "5")), "no Hostname label"},
      {"pod without namespace", Vector(Series(R"("pod":"w-0")", "5")), "no pod and namespace labels"},
      {"empty node label", Vector(Series(R"("Hostname":"")", "5")), "no Hostname label"},
      {"second series bad", Vector(Series(R"("Hostname":"a")", "5") + "," + Series(R"("gpu":"1")", "5")), "result[1]"},
      {"nan", Vector(Series(R"("Hostname":"gpu3")", "NaN")), "\"NaN\" is not a finite number"},
      {"inf", Vector(Series(R"("Hostname":"gpu3")", "+Inf")), "\"+Inf\" is not a finite number"},
      {"non-numeric", Vector(Series(R"("Hostname":"gpu3")", "busy")), "\"busy\" is not a finite number"},
      {"trailing junk", Vector(Series(R"("Hostname":"gpu3")", "5x")), "\"5x\" is not a finite number"},
      {"negative", Vector(Series(R"("Hostname":"gpu3")", "-1")), "negative"},
      {"value not a pair", Vector(R"({"metric":{"Hostname":"a"},"value":["5"]})"), "not [time, \"number\"]"},
      {"value a number", Vector(R"({"metric":{"Hostname":"a"},"value":[1, 5]})"), "not [time, \"number\"]"},
      {"no value", Vector(R"({"metric":{"Hostname":"a"}})"), "not [time, \"number\"]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto got = ParseQueryResponse(c.body, PrometheusOptions{});
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Msg(got.status()), HasSubstr(c.want));
  }
}

TEST(ParseQueryResponseTest, ErrorNamesTheSeries) {
  auto got = ParseQueryResponse(Vector(Series(R"("Hostname":"gpu7","gpu":"2")", "NaN")), PrometheusOptions{});
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(Msg(got.status()), HasSubstr(R"(Hostname="gpu7")"));
}

TEST(ParseQueryResponseTest, BadScale) {
  PrometheusOptions o;
  o.scale = 0;
  EXPECT_EQ(ParseQueryResponse(Vector(""), o).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(NodeUtilizationTest, MeanPerNodeOverItsGpus) {
  std::vector<UtilSample> samples = {
      {"gpu1", "", 0, 1.0, ""}, {"gpu1", "", 1, 0.5, ""}, {"gpu1", "7", 2, 0.0, ""}, {"gpu2", "", 0, 0.25, ""}};
  EXPECT_THAT(NodeUtilization(samples), UnorderedElementsAre(Pair("gpu1", 0.5), Pair("gpu2", 0.25)));
  EXPECT_THAT(NodeUtilization({}), IsEmpty());
}

TEST(UrlEncodeTest, Cases) {
  EXPECT_EQ(UrlEncode("DCGM_FI_DEV_GPU_UTIL"), "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(UrlEncode(R"(avg by (Hostname) (x{a="b c"}))"), "avg%20by%20%28Hostname%29%20%28x%7Ba%3D%22b%20c%22%7D%29");
  EXPECT_EQ(UrlEncode("a+b&c/d~e.f-g"), "a%2Bb%26c%2Fd~e.f-g");
}

// A fake Prometheus on 127.0.0.1: records the queries, answers with `reply`.
class FakePrometheus {
 public:
  FakePrometheus() {
    server_.Get(R"((.*)/api/v1/query)", [this](const httplib::Request& req, httplib::Response& res) {
      std::unique_lock<std::mutex> lock(mu_);
      paths_.push_back(req.matches[1].str());
      queries_.push_back(req.get_param_value("query"));
      if (hang_) cv_.wait(lock, [this] { return !hang_; });
      res.status = status_;
      res.set_content(reply_, "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakePrometheus() { Stop(); }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      hang_ = false;
    }
    cv_.notify_all();
    if (thread_.joinable()) {
      server_.stop();
      thread_.join();
    }
  }
  void Reply(int status, std::string body) {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = status;
    reply_ = std::move(body);
  }
  void Hang() {
    std::lock_guard<std::mutex> lock(mu_);
    hang_ = true;
  }
  std::vector<std::string> queries() {
    std::lock_guard<std::mutex> lock(mu_);
    return queries_;
  }
  std::vector<std::string> paths() {
    std::lock_guard<std::mutex> lock(mu_);
    return paths_;
  }
  int port() const { return port_; }
  std::string url() const { return StrCat("http://127.0.0.1:", port_); }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool hang_ = false;
  int status_ = 200;
  std::string reply_;
  std::vector<std::string> queries_;
  std::vector<std::string> paths_;
};

TEST(PrometheusSourceTest, QueriesTheMetric) {
  FakePrometheus prom;
  prom.Reply(200, Vector(Series(R"("Hostname":"gpu1","gpu":"0")", "30")));
  PrometheusOptions o;
  o.url = prom.url();
  o.metric = R"(max by (Hostname, gpu) (DCGM_FI_DEV_GPU_UTIL{pool="a b"}))";
  auto got = PrometheusSource(o).Query();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].node, "gpu1");
  EXPECT_DOUBLE_EQ((*got)[0].util, 0.3);
  EXPECT_THAT(prom.queries(), ::testing::ElementsAre(o.metric));
  EXPECT_THAT(prom.paths(), ::testing::ElementsAre(""));
}

TEST(PrometheusSourceTest, UrlWithPathPrefix) {
  FakePrometheus prom;
  prom.Reply(200, Vector(""));
  PrometheusOptions o;
  o.url = prom.url() + "/prometheus/";
  auto got = PrometheusSource(o).Query();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(*got, IsEmpty());
  EXPECT_THAT(prom.paths(), ::testing::ElementsAre("/prometheus"));
  EXPECT_THAT(prom.queries(), ::testing::ElementsAre("DCGM_FI_DEV_GPU_UTIL"));
}

TEST(PrometheusSourceTest, Non200IsUnavailableNamingTheUrl) {
  FakePrometheus prom;
  prom.Reply(503, R"({"status":"error","errorType":"unavailable","error":"tsdb not ready"})");
  PrometheusOptions o;
  o.url = prom.url();
  auto got = PrometheusSource(o).Query();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(Msg(got.status()), HasSubstr(prom.url()));
  EXPECT_THAT(Msg(got.status()), HasSubstr("503"));
  EXPECT_THAT(Msg(got.status()), HasSubstr("tsdb not ready"));
}

TEST(PrometheusSourceTest, UnreadableReplyIsInvalidArgumentNamingTheUrl) {
  FakePrometheus prom;
  prom.Reply(200, "not json");
  PrometheusOptions o;
  o.url = prom.url();
  auto got = PrometheusSource(o).Query();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(got.status()), HasSubstr(prom.url()));
}

TEST(PrometheusSourceTest, ConnectionRefusedIsUnavailableNamingTheUrl) {
  std::string url;
  {
    FakePrometheus prom;  // a port that was free a moment ago
    url = prom.url();
  }
  PrometheusOptions o;
  o.url = url;
  o.timeout = Seconds(2);
  auto got = PrometheusSource(o).Query();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(Msg(got.status()), HasSubstr(url));
}

TEST(PrometheusSourceTest, SlowReplyTimesOutAsUnavailable) {
  FakePrometheus prom;
  prom.Reply(200, Vector(""));
  prom.Hang();  // released when prom stops
  PrometheusOptions o;
  o.url = prom.url();
  o.timeout = Seconds(1);
  auto got = PrometheusSource(o).Query();
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(Msg(got.status()), HasSubstr(prom.url()));
}

TEST(PrometheusSourceTest, MalformedUrlIsInvalidArgument) {
  for (const char* url : {"127.0.0.1:9090", "ftp://host:21", "http://", "http://host:9090/?x=1"}) {
    SCOPED_TRACE(url);
    PrometheusOptions o;
    o.url = url;
    auto got = PrometheusSource(o).Query();
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Msg(got.status()), HasSubstr(url));
  }
}

}  // namespace
}  // namespace tide::metrics
