#include "autoscale/autoscaler.h"
#include "autoscale/coverage.h"
#include "autoscale/schedule/cron.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "core/rng.h"
#include "core/strings.h"
#include "model/state_index.h"
#include "testutil/builders.h"
#include "testutil/fake_metrics.h"

namespace tide::autoscale {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using model::Tier;
using testing::At;
using testing::BootingNode;
using testing::Pending;
using testing::Pool;
using testing::ReadyNode;
using testing::AddRunning;

AutoscalerOptions TideOptions() {
  AutoscalerOptions o;  // the defaults are tide's
  o.scale_up.release_lookahead = Seconds(0);
  return o;
}

std::vector<Action> Of(const ScalingPlan& plan, ActionKind kind) {
  std::vector<Action> out;
  for (const auto& a : plan.actions) {
    if (a.kind == kind) out.push_back(a);
  }
  return out;
}

int Bought(const ScalingPlan& plan, int pool = -1) {
  int n = 0;
  for (const auto& a : Of(plan, ActionKind::kScaleUp)) {
    if (pool < 0 || a.pool == pool) n += a.count;
  }
  return n;
}

class AutoscalerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_ = testing::Spec({Pool("p8", 8, Tier::kOnDemand, 100, 0, 10)});
    state_.spec = &spec_;
  }
  ScalingPlan RunOnce(const AutoscalerOptions& o, int64_t now) {
    auto as = Autoscaler::Make(o);
    EXPECT_TRUE(as.ok()) << as.status();
    auto plan = as->RunOnce(state_, At(now));
    EXPECT_TRUE(plan.ok()) << plan.status();
    return *plan;
  }
  model::ClusterSpec spec_;
  model::ClusterState state_;
};

TEST_F(AutoscalerTest, BuysOnlyWhenMoreThanThresholdJobsPend) {
  for (int i = 1; i <= 3; ++i) state_.jobs.push_back(Pending(i, 8, 1, /*submit=*/100));
  EXPECT_EQ(Bought(RunOnce(TideOptions(), 110)), 0);  // 3 pending, threshold 3, grace not over
  state_.jobs.push_back(Pending(4, 8, 1, 100));
  const ScalingPlan plan = RunOnce(TideOptions(), 110);
  EXPECT_EQ(Bought(plan), 4);
  EXPECT_THAT(Of(plan, ActionKind::kScaleUp)[0].reason, HasSubstr("4 GPU jobs pending (more than 3)"));
}

TEST_F(AutoscalerTest, GraceBuysForASmallQueueAndSaysWhenItWillLookAgain) {
  state_.jobs = {Pending(1, 8, 1, /*submit=*/100)};
  const ScalingPlan early = RunOnce(TideOptions(), 110);
  EXPECT_EQ(Bought(early), 0);
  EXPECT_EQ(early.next_wakeup, At(130));  // submit + 30 s grace
  const ScalingPlan late = RunOnce(TideOptions(), 130);
  EXPECT_EQ(Bought(late), 1);
  EXPECT_THAT(Of(late, ActionKind::kScaleUp)[0].reason, HasSubstr("has waited 30s"));
}

TEST_F(AutoscalerTest, ANodeOfAnUnknownPoolIsAnErrorWithOrWithoutAnIndex) {
  state_.nodes.push_back(ReadyNode(1, 0, 8, 8));
  state_.nodes.push_back(ReadyNode(2, 3, 8, 8));  // the spec has one pool
  auto as = Autoscaler::Make(TideOptions());
  ASSERT_TRUE(as.ok()) << as.status();
  EXPECT_THAT(as->RunOnce(state_, At(100)).status().message(), HasSubstr("has unknown pool index 3"));
  // An index that has read the node says so; the pass checks the nodes then.
  const model::StateIndex index = model::StateIndex::Build(state_);
  state_.index = &index;
  EXPECT_THAT(as->RunOnce(state_, At(100)).status().message(), HasSubstr("has unknown pool index 3"));
  state_.nodes.pop_back();
  const model::StateIndex fine = model::StateIndex::Build(state_);
  state_.index = &fine;
  EXPECT_TRUE(as->RunOnce(state_, At(100)).ok());
}

