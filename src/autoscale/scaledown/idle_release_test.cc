#include "autoscale/scaledown/idle_release.h"

#include "autoscale/coverage.h"

#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "testutil/builders.h"

namespace tide::autoscale {
namespace {

using model::Tier;
using testing::At;
using testing::Pool;
using testing::ReadyNode;

class IdleReleaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = testing::Spec({Pool("od", 8, Tier::kOnDemand, 100, 1, 10), Pool("res", 8, Tier::kReserved, 50, 1, 1)});
    state_.spec = &spec_;
  }
  ScalingPlan Evaluate(int64_t now, absl::flat_hash_set<model::NodeId> needed = {}) {
    ScalingPlan plan;
    PassContext ctx(state_, At(now));
    IndexState(&ctx);
    ctx.needed = std::move(needed);
    IdleRelease(IdleReleaseOptions{}).Evaluate(&ctx, &plan);
    return plan;
  }
  model::ClusterSpec spec_;
  model::ClusterState state_;
};

// `needed` is asked about idle ready nodes (here) and booting ones (boot
// spares) only; NeedSlot leaves out a ready node busy now, and enters the rest.
TEST_F(IdleReleaseTest, NeedSlotEntersOnlyNodesThatCouldBeAskedAbout) {
  state_.nodes = {ReadyNode(1, 0, 8, 2), ReadyNode(2, 0, 8, 8), testing::BootingNode(3, 0, 8, 300)};
  PassContext ctx(state_, At(0));
  IndexState(&ctx);
  auto snap = std::make_unique<sched::CapacitySnapshot>(2, 8);
  for (const auto& n : state_.nodes) ctx.AddToWhatIf(&n, snap->AddNode(n.id, n.pool, n.gpus, n.free_gpus));
  ctx.SetDense(std::move(snap));
  const int bought = ctx.Snap().AddNode(-1, 0, 8, 8);  // a node a step buys: a template past the nodes
  for (int slot = 0; slot <= bought; ++slot) ctx.NeedSlot(slot);
  EXPECT_FALSE(ctx.needed.contains(1)) << "ready and busy: no step asks about it";
  EXPECT_TRUE(ctx.needed.contains(2));
  EXPECT_TRUE(ctx.needed.contains(3));
  EXPECT_FALSE(ctx.needed.contains(-1)) << "not bought yet: no step asks about it";
}

TEST_F(IdleReleaseTest, ReleasesAfterTenMinutesOldestFirstAndKeepsMin) {
  state_.nodes = {ReadyNode(1, 0, 8, 8, /*idle_since=*/100), ReadyNode(2, 0, 8, 8, 50), ReadyNode(3, 0, 8, 8, 0)};
  const ScalingPlan plan = Evaluate(700);  // nodes 3 and 2 idle >= 600 s; node 1 for 600 s exactly
  ASSERT_EQ(plan.actions.size(), 1u);
  // Three nodes, min 1: two may go, longest idle first.
  EXPECT_EQ(plan.actions[0].nodes, std::vector<model::NodeId>({3, 2}));
}

TEST_F(IdleReleaseTest, NotBeforeTheIdleTimeAndSaysWhenToLookAgain) {
  state_.nodes = {ReadyNode(1, 0, 8, 8, 100), ReadyNode(2, 0, 8, 8, 100)};
  const ScalingPlan plan = Evaluate(650);
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_EQ(plan.next_wakeup, At(700));
}

TEST_F(IdleReleaseTest, BusyNeededAndReservedNodesStay) {
  state_.nodes = {ReadyNode(1, 0, 8, 4), ReadyNode(2, 0, 8, 8, 0), ReadyNode(3, 0, 8, 8, 0),
                  ReadyNode(4, 1, 8, 8, 0)};
  const ScalingPlan plan = Evaluate(5000, {2});
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_EQ(plan.actions[0].nodes, std::vector<model::NodeId>({3}));
}

TEST_F(IdleReleaseTest, BootingNodesCountTowardMin) {
  state_.nodes = {ReadyNode(1, 0, 8, 8, 0), testing::BootingNode(2, 0, 8, 900)};
  const ScalingPlan plan = Evaluate(1000);
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_EQ(plan.actions[0].nodes, std::vector<model::NodeId>({1}));
}

}  // namespace
}  // namespace tide::autoscale
