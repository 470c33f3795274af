#include "autoscale/scaledown/consolidation.h"

#include <string>
#include <vector>

#include "autoscale/coverage.h"
#include "core/strings.h"
#include "core/time.h"
#include "model/state_index.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/builders.h"

namespace tide::autoscale {
namespace {

using model::Tier;
using ::testing::HasSubstr;
using testing::At;
using testing::Pool;
using testing::ReadyNode;

constexpr int64_t kNow = 4 * 3600;

class ConsolidationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // On-demand 8-GPU nodes at 100/h (min 0), and a reserved pool.
    spec_ = testing::Spec({Pool("od", 8, Tier::kOnDemand, 100, 0, 10), Pool("res", 8, Tier::kReserved, 50, 0, 2)});
    state_.spec = &spec_;
    options_.enabled = true;
    options_.quiet_for = Seconds(0);  // tested on its own below
  }

  // A job of `gpus` GPUs running alone on node `node` since `started`
  // (seconds before kNow's epoch), with that much work done.
  model::Job& Run(model::JobId id, model::NodeId node, int gpus, int64_t started, int64_t end = kNow + 3600) {
    model::Job j = testing::Pending(id, gpus, 1);
    j.spec.name = StrCat("j", id);
    j.started = At(started);
    j.progress = static_cast<double>(kNow - started);
    j.saved = j.progress;
    testing::AddRunning(&state_, std::move(j), {{node, 1}}, end);
    return state_.jobs.back();
  }

  // A pass by a scan of the state, checked against one read from a state
  // index (as the simulator reads it): both must plan the same.
  ScalingPlan Evaluate(int allowance = 4, int64_t now = kNow, bool release_reserved = false) {
    state_.index = nullptr;
    const ScalingPlan plan = EvaluateOnce(allowance, now, release_reserved);
    const model::StateIndex index = model::StateIndex::Build(state_, /*placement=*/true);
    state_.index = &index;
    const auto leaving = leaving_;
    const ScalingPlan indexed = EvaluateOnce(allowance, now, release_reserved);
    state_.index = nullptr;
    EXPECT_EQ(Text(indexed), Text(plan)) << "read from the index";
    EXPECT_EQ(leaving_, leaving);
    return plan;
  }
  ScalingPlan EvaluateOnce(int allowance, int64_t now, bool release_reserved) {
    ScalingPlan plan;
    PassContext ctx(state_, At(now));
    IndexState(&ctx);
    ctx.disruption_allowance = allowance;
    ctx.disruption_max = 4;
    Consolidation(options_, Minutes(10), release_reserved).Evaluate(&ctx, &plan);
    leaving_ = ctx.leaving;
    budget_blocked_ = ctx.budget_blocked;
    allowance_left_ = ctx.disruption_allowance;
    return plan;
  }
  static std::string Text(const ScalingPlan& plan) {
    std::string s;
    for (const auto& a : plan.actions) {
      StrAppend(&s, ActionKindName(a.kind), " nodes ", StrJoin(a.nodes, ","), " jobs ", StrJoin(a.jobs, ","), " [",
                a.reason, "]\n");
    }
    StrAppend(&s, "wake ", FormatTimestamp(plan.next_wakeup));
    return s;
  }

  // The nodes drained and the jobs moved, in plan order.
  static std::vector<model::NodeId> Drained(const ScalingPlan& plan) {
    std::vector<model::NodeId> out;
    for (const auto& a : plan.actions) {
      if (a.kind == ActionKind::kDrain) out.insert(out.end(), a.nodes.begin(), a.nodes.end());
    }
    return out;
  }
  static std::vector<model::JobId> Moved(const ScalingPlan& plan) {
    std::vector<model::JobId> out;
    for (const auto& a : plan.actions) {
      if (a.kind == ActionKind::kConsolidate) out.insert(out.end(), a.jobs.begin(), a.jobs.end());
    }
    return out;
  }

  model::ClusterSpec spec_;
  model::ClusterState state_;
  ConsolidationOptions options_;
  absl::flat_hash_set<model::NodeId> leaving_;
  bool budget_blocked_ = false;
  int allowance_left_ = 0;
};