TEST_F(AutoscalerTest, PacksSmallJobsOntoFewNodes) {
  for (int i = 1; i <= 10; ++i) state_.jobs.push_back(Pending(i, 2, 1));  // 20 GPUs
  EXPECT_EQ(Bought(RunOnce(TideOptions(), 60)), 3);
}

TEST_F(AutoscalerTest, CountsBootingNodesSoNothingIsBoughtTwice) {
  for (int i = 1; i <= 6; ++i) state_.jobs.push_back(Pending(i, 8, 1));
  state_.nodes = {BootingNode(1, 0, 8, 200), BootingNode(2, 0, 8, 200), BootingNode(3, 0, 8, 200),
                  BootingNode(4, 0, 8, 200)};
  const ScalingPlan plan = RunOnce(TideOptions(), 60);
  EXPECT_EQ(Bought(plan), 2);  // 6 needed, 4 on the way
  EXPECT_EQ(plan.covered.size(), 4u);
  state_.nodes.push_back(BootingNode(5, 0, 8, 200));
  state_.nodes.push_back(BootingNode(6, 0, 8, 200));
  EXPECT_EQ(Bought(RunOnce(TideOptions(), 70)), 0);
}

TEST_F(AutoscalerTest, UsesFreeCapacityOfReadyNodesForPartOfAGang) {
  state_.nodes = {ReadyNode(1, 0, 8, 8)};
  state_.jobs = {Pending(1, 8, 3)};  // 3 nodes' worth; one is idle already
  EXPECT_EQ(Bought(RunOnce(TideOptions(), 60)), 2);
}

TEST_F(AutoscalerTest, RespectsMaxAndNeverBuysHalfAGang) {
  spec_.pools[0].max_nodes = 4;
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  AddRunning(&state_, Pending(100, 8, 1), {{1, 1}}, 99999);
  AddRunning(&state_, Pending(101, 8, 1), {{2, 1}}, 99999);
  state_.jobs.push_back(Pending(1, 8, 4));  // needs 4 nodes; there is room for 2 more
  for (int i = 2; i <= 5; ++i) state_.jobs.push_back(Pending(i, 8, 1, 1));
  const ScalingPlan plan = RunOnce(TideOptions(), 60);
  EXPECT_EQ(Bought(plan), 2);  // two single-node jobs, not half of job 1
  // One action for the jobs that wait for the same pools: job 1 and the two
  // single-node jobs left over, in queue order.
  const auto at_max = Of(plan, ActionKind::kAtMax);
  ASSERT_EQ(at_max.size(), 1u);
  ASSERT_EQ(at_max[0].jobs.size(), 3u);
  EXPECT_EQ(at_max[0].jobs[0], 1);
  EXPECT_THAT(at_max[0].reason, HasSubstr("3 jobs wait: no pool has room for them (p8 4/4): "));
  EXPECT_THAT(at_max[0].reason, HasSubstr("j1 (4x8 GPUs), "));
  EXPECT_EQ(at_max[0].cause, "no pool has room for it (p8 4/4)");
}

TEST_F(AutoscalerTest, OneJobAtMaxIsNamedInFullAndAManyNamesOnlyTheFirstEight) {
  spec_.pools[0].max_nodes = 1;
  state_.nodes = {ReadyNode(1, 0, 8, 8)};
  AddRunning(&state_, Pending(100, 8, 1), {{1, 1}}, 99999);
  state_.jobs.push_back(Pending(1, 8, 1));
  ScalingPlan plan = RunOnce(TideOptions(), 60);
  auto at_max = Of(plan, ActionKind::kAtMax);
  ASSERT_EQ(at_max.size(), 1u);
  EXPECT_EQ(at_max[0].reason, "job j1 (1x8 GPUs) waits: no pool has room for it (p8 1/1)");
  for (int i = 2; i <= 12; ++i) state_.jobs.push_back(Pending(i, 8, 1, i));
  plan = RunOnce(TideOptions(), 60);
  at_max = Of(plan, ActionKind::kAtMax);
  ASSERT_EQ(at_max.size(), 1u);
  EXPECT_EQ(at_max[0].jobs.size(), 12u);
  EXPECT_THAT(at_max[0].reason, HasSubstr("12 jobs wait: no pool has room for them (p8 1/1): j1 (1x8 GPUs), "));
  EXPECT_THAT(at_max[0].reason, HasSubstr("j8 (1x8 GPUs) and 4 more"));
  EXPECT_THAT(at_max[0].reason, Not(HasSubstr("j9 ")));
}

