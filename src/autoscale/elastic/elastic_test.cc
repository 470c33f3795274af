#include "autoscale/elastic/elastic.h"

#include <cmath>

#include "autoscale/autoscaler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/builders.h"
#include "testutil/fake_metrics.h"

namespace tide::autoscale {
namespace {

using ::testing::HasSubstr;
using model::Tier;
using testing::AddRunning;
using testing::At;
using testing::Pending;
using testing::ReadyNode;

model::Job Elastic(model::JobId id, int gpw, int workers, int min, int max, bool async) {
  model::Job j = Pending(id, gpw, workers, 0, 99999, 1);
  j.spec.min_workers = min;
  j.spec.max_workers = max;
  j.spec.async = async;
  return j;
}

class ElasticTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = testing::Spec({testing::Pool("res", 8, Tier::kReserved, 55, 1, 1), testing::Pool("od", 8, Tier::kOnDemand, 100, 0, 3)});
    state_.spec = &spec_;
    state_.metrics = &metrics_;
  }
  std::vector<Action> Of(ActionKind kind, int64_t now, AutoscalerOptions o = {}) {
    o.scale_up.release_lookahead = Seconds(0);
    auto plan = Autoscaler::Make(o)->RunOnce(state_, At(now));
    EXPECT_TRUE(plan.ok()) << plan.status();
    last_ = *plan;
    std::vector<Action> out;
    for (const auto& a : plan->actions) {
      if (a.kind == kind) out.push_back(a);
    }
    return out;
  }
  model::ClusterSpec spec_;
  model::ClusterState state_;
  testing::FakeMetrics metrics_;
  ScalingPlan last_;
};

TEST(RescaleTest, LinearAndSquareRootRules) {
  ElasticOptions o;
  o.per_worker_batch = 32;
  o.base_lr = 0.1;
  int64_t batch;
  double lr;
  RescaleFor(o, 4, 8, &batch, &lr);
  EXPECT_EQ(batch, 256);
  EXPECT_DOUBLE_EQ(lr, 0.2);
  o.lr_rule = LrRule::kSqrt;
  RescaleFor(o, 4, 16, &batch, &lr);
  EXPECT_DOUBLE_EQ(lr, 0.2);
  RescaleFor(o, 4, 1, &batch, &lr);
  EXPECT_DOUBLE_EQ(lr, 0.05);
}

TEST_F(ElasticTest, ShrinksForWaitingWorkNoPoolCanTake) {
  // The on-demand pool is at its max with an elastic job on all three nodes.
  for (int n = 1; n <= 3; ++n) state_.nodes.push_back(ReadyNode(n + 1, 1, 8, 8));
  state_.nodes.push_back(ReadyNode(1, 0, 8, 0));  // reserved, busy
  AddRunning(&state_, Elastic(50, 8, 3, 1, 3, false), {{2, 1}, {3, 1}, {4, 1}}, 99999);
  state_.jobs.push_back(Pending(1, 8, 1, 0, 3600, /*high*/ 0));
  const auto r = Of(ActionKind::kResize, 900);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].resize.workers, 2);
  EXPECT_EQ(r[0].resize.remove.size(), 1u);
  EXPECT_THAT(r[0].reason, HasSubstr("making room for j1"));
  EXPECT_THAT(r[0].reason, HasSubstr("learning rate 0.1 -> 0.06667"));
}

TEST_F(ElasticTest, GrowsIntoPaidForCapacityButNotIdleOnDemandNodes) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 1, 8, 8, 0)};  // reserved; idle on-demand
  AddRunning(&state_, Elastic(50, 2, 2, 1, 8, false), {{1, 2}}, 99999);
  const auto r = Of(ActionKind::kResize, 900);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].resize.workers, 4);  // the reserved node's 4 free GPUs; the on-demand node stays idle
  ASSERT_EQ(r[0].resize.add.size(), 1u);
  EXPECT_EQ(r[0].resize.add[0].node, 1);
}

TEST_F(ElasticTest, UtilizationPressureGrowsAsyncWork) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 1, 8, 8)};
  AddRunning(&state_, Elastic(50, 4, 2, 1, 4, true), {{1, 2}}, 99999);
  metrics_.Set(50, {{At(0), 0.05}, {At(300), 0.95}});
  AutoscalerOptions o;
  o.elastic.enabled = false;  // only the utilization rule
  EXPECT_TRUE(Of(ActionKind::kResize, 300 + 599, o).empty());
  EXPECT_LE(last_.next_wakeup, At(900));
  const auto r = Of(ActionKind::kResize, 900, o);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].resize.workers, 4);
  EXPECT_THAT(r[0].reason, HasSubstr("utilization above 90% for 10m"));
}