TEST_F(ConsolidationTest, MovesALoneSmallJobOntoAPartlyUsedNodeAndDrainsItsNode) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  Run(10, 1, 1, 0);     // node 1: one GPU of eight
  Run(20, 2, 4, 3600);  // node 2: four GPUs
  const ScalingPlan plan = Evaluate();
  EXPECT_EQ(Drained(plan), std::vector<model::NodeId>({1}));
  EXPECT_EQ(Moved(plan), std::vector<model::JobId>({10}));
  ASSERT_EQ(plan.actions.size(), 2u);
  EXPECT_EQ(plan.actions[0].kind, ActionKind::kDrain);  // drained before its jobs stop
  EXPECT_THAT(plan.actions[1].reason, HasSubstr("node n1 runs 1 of 8 GPUs (j10 (1 GPUs)) for about 4h"));
  EXPECT_THAT(plan.actions[1].reason, HasSubstr("fit now on n2"));
  EXPECT_TRUE(leaving_.contains(1));
  EXPECT_EQ(allowance_left_, 3);
}

TEST_F(ConsolidationTest, OffByDefault) {
  options_ = ConsolidationOptions{};
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  Run(10, 1, 1, 0);
  Run(20, 2, 4, 3600);
  EXPECT_TRUE(Evaluate().actions.empty());
}

TEST_F(ConsolidationTest, JobsThatMayNotMoveKeepTheirNode) {
  struct Case {
    std::string name;
    void (*mark)(model::Job*);
  };
  const std::vector<Case> cases = {
      {"protected", [](model::Job* j) { j->spec.is_protected = true; }},
      {"never checkpoints", [](model::Job* j) { j->spec.checkpoint.interval = Seconds(0); }},
      {"stopping", [](model::Job* j) { j->state = model::JobState::kStopping; }},
      {"a GPU slice", [](model::Job* j) { j->spec.slice_units = 3; }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    state_.jobs.clear();
    state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
    c.mark(&Run(10, 1, 1, 0));
    Run(20, 2, 8, 0);  // node 2 could not be emptied onto node 1 either
    EXPECT_TRUE(Evaluate().actions.empty());
  }
}

TEST_F(ConsolidationTest, NotBeforeMinRunAndSaysWhenToLookAgain) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  Run(10, 1, 1, kNow - 600);  // started ten minutes ago
  Run(20, 2, 7, kNow - 600);
  const ScalingPlan plan = Evaluate();
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_EQ(plan.next_wakeup, At(kNow - 600 + 1800));
}

TEST_F(ConsolidationTest, OnlyWhenTheJobsFitNowOnRunningNodes) {
  // Node 2 has three GPUs free, node 3 is booting, node 4 idle: a four-GPU job fits on none.
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8), testing::BootingNode(3, 0, 8, kNow + 60),
                  ReadyNode(4, 0, 8, 8)};
  Run(10, 1, 4, 0);
  Run(20, 2, 5, 0);
  EXPECT_TRUE(Evaluate().actions.empty());
}

TEST_F(ConsolidationTest, NotWhileSchedulableJobsWait) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  Run(10, 1, 1, 0);
  Run(20, 2, 4, 3600);
  state_.jobs.push_back(testing::Pending(30, 2, 1, kNow - 5));
  EXPECT_TRUE(Evaluate().actions.empty());
}

TEST_F(ConsolidationTest, TheDisruptionBudgetLimitsIt) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8), ReadyNode(3, 0, 8, 8)};
  Run(10, 1, 1, 0);
  Run(20, 2, 1, 0);
  Run(30, 3, 2, 0);
  // Two nodes could be emptied onto node 3; the budget allows one.
  ScalingPlan plan = Evaluate(/*allowance=*/1);
  EXPECT_EQ(Drained(plan).size(), 1u);
  plan = Evaluate(/*allowance=*/0);
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_TRUE(budget_blocked_);
}

TEST_F(ConsolidationTest, HeadroomKeepsFreeGpusForArrivals) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  Run(10, 1, 1, 0);
  Run(20, 2, 4, 3600);
  // Free now: 7 + 4 = 11; after emptying node 1: 3.
  options_.headroom_gpus = 4;
  EXPECT_TRUE(Evaluate().actions.empty());
  options_.headroom_gpus = 3;
  EXPECT_EQ(Drained(Evaluate()), std::vector<model::NodeId>({1}));
  // Or as many as arrived in the window just past.
  options_.headroom_gpus = 0;
  options_.headroom_window = Minutes(30);
  state_.arrivals = {{At(kNow - 3600), 8}, {At(kNow - 600), 2}, {At(kNow - 300), 2}};
  EXPECT_TRUE(Evaluate().actions.empty());  // 4 GPUs in the last 30 minutes
  state_.arrivals.pop_back();
  EXPECT_EQ(Drained(Evaluate()), std::vector<model::NodeId>({1}));
}

