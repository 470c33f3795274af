#include "sim/simulator.h"

#include "core/strings.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/builders.h"
#include "testutil/vector_trace.h"

namespace tide::sim {
namespace {

using ::testing::HasSubstr;
using model::Tier;
using testing::JobSpecOf;
using testing::kT0;
using testing::Pool;
using testing::VectorTrace;

class SimulatorTest : public ::testing::Test {
 protected:
  // One elastic pool of 8-GPU nodes at 36/h (0.01 a second), booting in 120 s.
  model::ClusterSpec spec_ = testing::Spec({Pool("od", 8, Tier::kOnDemand, 36, 0, 10, /*boot=*/120)});

  SimOutput Simulate(const std::string& policy_name, std::vector<model::JobSpec> jobs,
                     autoscale::PolicyDefaults defaults = {}, uint64_t seed = 1, bool every_tick = false,
                     bool timeline = false) {
    auto policy = autoscale::MakePolicy(policy_name, defaults, spec_, autoscale::DemandStats{16, 8});
    EXPECT_TRUE(policy.ok()) << policy.status();
    spec_for_run_ = policy->ApplyTo(spec_);
    VectorTrace trace(std::move(jobs), kT0);
    SimOptions o;
    o.seed = seed;
    o.record_decisions = true;
    o.every_tick = every_tick;
    o.record_timeline = timeline;
    o.check_index = true;  // the state index must match a fresh build before every decision
    Simulator sim(&spec_for_run_, *policy, o, &trace);
    auto out = sim.Run();
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : SimOutput{};
  }

  // `jobs` under tide with `tweak`, without consolidation and with it; and
  // the decisions of the second run, one per line.
  struct WithAndWithout {
    SimOutput off, on;
    std::string log;
  };
  WithAndWithout SimulateConsolidation(std::vector<model::JobSpec> jobs,
                                       const std::function<void(autoscale::AutoscalerOptions*)>& tweak) {
    autoscale::PolicyDefaults defaults;
    // The seed's rule: no spare nodes, so the node counts below are exact.
    autoscale::AutoscalerOptions o = defaults.seed;
    tweak(&o);
    o.consolidation.enabled = false;
    autoscale::AutoscalerOptions on = o;
    on.consolidation.enabled = true;
    defaults.variants = {{"tide-off", o}, {"tide-consolidate", on}};
    WithAndWithout r{Simulate("tide-off", jobs, defaults), Simulate("tide-consolidate", jobs, defaults), ""};
    for (const auto& d : r.on.decisions) r.log += d + "\n";
    return r;
  }

