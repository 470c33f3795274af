#include "report/report.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testutil/builders.h"

namespace tide::report {
namespace {

// The run the table tests describe.
RunInfo Info() {
  RunInfo info;
  info.config = "c.yaml";
  info.trace = "native:t.csv";
  info.jobs = 10;
  info.gpu_hours = 75.0;
  info.peak_demand_gpus = 24;
  info.mean_demand_gpus = 6.5;
  info.seed = 3;
  return info;
}

using ::testing::HasSubstr;

TEST(PercentilesTest, NearestRank) {
  std::vector<int64_t> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  const sim::Percentiles p = sim::ComputePercentiles(&v);
  EXPECT_EQ(p.count, 100);
  EXPECT_EQ(p.p50, 50);
  EXPECT_EQ(p.p95, 95);
  EXPECT_EQ(p.p99, 99);
  EXPECT_EQ(p.max, 100);
  EXPECT_DOUBLE_EQ(p.mean, 50.5);
  std::vector<int64_t> one = {7};
  EXPECT_EQ(sim::ComputePercentiles(&one).p99, 7);
  std::vector<int64_t> none;
  EXPECT_EQ(sim::ComputePercentiles(&none).count, 0);
}

TEST(HumanDurationTest, Spellings) {
  EXPECT_EQ(HumanDuration(0), "0s");
  EXPECT_EQ(HumanDuration(59), "59s");
  EXPECT_EQ(HumanDuration(60), "1m");
  EXPECT_EQ(HumanDuration(277), "4m37s");
  EXPECT_EQ(HumanDuration(3600 * 3 + 720), "3h12m");
  EXPECT_EQ(HumanDuration(86400 * 2 + 3600 * 3 + 5), "2d3h");
}

TEST(ReportTest, TableAndJsonCarryTheSameFigures) {
  const model::ClusterSpec spec = testing::Spec({testing::Pool("od", 8, model::Tier::kOnDemand, 100, 0, 5)});
  sim::PolicyResult r;
  r.name = "tide";
  r.kind = "tide";
  r.cost.total = 1234.5;
  r.cost.by_tier = {0, 1234.5, 0};
  r.cost.by_pool = {1234.5};
  r.cost.gpu_hours_paid = 100;
  r.gpu_hours_busy = 65;
  r.utilization = 0.65;
  r.wait_s = {10, 30.0, 20, 280, 300, 310};
  r.wait_by_priority = {{"normal", r.wait_s}};
  r.jobs_total = 10;
  r.jobs_started = 9;
  r.jobs_unstarted = 1;
  const RunInfo info = Info();
  const std::string table = FormatTable(info, spec, {r});
  EXPECT_THAT(table, HasSubstr("1,235"));
  EXPECT_THAT(table, HasSubstr("65.0%"));
  EXPECT_THAT(table, HasSubstr("20s / 4m40s / 5m"));
  const auto j = nlohmann::json::parse(FormatJson(info, spec, {r}));
  const auto& p = j["policies"][0];
  EXPECT_EQ(p["name"], "tide");
  EXPECT_DOUBLE_EQ(p["cost_total"].get<double>(), 1234.5);
  EXPECT_DOUBLE_EQ(p["utilization"].get<double>(), 0.65);
  EXPECT_EQ(p["wait_s"]["p95"], 280);
  EXPECT_EQ(p["wait_s_by_priority"]["normal"]["p99"], 300);
  EXPECT_EQ(p["jobs_unstarted"], 1);
  EXPECT_EQ(j["run"]["seed"], 3);
}

TEST(ReportTest, LowerBoundRowsOnlyWhenAsked) {
  const model::ClusterSpec spec = testing::Spec({testing::Pool("od", 8, model::Tier::kOnDemand, 100, 0, 5)});
  sim::PolicyResult r;
  r.name = "tide";
  r.cost.total = 1140;
  RunInfo info = Info();
  EXPECT_THAT(FormatTable(info, spec, {r}), ::testing::Not(HasSubstr("lower bound")));
  EXPECT_FALSE(nlohmann::json::parse(FormatJson(info, spec, {r})).contains("lower_bound"));

  bound::Bound b;
  b.total = 1000;
  b.reserved_gpus = 16;
  info.lower_bound = b;
  b.total = 0;  // a bound of 0: no ratio
  info.bound_at_configured = b;
  const std::string table = FormatTable(info, spec, {r});
  EXPECT_THAT(table, HasSubstr("lower bound: 1,000 CNY (a reserved base of 16 GPUs"));
  EXPECT_THAT(table, ::testing::ContainsRegex("cost / lower bound +1.14x"));
  EXPECT_THAT(table, ::testing::ContainsRegex("cost / bound, configured base +-"));
  const auto j = nlohmann::json::parse(FormatJson(info, spec, {r}));
  EXPECT_DOUBLE_EQ(j["lower_bound"]["cost_total"].get<double>(), 1000);
  EXPECT_EQ(j["lower_bound"]["reserved_gpus"], 16);
  EXPECT_DOUBLE_EQ(j["policies"][0]["cost_to_lower_bound"].get<double>(), 1.14);
  EXPECT_TRUE(j["policies"][0]["cost_to_lower_bound_configured_base"].is_null());
}

}  // namespace
}  // namespace tide::report