TEST_F(ConsolidationTest, NotInAPoolThatBoughtANodeRecently) {
  options_ = ConsolidationOptions{};
  options_.enabled = true;  // quiet_for: the default hour
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  state_.nodes[1].created = At(kNow - 1800);  // bought half an hour ago
  Run(10, 1, 1, 0);
  Run(20, 2, 4, 0);
  ScalingPlan plan = Evaluate();
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_EQ(plan.next_wakeup, At(kNow + 1800));  // when the pool has been quiet for an hour
  state_.nodes[1].created = At(kNow - 3600);
  EXPECT_EQ(Drained(Evaluate()), std::vector<model::NodeId>({1}));
}

// A pass in which no node's jobs have room elsewhere empties nothing, but
// still says when a pool that bought recently may be looked at again.
TEST_F(ConsolidationTest, WithNoRoomAnywhereAQuietPoolStillSaysWhenToLookAgain) {
  options_.quiet_for = Hours(1);
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  state_.nodes[1].created = At(kNow - 1800);  // bought half an hour ago
  Run(10, 1, 4, 0);  // 4 free here; node 2's 5-GPU job needs 5
  Run(20, 2, 5, 0);  // 3 free here; node 1's 4-GPU job needs 4
  ScalingPlan plan = Evaluate();
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_EQ(plan.next_wakeup, At(kNow + 1800));
  // The same without the quiet hour: nothing to wait for.
  options_.quiet_for = Seconds(0);
  plan = Evaluate();
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_EQ(plan.next_wakeup, kInfiniteFuture);
}

// Room counts only in pools the job may use: free GPUs on a spot node do
// not take a job that may not run on spot.
TEST_F(ConsolidationTest, RoomOnlyInPoolsTheJobMayUse) {
  spec_ = testing::Spec({Pool("od", 8, Tier::kOnDemand, 100, 0, 10), Pool("res", 8, Tier::kReserved, 50, 0, 2),
                         Pool("spot", 8, Tier::kSpot, 30, 0, 10)});
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8), ReadyNode(3, 2, 8, 8)};
  Run(10, 1, 1, 0);
  Run(20, 2, 8, 0);                        // node 2 is full
  model::Job& low = Run(30, 3, 4, kNow - 600);  // on spot, too young to move: 4 free there
  low.spec.preemptible = true;
  low.spec.priority_class = 2;
  low.priority = 10;
  EXPECT_TRUE(Evaluate().actions.empty());  // job 10 may not run on spot
  model::Job& ten = state_.jobs[0];
  ten.spec.preemptible = true;
  ten.spec.priority_class = 2;
  ten.priority = 10;
  EXPECT_EQ(Drained(Evaluate()), std::vector<model::NodeId>({1}));
}

TEST_F(ConsolidationTest, WeighsTheSavingAgainstCheckpointAndRestart) {
  options_.remaining = ConsolidationOptions::Remaining::kExpectedEnd;
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  // Seven GPUs ending in a minute: releasing the node saves 100/h x (1m + 10m
  // idle - 1m checkpoint) = 16.7; moving costs 7 GPUs x 12.5/h x 6m = 8.75.
  Run(10, 1, 7, 0, /*end=*/kNow + 60);
  model::Job& keeper = Run(20, 2, 1, 0, kNow + 10 * 3600);
  keeper.spec.is_protected = true;  // node 2 stays
  EXPECT_TRUE(Evaluate().actions.empty());  // 16.7 < 2 x 8.75
  options_.min_ratio = 1;
  EXPECT_EQ(Moved(Evaluate()), std::vector<model::JobId>({10}));
}

TEST_F(ConsolidationTest, ADestinationWhoseLifeItWouldExtendCountsAgainstTheSaving) {
  options_.remaining = ConsolidationOptions::Remaining::kExpectedEnd;
  options_.min_ratio = 20;
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  Run(10, 1, 1, 0, /*end=*/kNow + 3 * 3600);
  // Node 2 would be done in 10 minutes: moving j10 there keeps it for 3h6m
  // more, and only the idle tails are saved: 100/h x (3h10m + 20m - 1m -
  // 3h16m) = 21.7, under 20 x 1.25 of checkpoint and restart.
  model::Job& soon = Run(20, 2, 4, 0, kNow + 600);
  soon.spec.is_protected = true;
  EXPECT_TRUE(Evaluate().actions.empty());
  // Had node 2 stayed for ten hours anyway, all of node 1's 3h10m is saved.
  state_.jobs.back().expected_end = At(kNow + 10 * 3600);
  EXPECT_EQ(Moved(Evaluate()), std::vector<model::JobId>({10}));
}