  model::ClusterSpec spec_for_run_;
};

TEST_F(SimulatorTest, FixedClusterQueuesAndBillsTheWholeWindow) {
  const SimOutput out = Simulate("fixed:1", {JobSpecOf("a", 0, 8, 1, 3600), JobSpecOf("b", 0, 8, 1, 1800)});
  const PolicyResult& r = out.result;
  EXPECT_EQ(r.jobs_completed, 2);
  EXPECT_EQ(r.wait_s.max, 3600);  // b waits for a
  EXPECT_EQ(r.horizon, kT0 + Seconds(5400));
  EXPECT_DOUBLE_EQ(r.cost.total, 54.0);
  EXPECT_DOUBLE_EQ(r.cost.gpu_hours_paid, 12.0);
  EXPECT_DOUBLE_EQ(r.gpu_hours_busy, 12.0);
  EXPECT_DOUBLE_EQ(r.utilization, 1.0);
  EXPECT_EQ(r.nodes_bought, 1);  // the fixed node, there from the start
}

TEST_F(SimulatorTest, ElasticBuysOnTheScanAfterArrivalAndReleasesWhenIdle) {
  const SimOutput out = Simulate("reactive", {JobSpecOf("a", 5, 8, 1, 600), JobSpecOf("b", 3000, 8, 1, 100)});
  const PolicyResult& r = out.result;
  // a arrives at 5, the 10 s scan buys at 10, the node joins at 130.
  EXPECT_EQ(r.wait_s.max, 125);
  EXPECT_EQ(r.jct_s.p50, 220);  // b arrives on a tick: bought at 3000, starts 3120, ends 3220
  EXPECT_EQ(r.nodes_bought, 2);
  EXPECT_EQ(r.nodes_released, 1);  // a's node, idle from 730, before b arrives
  // Billed from each request to its release, or to the end of the last job.
  EXPECT_DOUBLE_EQ(r.cost.total, 0.01 * ((1330 - 10) + (3220 - 3000)));
  ASSERT_GE(out.decisions.size(), 4u);
  EXPECT_THAT(out.decisions[0], HasSubstr("2026-01-05T00:00:10Z reactive scale-up od +1"));
  EXPECT_THAT(out.decisions[1], HasSubstr("00:02:10Z reactive start a (1x8 GPUs) on od-1:1: waited 2m5s"));
  EXPECT_THAT(out.decisions[2], HasSubstr("00:22:10Z reactive release od -1 [od-1]: 1 node idle for 10m"));
  EXPECT_THAT(out.decisions[3], HasSubstr("00:50:00Z reactive scale-up od +1"));
}

TEST_F(SimulatorTest, TimelineFollowsDemandCapacityAndCost) {
  const std::vector<model::JobSpec> jobs = {JobSpecOf("a", 5, 8, 1, 600), JobSpecOf("b", 3000, 8, 1, 100)};
  const SimOutput out = Simulate("reactive", jobs, {}, 1, false, /*timeline=*/true);
  ASSERT_TRUE(out.timeline.has_value());
  const model::Timeline& t = *out.timeline;
  EXPECT_EQ(t.start, kT0);
  EXPECT_EQ(t.step, Seconds(60));
  EXPECT_EQ(t.buckets, 54);  // to the horizon at 3220 s
  auto at = [&](const char* name, size_t bucket) {
    const auto* s = t.Find(name);
    EXPECT_NE(s, nullptr) << name;
    return s && bucket < s->size() ? (*s)[bucket] : -1.0;
  };
  // a waits from 5 s; the node, bought at 10 s, joins at 130 s and runs it.
  EXPECT_DOUBLE_EQ(at("demand_gpus", 0), 8.0 * 55 / 60);
  EXPECT_DOUBLE_EQ(at("pending_jobs", 1), 1);
  EXPECT_DOUBLE_EQ(at("pending_jobs/normal", 1), 1);
  EXPECT_DOUBLE_EQ(at("capacity_gpus/on-demand", 0), 8.0 * 50 / 60);
  EXPECT_DOUBLE_EQ(at("capacity_gpus/on-demand", 2), 8);
  EXPECT_DOUBLE_EQ(at("running_gpus", 2), 8.0 * 50 / 60);
  EXPECT_DOUBLE_EQ(at("demand_gpus", 5), 8);
  EXPECT_DOUBLE_EQ(at("capacity_gpus/spot", 5), 0);
  // Cost accrues at 36/h from the request; the last bucket ends at the bill.
  EXPECT_NEAR(at("cost/on-demand", 0), 0.5, 1e-9);
  EXPECT_NEAR(at("cost/on-demand", 53), out.result.cost.total, 1e-9);
  EXPECT_DOUBLE_EQ(at("spot_interruptions", 53), 0);
  // Waits: a 125 s, b 120 s.
  ASSERT_FALSE(out.wait_quantiles.empty());
  EXPECT_EQ(out.wait_quantiles[0].first, "all");
  ASSERT_EQ(out.wait_quantiles[0].second.size(), 101u);
  EXPECT_EQ(out.wait_quantiles[0].second[0], 120);
  EXPECT_EQ(out.wait_quantiles[0].second[50], 120);
  EXPECT_EQ(out.wait_quantiles[0].second[100], 125);
  // Recording changes nothing else.
  const SimOutput plain = Simulate("reactive", jobs);
  EXPECT_EQ(plain.decisions, out.decisions);
  EXPECT_EQ(plain.result.cost.total, out.result.cost.total);
  EXPECT_FALSE(plain.timeline.has_value());
}

TEST_F(SimulatorTest, TideSeedWaitsForItsThresholdOrGrace) {
  const SimOutput out = Simulate("tide-seed", {JobSpecOf("a", 0, 8, 1, 600), JobSpecOf("b", 0, 8, 1, 600)});
  // Two jobs (not more than 3): bought when the 30 s grace ends.
  EXPECT_THAT(out.decisions[0], HasSubstr("00:00:30Z tide-seed scale-up od +2"));
  EXPECT_EQ(out.result.wait_s.max, 150);
}

TEST_F(SimulatorTest, TideBuysAsSoonAsAJobWaitsWithSpares) {
  const SimOutput out = Simulate("tide", {JobSpecOf("a", 0, 8, 1, 600), JobSpecOf("b", 0, 8, 1, 600)});
  // At once, two nodes for the jobs and three spares against slow boots.
  EXPECT_THAT(out.decisions[0], HasSubstr("00:00:00Z tide scale-up od +5"));
  EXPECT_THAT(out.decisions[0], HasSubstr("+3 spare against slow boots (boot_hedge)"));
  EXPECT_EQ(out.result.wait_s.max, 120);  // od boots in 2 minutes
  EXPECT_EQ(out.result.spare_nodes, 3);
}

TEST_F(SimulatorTest, PowersaveAllocatesAtOnceAndStartsOnTheNextTick) {
  const SimOutput out = Simulate("slurm-powersave", {JobSpecOf("a", 5, 8, 1, 600)});
  // Powered up at 5, joined at 125, started on the 30 s tick at 150.
  EXPECT_EQ(out.result.wait_s.max, 145);
  EXPECT_THAT(out.decisions[1], HasSubstr("allocate a"));
}

// Jobs allocated nodes that are still booting start once all of theirs have
// joined, each once, whichever of the nodes joins last.
TEST_F(SimulatorTest, JobsWaitingOnBootingNodesStartWhenTheirLastNodeJoins) {
  spec_.pools[0].boot_delay = {};  // uniform 2-5 minutes: the nodes join apart
  const SimOutput out = Simulate("slurm-powersave", {JobSpecOf("gang", 0, 8, 3, 600), JobSpecOf("a", 0, 8, 1, 600),
                                                     JobSpecOf("b", 0, 8, 1, 600)});
  EXPECT_EQ(out.result.jobs_started, 3);
  EXPECT_EQ(out.result.jobs_completed, 3);
  int allocated = 0;
  for (const auto& d : out.decisions) allocated += d.find("waits for its nodes to boot") != std::string::npos;
  EXPECT_EQ(allocated, 3);
  // Each started on a 30 s tick after its nodes joined.
  EXPECT_GE(out.result.wait_s.p50, 120);
  EXPECT_EQ(out.result.wait_s.max % 30, 0);
  EXPECT_EQ(out.result.wait_s.p50 % 30, 0);
}

TEST_F(SimulatorTest, AJobThatFitsNoPoolIsReportedAndTheRunEnds) {
  const SimOutput out = Simulate("reactive", {JobSpecOf("huge", 0, 16, 1, 60), JobSpecOf("ok", 0, 8, 1, 60)});
  EXPECT_EQ(out.result.jobs_unstarted, 1);
  EXPECT_EQ(out.result.jobs_unschedulable, 1);
  EXPECT_EQ(out.result.jobs_completed, 1);
  int reported = 0;
  for (const auto& d : out.decisions) reported += d.find("unschedulable") != std::string::npos;
  EXPECT_EQ(reported, 1);  // said once, not on every scan
}

TEST_F(SimulatorTest, SameSeedSameBytesOtherSeedOtherBootDelays) {
  spec_.pools[0].boot_delay = {};  // uniform 2-5 minutes
  std::vector<model::JobSpec> jobs;
  for (int i = 0; i < 40; ++i) jobs.push_back(JobSpecOf(StrCat("j", i), i * 97, 1 + i % 8, 1, 300 + i * 13));
  const SimOutput a = Simulate("tide", jobs, {}, 5);
  const SimOutput b = Simulate("tide", jobs, {}, 5);
  const SimOutput c = Simulate("tide", jobs, {}, 6);
  EXPECT_EQ(a.decisions, b.decisions);
  EXPECT_EQ(a.result.cost.total, b.result.cost.total);
  EXPECT_NE(a.decisions, c.decisions);
}

TEST_F(SimulatorTest, SkippingQuietTicksChangesNothing) {
  spec_.pools[0].boot_delay = {};
  std::vector<model::JobSpec> jobs;
  for (int i = 0; i < 60; ++i) {
    jobs.push_back(JobSpecOf(StrCat("j", i), i * 331 % 20000 / 7 * 7 + i, 1 + i % 8, 1 + i % 2, 200 + i * 37));
  }
  std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.submit < b.submit; });
  for (const char* policy : {"tide", "reactive"}) {
    SCOPED_TRACE(policy);
    const SimOutput skip = Simulate(policy, jobs, {}, 2, false);
    const SimOutput all = Simulate(policy, jobs, {}, 2, true);
    EXPECT_EQ(skip.decisions, all.decisions);
    for (size_t i = 0; i < std::min(skip.decisions.size(), all.decisions.size()); ++i) {
      if (skip.decisions[i] != all.decisions[i]) {
        for (size_t k = i > 4 ? i - 4 : 0; k < i; ++k) ADD_FAILURE() << "before: " << all.decisions[k];
        ADD_FAILURE() << "first difference at " << i << ":\n skip: " << skip.decisions[i] << "\n all:  " << all.decisions[i];
        break;
      }
    }
    EXPECT_EQ(skip.result.cost.total, all.result.cost.total);
    EXPECT_GT(all.result.autoscaler_runs, skip.result.autoscaler_runs);
  }
}

