#include "autoscale/scaledown/reclaim.h"

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

class ReclaimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = testing::Spec({testing::Pool("od", 8, Tier::kOnDemand, 100, 0, 10)});
    state_.spec = &spec_;
    state_.metrics = &metrics_;
    for (int n = 1; n <= 2; ++n) {
      state_.nodes.push_back(ReadyNode(n, 0, 8, 8));
      AddRunning(&state_, Pending(n, 8, 1, 0, 99999), {{n, 1}}, 99999);
    }
  }
  std::vector<Action> Reclaims(int64_t now, AutoscalerOptions o = {}) {
    auto plan = Autoscaler::Make(o)->RunOnce(state_, At(now));
    EXPECT_TRUE(plan.ok());
    last_ = *plan;
    std::vector<Action> out;
    for (const auto& a : plan->actions) {
      if (a.kind == ActionKind::kReclaim) out.push_back(a);
    }
    return out;
  }
  model::ClusterSpec spec_;
  model::ClusterState state_;
  testing::FakeMetrics metrics_;
  ScalingPlan last_;
};

TEST_F(ReclaimTest, ReclaimsAJobIdleForThirtyMinutes) {
  metrics_.Set(1, {{At(0), 0.9}, {At(600), 0.03}});  // idle from t=600
  metrics_.Set(2, {{At(0), 0.9}});
  EXPECT_TRUE(Reclaims(600 + 1799).empty());
  EXPECT_EQ(last_.next_wakeup, At(600 + 1800));  // sleeps exactly until it is due
  const auto r = Reclaims(600 + 1800);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].jobs[0], 1);
  EXPECT_FALSE(r[0].cancel);
  EXPECT_THAT(r[0].reason, HasSubstr("below 10% utilization"));
}

TEST_F(ReclaimTest, ABriefDipDoesNotCount) {
  metrics_.Set(1, {{At(0), 0.9}, {At(600), 0.03}, {At(1200), 0.9}, {At(1300), 0.05}});
  EXPECT_TRUE(Reclaims(1300 + 1000).empty());
}

TEST_F(ReclaimTest, MissingDataIsNeverIdle) {
  EXPECT_TRUE(Reclaims(99999).empty());  // no series at all
  state_.metrics = nullptr;
  EXPECT_TRUE(Reclaims(99999).empty());
}

TEST_F(ReclaimTest, ProtectedJobsAreExempt) {
  metrics_.Set(1, {{At(0), 0.0}});
  state_.jobs[0].spec.is_protected = true;
  EXPECT_TRUE(Reclaims(7200).empty());
}

TEST_F(ReclaimTest, CancelWhenConfiguredAndWithinTheBudget) {
  metrics_.Set(1, {{At(0), 0.0}});
  metrics_.Set(2, {{At(0), 0.0}});
  AutoscalerOptions o;
  o.reclaim.cancel = true;
  o.budget.max_nodes = 1;
  const auto r = Reclaims(7200, o);
  ASSERT_EQ(r.size(), 1u);  // the budget allows one node
  EXPECT_TRUE(r[0].cancel);
}

}  // namespace
}  // namespace tide::autoscale