TEST_F(AutoscalerTest, ClusterAutoscalerStylePackingMayBuyPartOfAGang) {
  spec_.pools[0].max_nodes = 4;
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  AddRunning(&state_, Pending(100, 8, 1), {{1, 1}}, 99999);
  AddRunning(&state_, Pending(101, 8, 1), {{2, 1}}, 99999);
  for (int i = 1; i <= 4; ++i) state_.jobs.push_back(Pending(i, 8, 4));  // each fits only once both finish
  AutoscalerOptions o = TideOptions();
  o.scale_up.gang_aware = false;
  EXPECT_EQ(Bought(RunOnce(o, 60)), 2);  // half a gang: the behaviour tide avoids
  EXPECT_EQ(Bought(RunOnce(TideOptions(), 60)), 0);
}

TEST_F(AutoscalerTest, BuysOnlyTheGpuModelsAJobAllows) {
  // A cheaper T4 pool beside the A100 one: jobs restricted to a model (the
  // openb trace's gpu_spec) are bought for on that model's pool only.
  spec_.pools.push_back(Pool("t4", 8, Tier::kOnDemand, 20, 0, 10));
  spec_.pools[1].type.gpu_model = "T4";
  for (int i = 1; i <= 4; ++i) {
    state_.jobs.push_back(Pending(i, 8, 1));
    state_.jobs.back().spec.gpu_models = {spec_.pools[0].type.gpu_model};
  }
  const ScalingPlan plan = RunOnce(TideOptions(), 60);
  EXPECT_EQ(Bought(plan, 0), 4);
  EXPECT_EQ(Bought(plan, 1), 0);
}

TEST_F(AutoscalerTest, ReportsJobsThatFitNoPool) {
  state_.jobs = {Pending(1, 16, 1), Pending(2, 8, 11)};  // a 16-GPU worker; 11 nodes > max 10
  for (int i = 3; i <= 5; ++i) state_.jobs.push_back(Pending(i, 1, 1));
  const ScalingPlan plan = RunOnce(TideOptions(), 60);
  const auto bad = Of(plan, ActionKind::kUnschedulable);
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_THAT(bad[0].reason, HasSubstr("needs 16 GPUs per worker; the largest node has 8"));
  EXPECT_THAT(bad[1].reason, HasSubstr("all pools together hold at most 10 such workers"));
  EXPECT_EQ(Bought(plan), 1);  // the three small jobs still get a node
}

TEST_F(AutoscalerTest, ReservedPoolsAreNeverBoughtOrReleased) {
  spec_ = testing::Spec({Pool("res", 8, Tier::kReserved, 50, 2, 2), Pool("od", 8, Tier::kOnDemand, 100, 0, 10)});
  state_.nodes = {ReadyNode(1, 0, 8, 8, 0), ReadyNode(2, 0, 8, 8)};
  AddRunning(&state_, Pending(100, 8, 1), {{2, 1}}, 99999);
  for (int i = 1; i <= 5; ++i) state_.jobs.push_back(Pending(i, 8, 1));
  const ScalingPlan plan = RunOnce(TideOptions(), 7200);
  EXPECT_EQ(Bought(plan, 0), 0);
  EXPECT_EQ(Bought(plan, 1), 4);  // one job fits the idle reserved node
  EXPECT_TRUE(Of(plan, ActionKind::kRelease).empty());
}

TEST_F(AutoscalerTest, DoesNotBuyForWorkThatRunningJobsFreeBeforeABoot) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  AddRunning(&state_, Pending(100, 8, 1), {{1, 1}}, /*end=*/100);    // frees in 40 s
  AddRunning(&state_, Pending(101, 8, 1), {{2, 1}}, /*end=*/99999);  // not soon
  state_.jobs.push_back(Pending(1, 8, 1, 0));
  state_.jobs.push_back(Pending(2, 8, 1, 0));
  AutoscalerOptions o = TideOptions();
  o.scale_up.trigger.pending_grace = Seconds(0);
  EXPECT_EQ(Bought(RunOnce(o, 60)), 2);
  o.scale_up.release_lookahead = Seconds(180);
  EXPECT_EQ(Bought(RunOnce(o, 60)), 1);
  o.scale_up.release_lookahead.reset();  // auto: the pool's expected boot, 180 s here
  EXPECT_EQ(Bought(RunOnce(o, 60)), 1);
}