TEST_F(SimulatorTest, AShrinkStartsTheJobItMadeRoomFor) {
  // One node that cannot grow; an elastic job spreads over it, then a job arrives.
  spec_ = testing::Spec({Pool("res", 8, Tier::kReserved, 36, 1, 1)});
  model::JobSpec el = JobSpecOf("el", 0, 2, 2, 36000);
  el.min_workers = 1;
  el.max_workers = 4;
  const SimOutput out = Simulate("tide", {el, JobSpecOf("j", 3605, 4, 1, 3600)});
  std::string log;
  for (const auto& d : out.decisions) log += d + "\n";
  EXPECT_THAT(log, HasSubstr("resize el 2 -> 4 workers"));
  EXPECT_THAT(log, HasSubstr("resize el 4 -> 2 workers (making room for j)"));
  // j starts in the pass that shrank el, not when el ends ten hours later.
  EXPECT_LE(out.result.wait_s.max, 60) << log;
}

TEST_F(SimulatorTest, MinNodesAreThereFromTheStart) {
  spec_.pools[0].min_nodes = 2;
  const SimOutput out = Simulate("tide", {JobSpecOf("a", 0, 8, 2, 100)});
  EXPECT_EQ(out.result.wait_s.max, 0);
  EXPECT_EQ(out.result.nodes_released, 0);  // never below min
}

