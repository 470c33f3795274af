#include "autoscale/spot/notice.h"

#include "autoscale/autoscaler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/builders.h"

namespace tide::autoscale {
namespace {

using model::Tier;
using testing::AddRunning;
using testing::At;
using testing::Pending;
using testing::ReadyNode;

TEST(SpotNoticeTest, DrainsTheNodeAndEvacuatesItsJobsThenReplacesThem) {
  model::ClusterSpec spec = testing::Spec({testing::Pool("spot", 8, Tier::kSpot, 15, 0, 10)});
  model::ClusterState state;
  state.spec = &spec;
  state.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  state.nodes[0].interrupt_at = At(220);
  model::Job a = Pending(10, 4, 1, 0, 9999, 2), b = Pending(11, 4, 1, 0, 9999, 2), c = Pending(12, 8, 1, 0, 9999, 2);
  AddRunning(&state, a, {{1, 1}}, 9999);
  AddRunning(&state, b, {{1, 1}}, 9999);
  AddRunning(&state, c, {{2, 1}}, 9999);
  AutoscalerOptions o;
  auto plan = Autoscaler::Make(o)->RunOnce(state, At(100));
  ASSERT_TRUE(plan.ok());
  bool drained = false, evacuated = false;
  for (const auto& act : plan->actions) {
    if (act.kind == ActionKind::kDrain) drained = act.nodes == std::vector<model::NodeId>{1};
    if (act.kind == ActionKind::kEvacuate) {
      evacuated = act.jobs == std::vector<model::JobId>{10, 11};
      EXPECT_THAT(act.reason, ::testing::HasSubstr("checkpoint and requeue"));
    }
  }
  EXPECT_TRUE(drained);
  EXPECT_TRUE(evacuated);
  o.spot_notice.enabled = false;
  plan = Autoscaler::Make(o)->RunOnce(state, At(100));
  for (const auto& act : plan->actions) EXPECT_NE(act.kind, ActionKind::kEvacuate);
}

TEST(SpotNoticeTest, InterruptedJobsAreReplacedAtOnce) {
  model::ClusterSpec spec = testing::Spec({testing::Pool("od", 8, Tier::kOnDemand, 100, 0, 10)});
  model::ClusterState state;
  state.spec = &spec;
  model::Job j = Pending(1, 8, 1, /*submit=*/0, 3600, 2);
  j.restarts = 1;  // requeued after a spot interruption, a moment ago
  state.jobs.push_back(j);
  AutoscalerOptions o;
  o.scale_up.trigger.pending_grace = Hours(1);
  auto plan = Autoscaler::Make(o)->RunOnce(state, At(5));
  ASSERT_TRUE(plan.ok());
  ASSERT_FALSE(plan->actions.empty());
  EXPECT_EQ(plan->actions[0].kind, ActionKind::kScaleUp);
  EXPECT_THAT(plan->actions[0].reason, ::testing::HasSubstr("was interrupted and is replaced at once"));
}

}  // namespace
}  // namespace tide::autoscale
