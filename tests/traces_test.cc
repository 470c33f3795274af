// tide on the public traces in ../shared/traces. Each test skips, saying so,
// when the traces are not there (as on a user's machine).
#include <filesystem>
#include <string>

#include "autoscale/policy.h"
#include "config/config.h"
#include "gtest/gtest.h"
#include "sim/compare.h"
#include "trace/demand.h"
#include "trace/reader.h"

namespace tide {
namespace {

std::string TracePath(const std::string& rel) { return std::string(TIDE_TRACES_DIR) + "/" + rel; }

#define REQUIRE_TRACE(path)                                                                         \
  if (!std::filesystem::exists(path)) {                                                             \
    GTEST_SKIP() << "public traces not found at " << path << " (see docs/traces.md to fetch them)"; \
  }

// The ITP cluster04 trace (15,802 jobs) under every policy, on the cluster the
// published experiments used for it: 128 nodes of 8 GPUs at most.
TEST(TracesTest, ItpCluster04UnderEveryPolicy) {
  const std::string path = TracePath("itp-2021/cluster04.csv");
  REQUIRE_TRACE(path);
  auto cfg = config::LoadConfig(std::string(TIDE_SOURCE_DIR) + "/examples/itp.yaml");
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  trace::TraceOptions topts;
  topts.start = cfg->simulation.start;
  topts.gpus_per_node = 8;
  topts.spec = &cfg->cluster;
  auto reader = trace::OpenTrace(path, "auto", topts);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto summary = trace::SummarizeWorkload(**reader);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->jobs, 15802);
  auto policies = autoscale::MakePolicies("fixed:peak,fixed:mean,reactive,slurm-powersave,tide", cfg->policies,
                                          cfg->cluster, summary->demand);
  ASSERT_TRUE(policies.ok()) << policies.status();
  sim::CompareOptions o;
  o.sim.seed = 1;
  auto out = sim::RunComparison(cfg->cluster, *policies, [&] { return trace::OpenTrace(path, "auto", topts); }, o);
  ASSERT_TRUE(out.ok()) << out.status();
  for (const auto& r : *out) {
    SCOPED_TRACE(r.result.name);
    EXPECT_EQ(r.result.jobs_total, 15802);
    EXPECT_GT(r.result.jobs_completed, 15000);
    EXPECT_GT(r.result.utilization, 0.0);
    EXPECT_LE(r.result.utilization, 1.0);
  }
  // Elastic capacity costs less than a cluster sized for the peak.
  const double fixed_peak = (*out)[0].result.cost.total;
  EXPECT_LT((*out)[4].result.cost.total, fixed_peak);
}

}  // namespace
}  // namespace tide