TEST_F(SimulatorTest, ConsolidationEmptiesAPartlyUsedNodeAndReleasesIt) {
  // a (4 GPUs) and b (7) start together on two nodes by best fit; c (1 GPU)
  // joins b's node. When b ends, c holds that node alone while a's node has
  // four GPUs free: consolidation moves c there and releases the node.
  const std::vector<model::JobSpec> jobs = {JobSpecOf("a", 0, 4, 1, 4 * 3600), JobSpecOf("b", 0, 7, 1, 1200),
                                            JobSpecOf("c", 600, 1, 1, 4 * 3600)};
  // When the pool has been quiet for an hour (after the nodes were bought),
  // both a and c are past min_run, so the node with the fewest busy GPUs is
  // the one emptied.
  const auto [off, moved, log] =
      SimulateConsolidation(jobs, [](autoscale::AutoscalerOptions* o) { o->consolidation.min_run = Minutes(10); });
  EXPECT_EQ(off.result.consolidations, 0);
  EXPECT_EQ(moved.result.consolidations, 1) << log;
  EXPECT_THAT(log, HasSubstr("drain [od-2]: consolidation: its jobs move to od-1"));
  EXPECT_THAT(log, HasSubstr("consolidate node od-2 runs 1 of 8 GPUs (c (1 GPUs))"));
  EXPECT_THAT(log, HasSubstr("start c (1x1 GPUs) on od-1"));
  EXPECT_EQ(moved.result.jobs_completed, 3);
  EXPECT_EQ(moved.result.lost_work_gpu_hours, 0);  // c checkpointed on its way out
  // Without consolidation both nodes run to the end; with it od-2 is
  // released hours before c would have ended, so the run costs less.
  EXPECT_EQ(off.result.nodes_released, 0);
  EXPECT_EQ(moved.result.nodes_released, 1);
  EXPECT_LT(moved.result.cost.total, off.result.cost.total - 0.01 * 3600);
}