TEST_F(AutoscalerTest, ChoosesTheCheaperPoolPerUsedGpu) {
  spec_ = testing::Spec({Pool("big", 8, Tier::kOnDemand, 100, 0, 10), Pool("small", 2, Tier::kOnDemand, 27, 0, 10)});
  state_.jobs = {Pending(1, 1, 1)};
  AutoscalerOptions o = TideOptions();
  o.scale_up.trigger.pending_grace = Seconds(0);
  // One 1-GPU job: a 2-GPU node at 27/h beats an 8-GPU node at 100/h.
  EXPECT_EQ(Bought(RunOnce(o, 0), 1), 1);
  // Eight: one 8-GPU node (12.5 per GPU-hour) beats four small ones (13.5).
  for (int i = 2; i <= 8; ++i) state_.jobs.push_back(Pending(i, 1, 1));
  const ScalingPlan plan = RunOnce(o, 0);
  EXPECT_EQ(Bought(plan, 0), 1);
  EXPECT_EQ(Bought(plan, 1), 0);
  EXPECT_THAT(Of(plan, ActionKind::kScaleUp)[0].reason, HasSubstr("least-cost"));
}

TEST_F(AutoscalerTest, EgressDecidesBetweenRegions) {
  spec_ = testing::Spec({Pool("north", 8, Tier::kOnDemand, 100, 0, 10), Pool("west", 8, Tier::kOnDemand, 85, 0, 10)});
  spec_.pools[0].region = "north";
  spec_.pools[1].region = "west";
  spec_.regions = {{"north", 0.8}, {"west", 0.8}};
  model::Job j = Pending(1, 8, 1, 0, /*runtime=*/2 * 3600);
  j.spec.data_region = "north";
  j.spec.data_gb = 200;
  j.spec.output_gb = 20;
  state_.jobs = {j};
  EXPECT_DOUBLE_EQ(spec_.EgressCost(j.spec, 0), 0);
  EXPECT_DOUBLE_EQ(spec_.EgressCost(j.spec, 1), 200 * 0.8 + 20 * 0.8);
  AutoscalerOptions o = TideOptions();
  o.scale_up.trigger.pending_grace = Seconds(0);
  // West saves 15/h on compute but moving the data costs 176 over two hours.
  EXPECT_EQ(Bought(RunOnce(o, 0), 0), 1);
  // Blind to egress, the cheaper compute wins.
  o.scale_up.egress_aware = false;
  EXPECT_EQ(Bought(RunOnce(o, 0), 1), 1);
  // A small data set does not pay for the dearer region: 10 GB costs 8, less than 30 of compute.
  o.scale_up.egress_aware = true;
  state_.jobs[0].spec.data_gb = 10;
  state_.jobs[0].spec.output_gb = 0;
  EXPECT_EQ(Bought(RunOnce(o, 0), 1), 1);
}

TEST_F(AutoscalerTest, BuysOnlyFromTheListedPools) {
  spec_ = testing::Spec({Pool("cheap", 8, Tier::kOnDemand, 50, 0, 10), Pool("dear", 8, Tier::kOnDemand, 100, 0, 10)});
  state_.jobs = {Pending(1, 8, 1)};
  AutoscalerOptions o = TideOptions();
  o.scale_up.trigger.pending_grace = Seconds(0);
  EXPECT_EQ(Bought(RunOnce(o, 0), 0), 1);
  o.scale_up.buy_from = {1};
  const ScalingPlan plan = RunOnce(o, 0);
  EXPECT_EQ(Bought(plan, 0), 0);
  EXPECT_EQ(Bought(plan, 1), 1);
}

