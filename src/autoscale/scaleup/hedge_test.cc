#include "autoscale/scaleup/hedge.h"

#include <optional>
#include <vector>

#include "autoscale/autoscaler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/state_index.h"
#include "testutil/builders.h"

namespace tide::autoscale {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using model::Tier;
using testing::At;
using testing::BootingNode;
using testing::Pending;
using testing::Pool;
using testing::ReadyNode;

// Each case runs with and without the driver's state index: the hedge reads
// the booting nodes from either.
class BootHedgeTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    spec_ = testing::Spec({Pool("od", 8, Tier::kOnDemand, 100, 0, 10), Pool("res", 8, Tier::kReserved, 50, 0, 10)});
    state_.spec = &spec_;
  }
  ScalingPlan RunOnce(int hedge, int64_t now) {
    AutoscalerOptions o;
    o.scale_up.release_lookahead = Seconds(0);
    o.scale_up.hedge.nodes = hedge;
    auto as = Autoscaler::Make(o);
    EXPECT_TRUE(as.ok()) << as.status();
    Index();
    auto plan = as->RunOnce(state_, At(now));
    EXPECT_TRUE(plan.ok()) << plan.status();
    return *plan;
  }
  // Builds the index over the state as it is now (if the case asks for one).
  void Index() {
    state_.index = nullptr;
    index_.reset();
    if (GetParam()) {
      index_.emplace(model::StateIndex::Build(state_));
      state_.index = &*index_;
    }
  }
  static std::vector<Action> Of(const ScalingPlan& plan, ActionKind kind) {
    std::vector<Action> out;
    for (const auto& a : plan.actions) {
      if (a.kind == kind) out.push_back(a);
    }
    return out;
  }
  model::Node Booting(model::NodeId id, int64_t created) {
    model::Node n = BootingNode(id, 0, 8, created + 180);
    n.created = At(created);
    return n;
  }
  model::ClusterSpec spec_;
  model::ClusterState state_;
  std::optional<model::StateIndex> index_;
};

TEST_P(BootHedgeTest, ABuyGetsTheSparesWithinThePoolsMax) {
  for (int i = 1; i <= 4; ++i) state_.jobs.push_back(Pending(i, 8, 1));
  const auto ups = Of(RunOnce(/*hedge=*/2, 60), ActionKind::kScaleUp);
  ASSERT_EQ(ups.size(), 1u);
  EXPECT_EQ(ups[0].count, 6);  // 4 for the jobs, 2 spares
  EXPECT_EQ(ups[0].spares, 2);
  EXPECT_THAT(ups[0].reason, HasSubstr("+2 spare against slow boots (boot_hedge)"));
  // Without the hedge, only what the jobs need.
  EXPECT_EQ(Of(RunOnce(0, 60), ActionKind::kScaleUp)[0].count, 4);
  // A pool near its max gets only the room it has left.
  spec_.pools[0].max_nodes = 5;
  const auto capped = Of(RunOnce(2, 60), ActionKind::kScaleUp);
  EXPECT_EQ(capped[0].count, 5);
  EXPECT_EQ(capped[0].spares, 1);
}

TEST_P(BootHedgeTest, SparesBootingAlreadyCountAgainstTheHedge) {
  state_.nodes = {Booting(1, 0), Booting(2, 10), ReadyNode(3, 1, 8, 8)};
  Index();
  PassContext ctx(state_, At(60));
  IndexState(&ctx);
  const BootHedge hedge(BootHedgeOptions{3});
  EXPECT_EQ(hedge.Spares(ctx, 0), 1);  // two booting for nothing: one more
  ctx.needed.insert(1);                // a job waits for node 1
  EXPECT_EQ(hedge.Spares(ctx, 0), 2);
  ctx.leaving.insert(2);  // node 2 goes this pass: no spare any more
  EXPECT_EQ(hedge.Spares(ctx, 0), 3);
  EXPECT_EQ(hedge.Spares(ctx, 1), 0);  // reserved: a fixed quota
  spec_.pools[0].boot_delay.min = spec_.pools[0].boot_delay.max = Seconds(0);
  EXPECT_EQ(hedge.Spares(ctx, 0), 0);  // nothing to hedge against
}

TEST_P(BootHedgeTest, KeepsTheHedgeWhileAJobWaitsForABootAndReleasesTheRest) {
  state_.nodes = {Booting(1, 0), Booting(2, 10), Booting(3, 20), ReadyNode(4, 1, 8, 0)};
  state_.jobs = {Pending(1, 8, 1)};  // waits for one boot: two spares, one kept
  const auto rel = Of(RunOnce(/*hedge=*/1, 60), ActionKind::kRelease);
  ASSERT_EQ(rel.size(), 1u);
  EXPECT_THAT(rel[0].nodes, ElementsAre(3));  // the most recently bought
  EXPECT_THAT(rel[0].reason, HasSubstr("beyond the 1 kept while jobs wait for a boot"));
}

TEST_P(BootHedgeTest, OnceNoJobWaitsForABootEveryBootingNodeGoes) {
  // The jobs these nodes were bought for started on nodes that came free.
  state_.nodes = {Booting(1, 0), Booting(2, 10), ReadyNode(3, 0, 8, 8)};
  auto rel = Of(RunOnce(/*hedge=*/1, 60), ActionKind::kRelease);
  ASSERT_EQ(rel.size(), 1u);
  EXPECT_THAT(rel[0].nodes, ElementsAre(2, 1));
  EXPECT_THAT(rel[0].reason, HasSubstr("2 booting nodes no job waits for"));
  // The pool's minimum counts booting nodes: it is kept.
  spec_.pools[0].min_nodes = 2;
  rel = Of(RunOnce(1, 60), ActionKind::kRelease);
  ASSERT_EQ(rel.size(), 1u);
  EXPECT_THAT(rel[0].nodes, ElementsAre(2));
  // Without the hedge, booting nodes are never released.
  spec_.pools[0].min_nodes = 0;
  EXPECT_TRUE(Of(RunOnce(0, 60), ActionKind::kRelease).empty());
}

TEST_P(BootHedgeTest, KeepsBootingNodesWhileTheForecastExpectsWork) {
  state_.nodes = {Booting(1, 0)};
  Index();
  PassContext ctx(state_, At(60));
  IndexState(&ctx);
  ctx.forecast_expects = true;
  ScalingPlan plan;
  BootHedge(BootHedgeOptions{1}).Evaluate(&ctx, &plan);
  EXPECT_TRUE(plan.actions.empty());
  ctx.forecast_expects = false;
  BootHedge(BootHedgeOptions{1}).Evaluate(&ctx, &plan);
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_THAT(plan.actions[0].nodes, ElementsAre(1));
}

INSTANTIATE_TEST_SUITE_P(Index, BootHedgeTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Indexed" : "Scanned"; });

}  // namespace
}  // namespace tide::autoscale
