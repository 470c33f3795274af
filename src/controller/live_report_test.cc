#include "controller/live_report.h"

#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "controller/fakes_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "metrics/util_history.h"
#include "model/timeline.h"
#include "nlohmann/json.hpp"

namespace tide::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::SlurmJob;
using testing::SlurmNode;

const Timestamp kT0 = FromUnixSeconds(1'800'000'000);
Timestamp At(int64_t s) { return kT0 + Seconds(s); }

nlohmann::json Parse(const Result<std::string>& text) {
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return nullptr;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << *text;
  return j;
}

std::vector<double> Series(const nlohmann::json& report, const std::string& name) {
  const auto& series = report["policies"][0]["timeline"]["series"];
  if (!series.contains(name)) return {};
  return series[name].get<std::vector<double>>();
}

struct Snapshot {
  config::Config cfg = testing::TwoPools();
  backends::SlurmView view;
  backends::Observation obs;
  std::vector<providers::Instance> instances;
  Memory memory;

  Snapshot() {
    view.nodes = {SlurmNode("gpu1", "mixed", {}, 4), SlurmNode("gpu2", "idle", {"CLOUD", "POWERED_DOWN", "DRAIN"}),
                 SlurmNode("gpu3", "idle"), SlurmNode("gpu4", "idle", {"CLOUD", "POWERED_DOWN", "DRAIN"})};
    view.nodes[0].partitions = {"gpu", "high"};
    view.jobs = {SlurmJob(1, "PENDING", 2), SlurmJob(2, "PENDING", 2), SlurmJob(3, "PENDING", 8, {}, "high"),
                SlurmJob(4, "RUNNING", 4, {"gpu1"})};
    instances = {{"i-1", "gpu1", "ondemand", "k1", "running", At(-600)},
                 {"i-3", "gpu3", "spot", "k3", "running", At(-300)},
                 {"i-x", "elsewhere", "gone-pool", "", "running", At(-300)}};  // no pool: left out
  }
  Built Build(const model::MetricsView* metrics = nullptr) {
    obs = backends::Translate(view, *backends::SlurmBackendOptionsFor(cfg));
    return BuildSnapshot(cfg, obs, instances, {}, &memory, metrics, At(0));
  }
};

TEST(SampleOf, DemandQueueAndWhatTidePaysFor) {
  Snapshot s;
  const Built built = s.Build();
  const SampleRecord r = SampleOf(s.cfg, built, s.instances, At(0));
  EXPECT_EQ(r.at, At(0));
  EXPECT_DOUBLE_EQ(r.demand_gpus, 2 + 2 + 8 + 4);
  EXPECT_DOUBLE_EQ(r.running_gpus, 4);
  EXPECT_EQ(r.pending_jobs, 3);
  EXPECT_EQ(r.running_jobs, 1);
  EXPECT_THAT(r.pending_by_class,
              ElementsAre(std::pair<std::string, int64_t>{"high", 1}, std::pair<std::string, int64_t>{"normal", 2}));
  EXPECT_DOUBLE_EQ(r.capacity_gpus.on_demand, 8);
  EXPECT_DOUBLE_EQ(r.capacity_gpus.spot, 8);
  EXPECT_DOUBLE_EQ(r.capacity_gpus.reserved, 0);
  EXPECT_DOUBLE_EQ(r.cost_rate.on_demand, 32);
  EXPECT_DOUBLE_EQ(r.cost_rate.spot, 10);
  EXPECT_FALSE(r.util_gpus.has_value());  // no utilization source
}

TEST(SampleOf, UtilizationWeightsTheGpusHeld) {
  Snapshot s;
  metrics::UtilHistory half;
  half.Record(4, 0.5, At(0));
  const SampleRecord r = SampleOf(s.cfg, s.Build(&half), s.instances, At(0));
  ASSERT_TRUE(r.util_gpus.has_value());
  EXPECT_DOUBLE_EQ(*r.util_gpus, 2);
}

TEST(JobStartsOf, StartedJobsWithTheirClass) {
  Snapshot s;
  const auto starts = JobStartsOf(s.cfg, s.Build());
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(starts[0].job, "4");
  EXPECT_EQ(starts[0].submit, FromUnixSeconds(1'800'000'000));
  EXPECT_EQ(starts[0].start, FromUnixSeconds(1'800'000'100));
  EXPECT_EQ(starts[0].priority_class, "normal");
}

class LiveReportTest : public ::testing::Test {
 protected:
  void Record(int64_t at, double demand, double spot_gpus, int64_t pending = 0) {
    SampleRecord r{.at = At(at), .demand_gpus = demand, .pending_jobs = pending};
    r.capacity_gpus.spot = spot_gpus;
    r.cost_rate.spot = spot_gpus / 8 * 10;  // 10 per 8-GPU node and hour
    if (pending > 0) r.pending_by_class = {{"normal", pending}};
    ASSERT_TRUE(store_->RecordSample(r, {}, kInfinitePast).ok());
  }

  config::Config cfg_ = testing::TwoPools();  // loop interval: 10 s
  std::unique_ptr<Store> store_ = *Store::Open(":memory:");
};

TEST_F(LiveReportTest, TheTimelineReplaysTheSamples) {
  Record(0, 16, 0, 2);
  Record(10, 16, 8, 2);
  Record(20, 4, 16);
  Record(30, 4, 16);
  const auto j = Parse(LiveReportJson(cfg_, store_.get(), At(40)));
  EXPECT_EQ(j["format"], "tide-report/1");
  EXPECT_EQ(j["mode"], "live");
  EXPECT_EQ(j["title"], "tide run: test.yaml");
  EXPECT_EQ(j["time_zone"], "UTC");
  EXPECT_EQ(j["classes"], nlohmann::json({"high", "normal", "low"}));
  ASSERT_EQ(j["policies"].size(), 1u);
  const auto& p = j["policies"][0];
  EXPECT_EQ(p["name"], "live");
  EXPECT_THAT(p["description"].get<std::string>(), HasSubstr("spot (spot, up to 2 x 8 GPUs)"));
  EXPECT_EQ(p["timeline"]["start"], ToUnixSeconds(At(0)));
  EXPECT_EQ(p["timeline"]["step"], 10);
  EXPECT_EQ(p["timeline"]["buckets"], 4);
  EXPECT_THAT(Series(j, "demand_gpus"), ElementsAre(16, 16, 4, 4));
  EXPECT_THAT(Series(j, "capacity_gpus/spot"), ElementsAre(0, 8, 16, 16));
  EXPECT_THAT(Series(j, "capacity_gpus/on-demand"), ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(Series(j, "pending_jobs"), ElementsAre(2, 2, 0, 0));
  EXPECT_THAT(Series(j, "pending_jobs/normal"), ElementsAre(2, 2, 0, 0));
  EXPECT_THAT(Series(j, "pending_jobs/high"), ElementsAre(0, 0, 0, 0));
  // 10 per node and hour: one node for 10 s, then two for 20 s.
  const auto cost = Series(j, "cost/spot");
  ASSERT_EQ(cost.size(), 4u);
  EXPECT_NEAR(cost[3], (10.0 * 10 + 20.0 * 20) / 3600, 1e-3);
  EXPECT_THAT(Series(j, "spot_interruptions"), ElementsAre(0, 0, 0, 0));
  // No utilization source: unknown, so no series (the page says so) rather than 0.
  EXPECT_FALSE(p["timeline"]["series"].contains("util_gpus"));
  EXPECT_FALSE(j["summary"]["policies"][0].contains("gpu_util_mean"));
  const auto& summary = j["summary"]["policies"][0];
  EXPECT_EQ(summary["name"], "live");
  EXPECT_EQ(summary["jobs_pending"], 0);
  EXPECT_EQ(summary["jobs_running"], 0);
}

// The page is the simulation report's: the same series, by the same names.
TEST_F(LiveReportTest, TheSeriesAreTheReportsSeries) {
  SampleRecord r{.at = At(0), .demand_gpus = 8, .util_gpus = 4.0};
  ASSERT_TRUE(store_->RecordSample(r, {}, kInfinitePast).ok());
  const auto j = Parse(LiveReportJson(cfg_, store_.get(), At(10)));
  std::set<std::string> live, want;
  for (const auto& [name, values] : j["policies"][0]["timeline"]["series"].items()) live.insert(name);
  for (const char* name : model::kReportLevels) want.insert(name);
  for (const char* name : model::kReportTotals) want.insert(name);
  for (const auto& c : cfg_.cluster.priority_classes) want.insert(StrCat("pending_jobs/", c.name));
  for (const char* tier : {"reserved", "on-demand", "spot"}) want.insert(StrCat("cost/", tier));
  EXPECT_EQ(live, want);
  EXPECT_THAT(Series(j, "util_gpus"), ElementsAre(4));
}

TEST_F(LiveReportTest, AGapIsNoDataNotTheLastSample) {
  Record(0, 8, 8);
  Record(600, 8, 8);  // tide was stopped for ten minutes
  const auto j = Parse(LiveReportJson(cfg_, store_.get(), At(610)));
  const auto demand = Series(j, "demand_gpus");
  ASSERT_EQ(demand.size(), 61u);
  EXPECT_DOUBLE_EQ(demand[0], 8);
  EXPECT_DOUBLE_EQ(demand[1], 8);
  EXPECT_DOUBLE_EQ(demand[2], 8);  // held for three loop intervals
  EXPECT_DOUBLE_EQ(demand[3], 0);
  EXPECT_DOUBLE_EQ(demand[59], 0);
  EXPECT_DOUBLE_EQ(demand[60], 8);
}

TEST_F(LiveReportTest, HeadlineFromTheStore) {
  InstanceRecord live{.id = "i-1",
                      .node = "gpu3",
                      .pool = "spot",
                      .tier = model::Tier::kSpot,
                      .price_per_hour = 10,
                      .created = At(0),
                      .state = "ready"};
  InstanceRecord gone = live;
  gone.id = "i-2";
  gone.node = "gpu1";
  gone.pool = "ondemand";
  gone.tier = model::Tier::kOnDemand;
  gone.price_per_hour = 32;
  ASSERT_TRUE(store_->PutInstance(live).ok());
  ASSERT_TRUE(store_->PutInstance(gone).ok());
  ASSERT_TRUE(store_->MarkInstanceDeleted("i-2", At(1800), "deleted").ok());
  ASSERT_TRUE(store_->AddCounter("spot_interruptions", 1).ok());
  ASSERT_TRUE(store_->AddJobEvent({.job = "9", .kind = "requeued", .at = At(5), .lost_gpu_seconds = 7200}).ok());
  std::vector<JobStartRecord> starts;
  for (int i = 1; i <= 10; ++i) {
    starts.push_back(
        {.job = StrCat(i), .submit = At(0), .start = At(i * 10), .priority_class = i <= 5 ? "high" : "normal"});
  }
  SampleRecord last{.at = At(3590), .pending_jobs = 3, .running_jobs = 10};
  last.capacity_gpus.spot = 8;
  last.running_gpus = 4;
  ASSERT_TRUE(store_->RecordSample(last, starts, kInfinitePast).ok());

  const auto j = Parse(LiveReportJson(cfg_, store_.get(), At(3600)));
  const auto& h = j["summary"]["policies"][0];
  EXPECT_DOUBLE_EQ(h["cost_total"].get<double>(), 10 + 16);
  EXPECT_DOUBLE_EQ(h["cost_by_tier"]["spot"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(h["cost_by_tier"]["on-demand"].get<double>(), 16);
  EXPECT_DOUBLE_EQ(h["gpu_hours_paid"].get<double>(), 8 + 4);
  EXPECT_DOUBLE_EQ(h["utilization"].get<double>(), 0.5);
  EXPECT_EQ(h["nodes_bought"], 2);
  EXPECT_EQ(h["nodes_live"], 1);
  EXPECT_EQ(h["spot_interruptions"], 1);
  EXPECT_DOUBLE_EQ(h["lost_work_gpu_hours"].get<double>(), 2);
  EXPECT_EQ(h["jobs_pending"], 3);
  EXPECT_EQ(h["jobs_running"], 10);
  EXPECT_EQ(h["jobs_started"], 10);
  // Nearest rank, as sim::ComputePercentiles: waits 10, 20, ..., 100 s.
  EXPECT_EQ(h["wait_s"]["p50"], 50);
  EXPECT_EQ(h["wait_s"]["p95"], 100);
  EXPECT_EQ(h["wait_s"]["count"], 10);
  EXPECT_EQ(h["wait_s_by_priority"]["high"]["p99"], 50);
  const auto& q = j["policies"][0]["wait_quantiles"];
  ASSERT_EQ(q["all"].size(), 101u);
  EXPECT_EQ(q["all"][0], 10);
  EXPECT_EQ(q["all"][100], 100);
  EXPECT_EQ(q["normal"][0], 60);
  EXPECT_FALSE(q.contains("low"));  // no job of the class started
}

TEST_F(LiveReportTest, AnEmptyStoreHasNoTimelineYet) {
  const auto j = Parse(LiveReportJson(cfg_, store_.get(), At(0)));
  EXPECT_TRUE(j["policies"][0]["timeline"].is_null());
  const auto& h = j["summary"]["policies"][0];
  EXPECT_EQ(h["cost_total"], 0);
  EXPECT_FALSE(h.contains("jobs_pending"));
  EXPECT_FALSE(h.contains("wait_s"));
  EXPECT_THAT(j["meta"].dump(), HasSubstr("no loop recorded yet"));
}

TEST_F(LiveReportTest, HistoryOutsideTheWindowIsNotShown) {
  Record(0, 8, 8);
  Record(100, 4, 8);
  const auto j = Parse(LiveReportJson(cfg_, store_.get(), At(150), {.history = Seconds(100)}));
  EXPECT_EQ(j["policies"][0]["timeline"]["start"], ToUnixSeconds(At(100)));
}

TEST(LiveReportPage, FetchesTheReportAtTheLoopInterval) {
  const config::Config cfg = testing::TwoPools();
  const std::string page = LiveReportPage(cfg);
  EXPECT_THAT(page, HasSubstr("data-source=\"/api/v1/report\""));
  EXPECT_THAT(page, HasSubstr("data-refresh=\"10\""));
}

class LiveReportSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = StrCat(::testing::TempDir(), "/tide_live_report_test_XXXXXX");
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = StrCat(dir_, "/state.db");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  config::Config cfg_ = testing::TwoPools();
  std::string dir_, path_;
};

TEST_F(LiveReportSourceTest, ReadsTheStateFileBesideItsWriter) {
  LiveReportSource source(cfg_, path_);
  // No state file yet: an error that names it, and no file made.
  auto missing = source.Json(At(0));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(Message(missing.status())), HasSubstr(path_));
  EXPECT_FALSE(std::filesystem::exists(path_));

  auto writer = Store::Open(path_);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->RecordSample({.at = At(0), .demand_gpus = 8}, {}, kInfinitePast).ok());
  const auto first = source.Json(At(5));
  auto j = Parse(first);
  EXPECT_THAT(Series(j, "demand_gpus"), ElementsAre(8));
  // Built once per sample: a second page in the same loop gets the same
  // report, a page one loop interval (10 s) later a new one.
  EXPECT_EQ(*source.Json(At(6)), *first);
  EXPECT_NE(*source.Json(At(15)), *first);
  // Later writes are seen by the same connection.
  ASSERT_TRUE((*writer)->RecordSample({.at = At(10), .demand_gpus = 2}, {}, kInfinitePast).ok());
  j = Parse(source.Json(At(20)));
  EXPECT_THAT(Series(j, "demand_gpus"), ElementsAre(8, 2));
}

TEST_F(LiveReportSourceTest, ADryRunReadsNoFile) {
  LiveReportSource source(cfg_, path_, {.dry_run = true});
  const auto j = Parse(source.Json(At(0)));
  EXPECT_TRUE(j["policies"][0]["timeline"].is_null());
  EXPECT_THAT(j["meta"].dump(), HasSubstr("dry run"));
  EXPECT_FALSE(std::filesystem::exists(path_));
}

}  // namespace
}  // namespace tide::controller