// A preemptible (low-priority) pending job of one 8-GPU worker.
model::Job PendingLow(model::JobId id, int64_t submit = 0) {
  model::Job j = Pending(id, 8, 1, submit, 3600, /*low*/ 2);
  j.spec.preemptible = true;
  return j;
}

class TierTest : public AutoscalerTest {
 protected:
  void SetUp() override {
    spec_ = testing::Spec({Pool("od", 8, Tier::kOnDemand, 100, 0, 20), Pool("spot", 8, Tier::kSpot, 30, 0, 20)});
    state_.spec = &spec_;
    o_.scale_up.trigger.pending_grace = Seconds(0);
    o_.scale_up.trigger.pending_threshold = 0;
  }
  void Live(int od, int spot) {
    state_.nodes.clear();
    model::NodeId id = 100;
    for (int i = 0; i < od; ++i) AddBusy(id++, 0);
    for (int i = 0; i < spot; ++i) AddBusy(id++, 1);
  }
  void AddBusy(model::NodeId id, int pool) {
    state_.nodes.push_back(ReadyNode(id, pool, 8, 0));
  }
  AutoscalerOptions o_ = TideOptions();
};

TEST_F(TierTest, HighPriorityWorkNeverBuysSpot) {
  state_.jobs = {Pending(1, 8, 1, 0, 3600, /*high*/ 0), Pending(2, 8, 1, 0, 3600, /*normal*/ 1)};
  const ScalingPlan plan = RunOnce(o_, 0);
  EXPECT_EQ(Bought(plan, 0), 2);
  EXPECT_EQ(Bought(plan, 1), 0);
}

TEST_F(TierTest, ElasticCapacityFollowsTheOnDemandSpotRatio) {
  state_.jobs = {PendingLow(1)};
  Live(/*od=*/7, /*spot=*/0);  // spot below its 30%: the preemptible job goes to spot
  ScalingPlan plan = RunOnce(o_, 0);
  EXPECT_EQ(Bought(plan, 1), 1);
  EXPECT_THAT(Of(plan, ActionKind::kScaleUp)[0].reason, HasSubstr("tier-ratio"));
  Live(/*od=*/2, /*spot=*/3);  // spot above its share: on-demand, though dearer
  state_.jobs = {PendingLow(1)};
  plan = RunOnce(o_, 0);
  EXPECT_EQ(Bought(plan, 0), 1);
  EXPECT_EQ(Bought(plan, 1), 0);
  o_.tiers.spot_share = 1;  // spot-first
  EXPECT_EQ(Bought(RunOnce(o_, 0), 1), 1);
  o_.tiers.spot_share = 0;  // never spot
  EXPECT_EQ(Bought(RunOnce(o_, 0), 0), 1);
}

TEST_F(TierTest, SpotStockOutWaitsThenFallsBackToOnDemand) {
  Live(/*od=*/7, /*spot=*/0);  // spot is below its share: the job is spot's
  state_.jobs = {PendingLow(1)};
  state_.pools.resize(2);
  state_.pools[1].unavailable_since = At(0);
  state_.pools[1].last_failure = At(0);
  // Within the retry time spot is not asked again, and the job waits for it.
  ScalingPlan plan = RunOnce(o_, 30);
  EXPECT_EQ(Bought(plan), 0);
  ASSERT_FALSE(Of(plan, ActionKind::kNote).empty());
  EXPECT_THAT(Of(plan, ActionKind::kNote)[0].reason, HasSubstr("waits for spot capacity"));
  EXPECT_LE(plan.next_wakeup, At(60));  // the retry
  // After the retry time, spot is asked again.
  plan = RunOnce(o_, 90);
  EXPECT_EQ(Bought(plan, 1), 1);
  EXPECT_EQ(Bought(plan, 0), 0);
  // Still none after the fallback time (5 minutes): on-demand.
  state_.pools[1].last_failure = At(290);
  plan = RunOnce(o_, 301);
  EXPECT_EQ(Bought(plan, 0), 1);
  EXPECT_EQ(Bought(plan, 1), 0);
}