TEST_F(ElasticTest, UtilizationPressureBuysWhenNothingIsFree) {
  state_.nodes = {ReadyNode(1, 0, 8, 8)};
  AddRunning(&state_, Elastic(50, 8, 1, 1, 2, true), {{1, 1}}, 99999);
  metrics_.Set(50, {{At(0), 0.97}});
  AutoscalerOptions o;
  o.scale_up.trigger.pending_grace = Seconds(0);
  const auto up = Of(ActionKind::kScaleUp, 1200, o);
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].count, 1);
}

// A node bought for a growth is waited for while it boots: boot spares must
// not release it as nobody's (and the next pass buy it again).
TEST_F(ElasticTest, BootSparesKeepTheNodeAGrowthWaitsFor) {
  spec_ = testing::Spec({testing::Pool("res", 8, Tier::kReserved, 55, 1, 1),
                         testing::Pool("od", 8, Tier::kOnDemand, 100, 0, 3, 120)});
  state_.nodes = {ReadyNode(1, 0, 8, 8), testing::BootingNode(2, 1, 8, 1300)};
  state_.nodes[1].created = At(1190);
  AddRunning(&state_, Elastic(50, 8, 1, 1, 2, true), {{1, 1}}, 99999);
  metrics_.Set(50, {{At(0), 0.97}});
  AutoscalerOptions o;
  o.scale_up.trigger.pending_grace = Seconds(0);
  o.scale_up.hedge.nodes = 2;
  EXPECT_TRUE(Of(ActionKind::kRelease, 1200, o).empty());
  EXPECT_TRUE(Of(ActionKind::kScaleUp, 1200, o).empty());  // the booting node is the growth's
}

TEST_F(ElasticTest, UtilizationWasteShrinksAsyncWorkButNotSyncGangs) {
  state_.nodes = {ReadyNode(1, 0, 8, 8)};
  AddRunning(&state_, Elastic(50, 2, 4, 1, 4, true), {{1, 4}}, 99999);
  metrics_.Set(50, {{At(0), 0.9}, {At(1000), 0.1}});
  AutoscalerOptions o;
  o.elastic.enabled = false;
  const auto r = Of(ActionKind::kResize, 1300, o);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].resize.workers, 2);
  state_.jobs[0].spec.async = false;  // a synchronous gang is scaled through the queue only
  EXPECT_TRUE(Of(ActionKind::kResize, 1300, o).empty());
}

TEST_F(ElasticTest, NothingIsReadDuringWarmup) {
  state_.nodes = {ReadyNode(1, 0, 8, 8)};
  model::Job j = Elastic(50, 2, 4, 1, 4, true);
  AddRunning(&state_, j, {{1, 4}}, 99999);
  state_.jobs[0].started = At(1000);
  metrics_.Set(50, {{At(1000), 0.02}});  // loading data
  AutoscalerOptions o;
  o.elastic.enabled = false;
  EXPECT_TRUE(Of(ActionKind::kResize, 1000 + 500, o).empty());
  EXPECT_LE(last_.next_wakeup, At(1000 + 600));
}

TEST_F(ElasticTest, LowUtilizationAfterGrowingFlagsABottleneck) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 1, 8, 8)};
  AddRunning(&state_, Elastic(50, 4, 2, 1, 8, true), {{1, 2}}, 99999);
  state_.jobs[0].last_resize = At(1000);
  state_.jobs[0].workers_before_resize = 1;
  metrics_.Set(50, {{At(0), 0.95}, {At(1000), 0.4}});  // grown at 1000; now input-bound
  AutoscalerOptions o;
  o.elastic.enabled = false;
  const auto notes = Of(ActionKind::kNote, 1000 + 1200, o);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(notes[0].bottleneck);
  EXPECT_THAT(notes[0].reason, HasSubstr("bottleneck; more workers will not help"));
  state_.jobs[0].bottleneck = true;
  metrics_.Set(50, {{At(0), 0.97}});
  EXPECT_TRUE(Of(ActionKind::kResize, 1000 + 1800, o).empty());  // never grown again
}

}  // namespace
}  // namespace tide::autoscale
