#include "autoscale/preempt/preemption.h"

#include <string>
#include <vector>

#include "autoscale/autoscaler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/builders.h"

namespace tide::autoscale {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using model::JobState;
using model::Tier;
using testing::AddRunning;
using testing::At;
using testing::Pending;
using testing::ReadyNode;

constexpr int kHigh = 0, kLow = 2;

class PreemptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A full pool at its max: three nodes, each running one low-priority job.
    spec_ = testing::Spec({testing::Pool("od", 8, Tier::kOnDemand, 100, 0, 3)});
    state_.spec = &spec_;
    for (int n = 1; n <= 3; ++n) {
      state_.nodes.push_back(ReadyNode(n, 0, 8, 8));
      model::Job j = Pending(100 + n, 8, 1, 0, 99999, kLow);
      j.spec.preemptible = true;
      j.progress = 1000;
      j.saved = 1000 - unsaved_[n - 1];
      AddRunning(&state_, j, {{n, 1}}, 99999);
    }
  }
  ScalingPlan RunOnce(AutoscalerOptions o, int64_t now) {
    o.scale_up.release_lookahead = Seconds(0);
    auto as = Autoscaler::Make(o);
    auto plan = as->RunOnce(state_, At(now));
    EXPECT_TRUE(plan.ok()) << plan.status();
    return *plan;
  }
  std::vector<Action> Preempts(const ScalingPlan& p) {
    std::vector<Action> out;
    for (const auto& a : p.actions) {
      if (a.kind == ActionKind::kPreempt) out.push_back(a);
    }
    return out;
  }
  const double unsaved_[3] = {600, 30, 300};
  model::ClusterSpec spec_;
  model::ClusterState state_;
};

TEST_F(PreemptionTest, TakesTheVictimThatLosesTheLeastWork) {
  state_.jobs.push_back(Pending(1, 8, 1, /*submit=*/0, 3600, kHigh));
  const ScalingPlan plan = RunOnce({}, 300);
  const auto pre = Preempts(plan);
  ASSERT_EQ(pre.size(), 1u);
  EXPECT_THAT(pre[0].jobs, ElementsAre(102));  // 30 s unsaved
  EXPECT_THAT(pre[0].reason, HasSubstr("chosen to lose the least work"));
}

TEST_F(PreemptionTest, WaitsForItsTimeAndSaysWhen) {
  state_.jobs.push_back(Pending(1, 8, 1, /*submit=*/100, 3600, kHigh));
  const ScalingPlan plan = RunOnce({}, 130);
  EXPECT_TRUE(Preempts(plan).empty());
  EXPECT_LE(plan.next_wakeup, At(100 + 120));
}

TEST_F(PreemptionTest, BuysRatherThanPreemptsWhenAPoolHasRoom) {
  spec_.pools[0].max_nodes = 10;
  state_.jobs.push_back(Pending(1, 8, 1, 0, 3600, kHigh));
  const ScalingPlan plan = RunOnce({}, 300);
  EXPECT_TRUE(Preempts(plan).empty());
  AutoscalerOptions o;
  o.preemption.before_buying = true;
  EXPECT_EQ(Preempts(RunOnce(o, 300)).size(), 1u);
}

TEST_F(PreemptionTest, NeverProtectedNonPreemptibleOrEqualPriority) {
  for (auto& j : state_.jobs) {
    if (j.id == 101) j.spec.is_protected = true;
    if (j.id == 102) j.spec.preemptible = false;
    if (j.id == 103) j.priority = 100;  // as high as the pending job
  }
  state_.jobs.push_back(Pending(1, 8, 1, 0, 3600, kHigh));
  EXPECT_TRUE(Preempts(RunOnce({}, 300)).empty());
}

TEST_F(PreemptionTest, RespectsTheDisruptionBudget) {
  state_.jobs.push_back(Pending(1, 8, 2, 0, 3600, kHigh));  // needs two nodes
  AutoscalerOptions o;
  o.budget.max_nodes = 3;
  state_.recent_disruptions = {At(200), At(250)};  // two used in the last 10 minutes
  const ScalingPlan plan = RunOnce(o, 300);
  EXPECT_TRUE(Preempts(plan).empty());
  bool noted = false;
  for (const auto& a : plan.actions) noted |= a.kind == ActionKind::kNote && a.reason.find("disruption budget") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_LE(plan.next_wakeup, At(301));  // looks again on the next pass
  state_.recent_disruptions.clear();
  const auto pre = Preempts(RunOnce(o, 300));
  ASSERT_EQ(pre.size(), 1u);
  EXPECT_THAT(pre[0].jobs, ElementsAre(102, 103));  // the two cheapest
}

TEST_F(PreemptionTest, StoppingVictimsAreNotPreemptedAgainNorBoughtFor) {
  state_.jobs.push_back(Pending(1, 8, 1, 0, 3600, kHigh));
  for (auto& j : state_.jobs) {
    if (j.id == 102) {
      j.state = JobState::kStopping;  // told to checkpoint last pass
      j.expected_end = At(360);
    }
  }
  const ScalingPlan plan = RunOnce({}, 310);
  EXPECT_TRUE(Preempts(plan).empty());
  for (const auto& a : plan.actions) EXPECT_NE(a.kind, ActionKind::kScaleUp);
}

}  // namespace
}  // namespace tide::autoscale