TEST_F(AutoscalerTest, OnePoolPerPassWhenAsked) {
  spec_ = testing::Spec({Pool("a", 8, Tier::kOnDemand, 100, 0, 1), Pool("b", 8, Tier::kOnDemand, 100, 0, 10)});
  for (int i = 1; i <= 3; ++i) state_.jobs.push_back(Pending(i, 8, 1));
  AutoscalerOptions o = TideOptions();
  o.scale_up.trigger.pending_threshold = 0;
  EXPECT_EQ(Bought(RunOnce(o, 0)), 3);
  o.scale_up.max_pools_per_pass = 1;
  EXPECT_EQ(Bought(RunOnce(o, 0)), 1);  // pool a (declared first), one node
}

TEST_F(AutoscalerTest, IdleNodesAreKeptForPendingJobsPlannedOntoThem) {
  state_.nodes = {ReadyNode(1, 0, 8, 8, /*idle_since=*/0)};
  state_.jobs = {Pending(1, 8, 2, 0)};  // pending: needs node 1 plus one more
  const ScalingPlan plan = RunOnce(TideOptions(), 3600);
  EXPECT_TRUE(Of(plan, ActionKind::kRelease).empty());
  EXPECT_EQ(Bought(plan), 1);
}

TEST_F(AutoscalerTest, RejectsBadOptions) {
  AutoscalerOptions o;
  o.scale_up.expanders = {"cheapest"};
  auto as = Autoscaler::Make(o);
  ASSERT_FALSE(as.ok());
  EXPECT_THAT(std::string(Message(as.status())), HasSubstr("unknown expander 'cheapest'"));
}

// A scheduled cap can put a pool's max below its live nodes. A waiting job
// that GPUs freed in the same pass (an idle elastic job shrunk) can serve is
// still served from them: the scale-up's rounds once asked the estimator for
// a negative number of new nodes, served nothing, and chose the same pool
// again for ever.
TEST_F(AutoscalerTest, ACapBelowTheLiveNodesStillLetsFreedGpusServeAWaitingJob) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8), ReadyNode(3, 0, 8, 8)};
  model::Job elastic = Pending(1, 1, 8, 0, 36000);
  elastic.spec.min_workers = 1;
  elastic.spec.max_workers = 8;
  elastic.spec.async = true;
  elastic.started = At(0);
  AddRunning(&state_, std::move(elastic), {{1, 8}}, 36000);
  AddRunning(&state_, Pending(2, 8, 1, 0, 36000), {{2, 1}}, 36000);
  AddRunning(&state_, Pending(3, 8, 1, 0, 36000), {{3, 1}}, 36000);
  state_.jobs.push_back(Pending(4, 4, 1, /*submit=*/0));
  testing::FakeMetrics metrics;
  metrics.Set(1, {{At(0), 0.15}});  // below 20%, not idle enough to reclaim: shrinks to 4 workers
  state_.metrics = &metrics;
  AutoscalerOptions o = TideOptions();
  CronRule cap;
  cap.name = "cap";
  cap.pools = {0};
  cap.from = 0;
  cap.to = 23 * 60;
  cap.max_nodes = 1;
  cap.drain = false;
  o.schedule.rules = {cap};
  o.preemption.before_buying = false;
  const ScalingPlan plan = RunOnce(o, 3600);
  ASSERT_EQ(Of(plan, ActionKind::kResize).size(), 1u);
  EXPECT_EQ(Of(plan, ActionKind::kResize)[0].resize.workers, 4);
  EXPECT_EQ(Bought(plan), 0);
  bool covered = false;
  for (const auto& c : plan.covered) covered |= c.job == 4;
  EXPECT_TRUE(covered) << "the waiting job rides on the GPUs the shrink gave back";
}

// Everything a plan says, as text, so that two plans compare whole.
std::string Describe(const ScalingPlan& plan) {
  std::string s;
  auto shares = [](const auto& v) {
    std::string t;
    for (const auto& sh : v) StrAppend(&t, sh.node, ":", sh.workers, " ");
    return t;
  };
  for (const auto& a : plan.actions) {
    StrAppend(&s, ActionKindName(a.kind), " pool ", a.pool, " count ", a.count, " nodes ", StrJoin(a.nodes, ","),
              " jobs ", StrJoin(a.jobs, ","), " cancel ", a.cancel, " forecast ", a.forecast, " bottleneck ",
              a.bottleneck, " resize ", a.resize.old_workers, "->", a.resize.workers, " +", shares(a.resize.add), " -",
              shares(a.resize.remove), " [", a.reason, "] [", a.cause, "]\n");
  }
  for (const auto& c : plan.covered) StrAppend(&s, "covered ", c.job, " ", shares(c.shares), "\n");
  StrAppend(&s, "wake ", FormatTimestamp(plan.next_wakeup), "\n");
  return s;
}