TEST_F(ConsolidationTest, ReservedNodesAndPoolMinimumsStay) {
  state_.nodes = {ReadyNode(1, 1, 8, 8), ReadyNode(2, 0, 8, 8)};
  Run(10, 1, 1, 0);  // reserved: releasing it saves nothing
  model::Job& big = Run(20, 2, 6, 0);
  big.spec.is_protected = true;
  EXPECT_TRUE(Evaluate().actions.empty());

  state_.jobs.clear();
  spec_.pools[0].min_nodes = 2;
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  Run(10, 1, 1, 0);
  Run(20, 2, 4, 0);
  EXPECT_TRUE(Evaluate().actions.empty());
}

// A reserved node is paid for whether or not it runs anything, so an idle
// one takes moved jobs as a partly used node does: an on-demand node whose
// jobs fit there is emptied. Idle nodes that idle release would give back
// (on-demand ones, or reserved ones when those may be released) do not.
TEST_F(ConsolidationTest, AnIdleReservedNodeTakesMovedJobs) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 1, 8, 8), ReadyNode(3, 0, 8, 8)};
  Run(10, 1, 3, 0);  // on-demand node 1: three GPUs of eight; node 2 (reserved) and node 3 (on-demand) idle
  const ScalingPlan plan = Evaluate();
  EXPECT_EQ(Drained(plan), std::vector<model::NodeId>({1}));
  EXPECT_EQ(Moved(plan), std::vector<model::JobId>({10}));
  ASSERT_EQ(plan.actions.size(), 2u);
  EXPECT_THAT(plan.actions[1].reason, HasSubstr("fit now on n2:"));

  EXPECT_TRUE(Evaluate(4, kNow, /*release_reserved=*/true).actions.empty());
  state_.nodes[1] = ReadyNode(2, 0, 8, 8);  // node 2 on-demand too: about to be released
  EXPECT_TRUE(Evaluate().actions.empty());
}

// Of the nodes with room, the fullest takes the job (best fit, as the
// scheduler places it), so an idle reserved node is the last resort and a
// partly used node is preferred.
TEST_F(ConsolidationTest, APartlyUsedNodeBeforeAnIdleReservedOne) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 1, 8, 8), ReadyNode(3, 1, 8, 8)};
  Run(10, 1, 2, 0);
  Run(20, 3, 4, 0);  // reserved node 3: four GPUs free; reserved node 2 idle
  const ScalingPlan plan = Evaluate();
  ASSERT_EQ(Moved(plan), std::vector<model::JobId>({10}));
  EXPECT_THAT(plan.actions[1].reason, HasSubstr("fit now on n3:"));
}

TEST_F(ConsolidationTest, AJobAcrossNodesIsNotMoved) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8), ReadyNode(3, 0, 8, 8)};
  model::Job j = testing::Pending(10, 2, 2);
  j.started = At(0);
  j.progress = kNow;
  testing::AddRunning(&state_, std::move(j), {{1, 1}, {2, 1}}, kNow + 3600);
  Run(20, 3, 2, 0);
  // Nodes 1 and 2 hold one worker each; only node 3 could be emptied, and
  // its job fits on node 1 -- so that is the one move.
  const ScalingPlan plan = Evaluate();
  EXPECT_EQ(Moved(plan), std::vector<model::JobId>({20}));
  EXPECT_EQ(Drained(plan), std::vector<model::NodeId>({3}));
}

// With `gangs`, a gang alone on its on-demand nodes moves whole onto idle
// reserved nodes, and all its nodes are drained.
class GangConsolidationTest : public ConsolidationTest {
 protected:
  void SetUp() override {
    ConsolidationTest::SetUp();
    options_.gangs = true;
    spec_ = testing::Spec({Pool("od", 8, Tier::kOnDemand, 100, 0, 10), Pool("res", 8, Tier::kReserved, 50, 0, 3)});
    // On-demand nodes 1 and 2; reserved nodes 3 and 4 idle, reserved node 5 full.
    state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8), ReadyNode(3, 1, 8, 8), ReadyNode(4, 1, 8, 8),
                    ReadyNode(5, 1, 8, 8)};
    Run(50, 5, 8, 0);
  }
  model::Job& Gang(model::JobId id, std::vector<model::NodeShare> shares, int gpus_per_worker = 8,
                   int64_t started = 0) {
    model::Job j = testing::Pending(id, gpus_per_worker, static_cast<int>(shares.size()));
    j.spec.name = StrCat("j", id);
    j.started = At(started);
    j.progress = static_cast<double>(kNow - started);
    j.saved = j.progress;
    testing::AddRunning(&state_, std::move(j), std::move(shares), kNow + 3600);
    return state_.jobs.back();
  }
};

