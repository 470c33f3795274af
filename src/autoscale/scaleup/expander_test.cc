#include "autoscale/scaleup/expander.h"

#include "core/strings.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/builders.h"

namespace tide::autoscale {
namespace {

using model::Tier;
using testing::Pool;

ScaleUpOption Option(int pool, int nodes, int64_t used, int64_t new_gpus, double cost) {
  ScaleUpOption o;
  o.pool = pool;
  o.nodes = nodes;
  o.useful_gpus = used;
  o.new_gpus = new_gpus;
  o.cost_per_hour = cost;
  o.served = {{0, 1}};
  return o;
}

struct Case {
  std::string name;
  std::vector<std::string> chain;
  std::vector<int> priorities;  // per pool
  std::vector<ScaleUpOption> options;
  int want_pool;
  std::string want_why;
};

class ExpanderChainTest : public ::testing::TestWithParam<Case> {};

TEST_P(ExpanderChainTest, Chooses) {
  const Case& c = GetParam();
  std::vector<model::NodePool> pools;
  for (size_t i = 0; i < c.priorities.size(); ++i) {
    pools.push_back(Pool(StrCat("p", i), 8, Tier::kOnDemand, 1, 0, 10));
    pools.back().priority = c.priorities[i];
  }
  const model::ClusterSpec spec = testing::Spec(pools);
  auto chain = ExpanderChain::Make(c.chain);
  ASSERT_TRUE(chain.ok());
  std::vector<const ScaleUpOption*> ptrs;
  for (const auto& o : c.options) ptrs.push_back(&o);
  const std::vector<int> live(spec.pools.size(), 0);
  const auto choice = chain->Choose(ptrs, ExpanderContext{spec, live, 0.3});
  EXPECT_EQ(choice.option->pool, c.want_pool);
  EXPECT_THAT(choice.why, ::testing::HasSubstr(c.want_why));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ExpanderChainTest,
    ::testing::Values(
        Case{"PriorityFirst", {"priority", "least-cost"}, {0, 5}, {Option(0, 1, 8, 8, 10), Option(1, 1, 8, 8, 99)}, 1,
             "priority"},
        Case{"ThenLeastCostPerUsedGpu",
             {"priority", "least-cost", "least-waste"},
             {0, 0},
             {Option(0, 1, 8, 8, 100), Option(1, 4, 8, 8, 108)},
             0,
             "least-cost: 12.5"},
        Case{"ThenLeastWaste",
             {"priority", "least-cost", "least-waste"},
             {0, 0},
             {Option(0, 1, 4, 8, 50), Option(1, 2, 4, 4, 50)},
             1,
             "least-waste: 0%"},
        Case{"FallbackIsDeclarationOrder", {"least-waste"}, {0, 0}, {Option(1, 1, 8, 8, 1), Option(0, 1, 8, 8, 1)},
             0, "declaration order"},
        Case{"MostJobs", {"most-jobs"}, {0, 0}, {Option(0, 1, 8, 8, 1), [] {
                                                   auto o = Option(1, 1, 8, 8, 1);
                                                   o.served = {{0, 1}, {1, 1}};
                                                   return o;
                                                 }()},
             1, "most-jobs"}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(ExpanderChainTest, UnknownNameIsAnError) {
  auto chain = ExpanderChain::Make({"priority", "random"});
  ASSERT_FALSE(chain.ok());
  EXPECT_THAT(std::string(Message(chain.status())), ::testing::HasSubstr("unknown expander 'random'"));
}

TEST(ScaleUpOptionTest, CostAndWaste) {
  const ScaleUpOption o = Option(0, 2, 12, 16, 200);
  EXPECT_DOUBLE_EQ(o.CostPerUsedGpuHour(), 200.0 / 12);
  EXPECT_DOUBLE_EQ(o.Waste(), 0.25);
}

}  // namespace
}  // namespace tide::autoscale