// A driver's state index and ordered metrics (model/state_index.h,
// MetricsView::VisitByDue) change how a pass finds what it reads, never what
// it decides: on random clusters, with utilization series for the running
// jobs and several option sets, the plans are the same whole.
//
// An autoscaler that ran many passes before, on other clusters (whose what-if
// and lists it keeps the memory of), decides as a new one.
TEST(AutoscalerIndexTest, SameDecisionsWithAndWithoutAnIndex) {
  const model::ClusterSpec spec = testing::RandomSpec();
  int actions = 0, forecasts = 0, consolidations = 0, evacuations = 0;
  std::vector<Autoscaler> kept;  // one per variant, through every seed
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    model::ClusterState state = testing::RandomState(&spec, seed);
    // Half the clusters have no job waiting: the passes the simulator runs most.
    if (seed % 2 == 0) std::erase_if(state.jobs, [](const model::Job& j) { return j.state == model::JobState::kPending; });
    Rng rng(seed * 7919);
    testing::FakeMetrics metrics;
    for (const auto& j : state.jobs) {
      if (j.state != model::JobState::kRunning) continue;
      std::vector<std::pair<Timestamp, double>> series;
      for (int64_t t = 3600 - rng.UniformInt(600, 4000); t < 3600 + 3600; t += rng.UniformInt(60, 1200)) {
        const int64_t level = rng.UniformInt(0, 3);
        series.emplace_back(At(t), level == 0 ? 0.02 : level == 1 ? 0.5 : 0.95);
      }
      metrics.Set(j.id, std::move(series));
    }
    state.metrics = &metrics;
    // A week of submissions, so that the forecast has history to act on: on
    // some clusters it covers the GPUs free, on others not.
    for (int d = 7; d >= 1; --d) {
      const int64_t from = 3600 - d * int64_t{86400};
      for (int64_t k = rng.UniformInt(d == 7 ? 1 : 0, 3); k > 0; --k) {
        state.arrivals.push_back({At(from + (d == 7 && k == 1 ? 0 : rng.UniformInt(0, 120))),
                                  static_cast<int>(rng.UniformInt(1, 40))});
      }
    }
    std::sort(state.arrivals.begin(), state.arrivals.end(),
              [](const model::ClusterState::Arrival& a, const model::ClusterState::Arrival& b) { return a.at < b.at; });
    if (seed % 3 == 0) model::SetArrivalsBefore(&state.arrivals);  // as the simulator counts them
    for (int variant = 0; variant < 6; ++variant) {
      AutoscalerOptions o;
      o.forecast.enabled = variant % 2 == 1;
      o.preemption.before_buying = variant == 2;
      o.consolidation.enabled = variant >= 3;
      o.budget.max_nodes = variant == 1 || variant == 5 ? 3 : 0;
      o.scale_up.hedge.nodes = variant < 2 ? variant + 1 : 0;
      if (variant >= 4) {
        // Consolidation eager enough to act on most clusters with no job waiting.
        o.consolidation.quiet_for = Duration{0};
        o.consolidation.min_run = Seconds(variant == 4 ? 0 : 1800);
        o.consolidation.min_ratio = 0.1;
        o.consolidation.max_unsaved = Seconds(variant == 5 ? 1200 : 0);
        o.consolidation.headroom_gpus = variant == 5 ? 4 : 0;
        o.consolidation.remaining = variant == 5 ? ConsolidationOptions::Remaining::kExpectedEnd
                                                 : ConsolidationOptions::Remaining::kAge;
        o.scale_down.idle.release_reserved = variant == 5;
      }
      if (variant >= 2) {
        o.scale_up.release_lookahead = Seconds(600);
        CronRule cap;
        cap.name = "cap";
        cap.pools = {1, 3};
        cap.from = 0;
        cap.to = 23 * 60;
        cap.max_nodes = 2;
        CronRule floor = cap;
        floor.name = "floor";
        floor.pools = {2};
        floor.max_nodes.reset();
        floor.min_nodes = 5;
        o.schedule.rules = {cap, floor};
      }
      auto as = Autoscaler::Make(o);
      ASSERT_TRUE(as.ok()) << as.status();
      state.index = nullptr;
      metrics.set_ordered(false);
      const auto scanned = as->RunOnce(state, At(3600));
      ASSERT_TRUE(scanned.ok()) << scanned.status();
      // With consolidation's view kept, as the simulator keeps it when consolidation is on.
      const model::StateIndex index = model::StateIndex::Build(state, /*placement=*/o.consolidation.enabled);
      state.index = &index;
      metrics.set_ordered(true);
      const auto indexed = as->RunOnce(state, At(3600));
      ASSERT_TRUE(indexed.ok()) << indexed.status();
      ASSERT_EQ(Describe(*indexed), Describe(*scanned)) << "seed " << seed << ", variant " << variant;
      if (kept.size() <= static_cast<size_t>(variant)) kept.push_back(*std::move(as));
      const auto again = kept[variant].RunOnce(state, At(3600));
      ASSERT_TRUE(again.ok()) << again.status();
      ASSERT_EQ(Describe(*again), Describe(*scanned)) << "seed " << seed << ", variant " << variant << ", kept autoscaler";
      actions += static_cast<int>(scanned->actions.size());
      for (const auto& a : scanned->actions) {
        forecasts += a.forecast;
        consolidations += a.kind == ActionKind::kConsolidate;
        evacuations += a.kind == ActionKind::kEvacuate && o.consolidation.enabled;
      }
    }
  }
  EXPECT_GT(actions, 1000);  // the random clusters give the passes plenty to do
  EXPECT_GT(forecasts, 20);
  EXPECT_GT(consolidations, 30);  // consolidation's view in the index is read and acted on
  EXPECT_GT(evacuations, 30);     // so is its list of the jobs on a node under spot notice
}