TEST_F(GangConsolidationTest, AGangAloneOnItsNodesMovesOntoIdleReservedNodes) {
  Gang(10, {{1, 1}, {2, 1}});
  const ScalingPlan plan = Evaluate();
  EXPECT_EQ(Drained(plan), std::vector<model::NodeId>({1, 2}));
  EXPECT_EQ(Moved(plan), std::vector<model::JobId>({10}));
  ASSERT_EQ(plan.actions.size(), 3u);
  EXPECT_EQ(plan.actions[2].kind, ActionKind::kConsolidate);  // after both drains
  EXPECT_EQ(plan.actions[2].nodes, std::vector<model::NodeId>({1, 2}));
  EXPECT_THAT(plan.actions[2].reason, HasSubstr("gang j10 (2 x 8 GPUs) runs alone on n1, n2 for about 4h"));
  EXPECT_THAT(plan.actions[2].reason, HasSubstr("2 idle reserved nodes can hold it"));
  EXPECT_TRUE(leaving_.contains(1) && leaving_.contains(2));
  EXPECT_EQ(allowance_left_, 2);  // one node of the budget per node drained

  options_.gangs = false;  // off: a job across nodes is never moved
  EXPECT_TRUE(Evaluate().actions.empty());
}

TEST_F(GangConsolidationTest, OnlyWhenEveryWorkerHasAnIdleReservedNode) {
  Gang(10, {{1, 1}, {2, 1}});
  state_.nodes[3] = ReadyNode(4, 1, 8, 2);  // reserved node 4 partly used: one idle reserved node left
  EXPECT_TRUE(Evaluate().actions.empty());
}

TEST_F(GangConsolidationTest, NotWhenItSharesANodeOrMayNotMove) {
  Gang(10, {{1, 1}, {2, 1}}, /*gpus_per_worker=*/4);
  const size_t at = state_.jobs.size() - 1;
  Run(20, 2, 4, kNow - 600);  // node 2 also runs a young job
  EXPECT_TRUE(Evaluate().actions.empty());
  state_.jobs.pop_back();
  state_.nodes[1].free_gpus = 4;
  model::Job& gang = state_.jobs[at];
  gang.spec.is_protected = true;
  EXPECT_TRUE(Evaluate().actions.empty());
  gang.spec.is_protected = false;
  gang.started = At(kNow - 600);  // younger than min_run
  EXPECT_TRUE(Evaluate().actions.empty());
  gang.started = At(0);
  EXPECT_TRUE(Evaluate(/*allowance=*/1).actions.empty());  // the budget has one node, the gang two
  EXPECT_EQ(Moved(Evaluate()), std::vector<model::JobId>({10}));
}

TEST_F(GangConsolidationTest, WeighsTheSavingAgainstCheckpointAndRestart) {
  model::Job& gang = Gang(10, {{1, 1}, {2, 1}}, 8, kNow - 2400);  // 40 minutes old: about 40 more
  gang.spec.phases.load = Hours(1);  // reloading costs more than the 40 minutes saved
  EXPECT_TRUE(Evaluate().actions.empty());
  gang.spec.phases.load = Minutes(5);
  EXPECT_EQ(Moved(Evaluate()), std::vector<model::JobId>({10}));
}

TEST_F(ConsolidationTest, RemainingTimeIsTheJobsAgeUnlessToldToTrustExpectedEnd) {
  state_.nodes = {ReadyNode(1, 0, 8, 8)};
  const model::Job& j = Run(10, 1, 1, kNow - 7200, /*end=*/kNow + 60);
  const Consolidation by_age(options_, Minutes(10), false);
  EXPECT_EQ(by_age.Remaining(state_, j, At(kNow)), Hours(2));
  ConsolidationOptions o = options_;
  o.remaining = ConsolidationOptions::Remaining::kExpectedEnd;
  const Consolidation by_end(o, Minutes(10), false);
  EXPECT_EQ(by_end.Remaining(state_, j, At(kNow)), Seconds(60));
}

}  // namespace
}  // namespace tide::autoscale