TEST_F(SimulatorTest, ConsolidationMovesAJobOntoAReservedNodeThatWentIdle) {
  // a (8 GPUs) fills the reserved node; b (4 GPUs) arrives and gets an
  // on-demand node. When a ends, the reserved node idles, paid for anyway:
  // once the pool has been quiet for an hour, b moves there and the
  // on-demand node is released.
  spec_ = testing::Spec({Pool("res", 8, Tier::kReserved, 20, 1, 1), Pool("od", 8, Tier::kOnDemand, 36, 0, 10, 120)});
  const std::vector<model::JobSpec> jobs = {JobSpecOf("a", 0, 8, 1, 1200), JobSpecOf("b", 60, 4, 1, 8 * 3600)};
  const auto [off, moved, log] = SimulateConsolidation(
      jobs, [](autoscale::AutoscalerOptions* o) { o->scale_up.trigger.pending_threshold = 0; });  // buy for b at once
  EXPECT_EQ(off.result.consolidations, 0);
  ASSERT_EQ(moved.result.consolidations, 1) << log;
  EXPECT_THAT(log, HasSubstr("drain [od-1]: consolidation: its jobs move to res-1"));
  EXPECT_THAT(log, HasSubstr("restart b (1x4 GPUs) on res-1"));
  EXPECT_EQ(moved.result.jobs_completed, 2);
  EXPECT_EQ(moved.result.lost_work_gpu_hours, 0);
  EXPECT_EQ(off.result.nodes_released, 0);
  EXPECT_EQ(moved.result.nodes_released, 1);
  // The on-demand node goes about six hours early; the reserved one was paid for either way.
  EXPECT_LT(moved.result.cost.total, off.result.cost.total - 5 * 36);
}

TEST_F(SimulatorTest, OutOfOrderTraceIsAnError) {
  auto policy = autoscale::MakePolicy("tide", {}, spec_, std::nullopt);
  VectorTrace trace({JobSpecOf("a", 100, 1, 1, 10), JobSpecOf("b", 50, 1, 1, 10)}, kT0);
  Simulator sim(&spec_, *policy, {}, &trace);
  auto out = sim.Run();
  ASSERT_FALSE(out.ok());
  EXPECT_THAT(std::string(Message(out.status())), HasSubstr("job b is out of submission order"));
}

}  // namespace
}  // namespace tide::sim