// The GPUs free in a sparse what-if, added up without building it (as the
// forecast reads them), are what building it gives: on random clusters, with
// nodes and jobs earlier steps took, nodes a pre-warm buys and several
// release lookaheads.
TEST(AutoscalerIndexTest, SparseWhatIfFreeIsWhatBuildingItGives) {
  const model::ClusterSpec spec = testing::RandomSpec();
  int given_back = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    model::ClusterState state = testing::RandomState(&spec, seed);
    // With no job waiting, coverage leaves the what-if unbuilt.
    std::erase_if(state.jobs, [](const model::Job& j) { return j.state == model::JobState::kPending; });
    const model::StateIndex index = model::StateIndex::Build(state);
    state.index = &index;
    Rng rng(seed * 31);
    PassContext ctx(state, At(3600));
    IndexState(&ctx);
    ScalingPlan plan;
    ScheduledCapacity(ScheduleOptions{}).ApplyLimits(&ctx, &plan);
    for (const auto& n : state.nodes) {
      if (rng.Bernoulli(0.15)) ctx.leaving.insert(n.id);
    }
    for (const auto& j : state.jobs) {
      if (rng.Bernoulli(0.15)) ctx.touched.insert(j.id);
    }
    int64_t templates = 0;
    for (size_t p = 0; p < spec.pools.size(); ++p) {
      ctx.extra_nodes[p] = static_cast<int>(rng.UniformInt(0, 2));
      templates += int64_t{ctx.extra_nodes[p]} * spec.pools[p].type.gpus;
    }
    ScaleUpOptions o;
    o.release_lookahead = Seconds(rng.UniformInt(0, 3) * 600);
    BuildCoverage(o, &ctx, &plan);
    ASSERT_TRUE(ctx.sparse());
    ASSERT_FALSE(ctx.HasSnap());
    const int64_t added = SparseWhatIfFree(ctx);
    ASSERT_EQ(added, ctx.Snap().total_free()) << "seed " << seed;
    given_back += added > ctx.SparseFreeNow() + templates;
  }
  EXPECT_GT(given_back, 50);  // most clusters have jobs that give GPUs back
}

}  // namespace
}  // namespace tide::autoscale
