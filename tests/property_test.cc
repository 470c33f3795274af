// Property tests: randomised workloads under every policy, with invariants
// checked after every step and on every plan.
//
//   - no GPU is allocated twice (a node's allocations add up to its used GPUs);
//   - gangs run whole: a started job has all its workers placed;
//   - no pool goes above its max or below its min;
//   - no node is bought for a job that fits capacity already there or booting;
//   - every job that fits some pool eventually completes (elastic policies);
//   - the same seed gives the same bytes;
//   - skipping quiet autoscaler ticks changes no decision.
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "autoscale/policy.h"
#include "core/rng.h"
#include "core/strings.h"
#include "gtest/gtest.h"
#include "report/report.h"
#include "sched/queue.h"
#include "sim/simulator.h"
#include "testutil/builders.h"
#include "testutil/vector_trace.h"

namespace tide {
namespace {

using model::ClusterState;
using model::JobState;
using model::NodeState;
using model::Tier;

class InvariantChecker final : public sim::SimObserver {
 public:
  void AfterSchedule(const ClusterState& s, const sched::SchedulerOutput&, Timestamp now) override { Check(s, now); }
  void AfterStep(const ClusterState& s, Timestamp now) override { Check(s, now); }

  void OnPlan(const ClusterState& s, const autoscale::ScalingPlan& plan, Timestamp now) override {
    ++plans_;
    absl::flat_hash_map<model::JobId, const model::Job*> jobs;
    for (const auto& j : s.jobs) jobs[j.id] = &j;
    absl::flat_hash_map<model::JobId, const autoscale::Claim*> claims;
    for (const auto& c : plan.covered) claims[c.job] = &c;
    for (const auto& a : plan.actions) {
      if (a.kind != autoscale::ActionKind::kScaleUp) continue;
      ++buys_;
      EXPECT_FALSE(a.reason.empty());
      for (const auto id : a.jobs) {
        ASSERT_TRUE(jobs.contains(id)) << "bought for a job that is not in the snapshot";
        const model::Job& job = *jobs.at(id);
        EXPECT_EQ(job.state, JobState::kPending);
        // Free capacity on nodes that exist or boot, minus what the plan
        // gave to jobs ahead of this one (and this one's own partial claim).
        std::map<model::NodeId, int> free;
        for (const auto& n : s.nodes) {
          if (n.state == NodeState::kReady || n.state == NodeState::kProvisioning) free[n.id] = n.free_gpus;
        }
        int own = 0;
        for (const auto& c : plan.covered) {
          const model::Job* other = jobs.contains(c.job) ? jobs.at(c.job) : nullptr;
          if (other == nullptr) continue;
          const bool ahead = sched::QueueBefore(*other, job);
          if (!ahead && other != &job) continue;
          for (const auto& sh : c.shares) {
            if (!free.contains(sh.node)) continue;
            free[sh.node] = std::max(0, free[sh.node] - sh.workers * other->spec.gpus_per_worker);
            if (other == &job) own += sh.workers;
          }
        }
        int64_t slots = 0;
        for (const auto& [node, f] : free) slots += f / job.spec.gpus_per_worker;
        const int need = gang_aware_ ? job.spec.workers : 1;
        EXPECT_LT(slots, need) << FormatTimestamp(now) << ": bought for " << job.spec.name << " ("
                               << job.spec.workers << "x" << job.spec.gpus_per_worker
                               << ") although capacity for it exists or is booting; own claim " << own;
      }
    }
  }

  void set_gang_aware(bool g) { gang_aware_ = g; }
  int64_t checks() const { return checks_; }
  int64_t buys() const { return buys_; }

 private:
  void Check(const ClusterState& s, Timestamp now) {
    ++checks_;
    absl::flat_hash_map<model::NodeId, const model::Node*> nodes;
    std::vector<int> live(s.spec->pools.size(), 0), staying(s.spec->pools.size(), 0);
    for (const auto& n : s.nodes) {
      nodes[n.id] = &n;
      ASSERT_GE(n.free_gpus, 0) << n.name;
      ASSERT_LE(n.free_gpus, n.gpus) << n.name;
      ++live[n.pool];
      if (n.state == NodeState::kReady || n.state == NodeState::kProvisioning) ++staying[n.pool];
    }
    for (size_t p = 0; p < live.size(); ++p) {
      EXPECT_LE(live[p], s.spec->pools[p].max_nodes) << s.spec->pools[p].name << " above max at " << FormatTimestamp(now);
      EXPECT_GE(staying[p], s.spec->pools[p].min_nodes) << s.spec->pools[p].name << " below min at " << FormatTimestamp(now);
    }
    absl::flat_hash_map<model::NodeId, int> used;
    for (const auto& j : s.jobs) {
      if (j.state == JobState::kPending) {
        EXPECT_TRUE(j.alloc.empty()) << j.spec.name;
        continue;
      }
      int workers = 0;
      for (const auto& sh : j.alloc) {
        ASSERT_TRUE(nodes.contains(sh.node)) << j.spec.name << " on a node that is gone";
        const model::Node& n = *nodes.at(sh.node);
        EXPECT_LE(j.spec.gpus_per_worker, n.gpus);
        if (j.state == JobState::kRunning) EXPECT_EQ(n.state, NodeState::kReady) << j.spec.name;
        used[sh.node] += sh.workers * j.spec.gpus_per_worker;
        workers += sh.workers;
      }
      EXPECT_EQ(workers, j.spec.workers) << "gang " << j.spec.name << " is partly placed";
    }
    for (const auto& n : s.nodes) {
      EXPECT_EQ(used[n.id], n.gpus - n.free_gpus) << "GPU accounting on " << n.name << " at " << FormatTimestamp(now);
    }
  }

  bool gang_aware_ = true;
  int64_t checks_ = 0, plans_ = 0, buys_ = 0;
};

model::ClusterSpec RandomSpec() {
  model::ClusterSpec spec = testing::Spec({
      testing::Pool("res8", 8, Tier::kReserved, 55, 2, 2),
      testing::Pool("od8", 8, Tier::kOnDemand, 100, 0, 6),
      testing::Pool("od2", 2, Tier::kOnDemand, 27, 1, 8),
      testing::Pool("od4", 4, Tier::kOnDemand, 52, 0, 4),
  });
  for (auto& p : spec.pools) {
    p.boot_delay.kind = model::BootDelay::Kind::kUniform;
    p.boot_delay.min = Seconds(60);
    p.boot_delay.max = Seconds(300);
  }
  return spec;
}

std::vector<model::JobSpec> RandomJobs(uint64_t seed, int n) {
  Rng rng(seed);
  std::vector<model::JobSpec> jobs;
  int64_t t = 0;
  for (int i = 0; i < n; ++i) {
    // Bursts: mostly short gaps, sometimes a long lull.
    t += rng.Bernoulli(0.1) ? rng.UniformInt(1800, 7200) : rng.UniformInt(0, 120);
    const int gpw = std::vector<int>{1, 1, 1, 2, 4, 8}[rng.UniformInt(0, 5)];
    const int workers = gpw == 8 ? static_cast<int>(rng.UniformInt(1, 5)) : static_cast<int>(rng.UniformInt(1, 2));
    jobs.push_back(testing::JobSpecOf(StrCat("r", i), t, gpw, workers, rng.UniformInt(30, 4 * 3600),
                                      static_cast<int>(rng.UniformInt(0, 2))));
  }
  // A gang no pool can hold and one that needs more workers than any pool's max.
  jobs.push_back(testing::JobSpecOf("too-wide", t + 10, 16, 1, 100));
  jobs.push_back(testing::JobSpecOf("too-many", t + 20, 8, 9, 100));  // 8 nodes of 8 GPUs at most
  return jobs;
}

struct SimRun {
  sim::SimOutput out;
  std::string json;
};

SimRun Simulate(const std::string& name, const model::ClusterSpec& base, const std::vector<model::JobSpec>& jobs,
                uint64_t seed, InvariantChecker* checker, bool every_tick = false) {
  autoscale::PolicyDefaults d;
  auto policy = autoscale::MakePolicy(name, d, base, autoscale::DemandStats{64, 20});
  EXPECT_TRUE(policy.ok()) << policy.status();
  if (checker) checker->set_gang_aware(policy->autoscaler.scale_up.gang_aware);
  const model::ClusterSpec spec = policy->ApplyTo(base);
  testing::VectorTrace trace(jobs, testing::kT0);
  sim::SimOptions o;
  o.seed = seed;
  o.record_decisions = true;
  o.every_tick = every_tick;
  sim::Simulator sim(&spec, *policy, o, &trace, checker);
  auto out = sim.Run();
  EXPECT_TRUE(out.ok()) << out.status();
  SimRun r;
  if (!out.ok()) return r;
  r.out = std::move(*out);
  r.json = report::FormatJson({}, spec, {r.out.result});
  return r;
}

class PropertyTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PropertyTest, InvariantsHoldOnRandomWorkloads) {
  const model::ClusterSpec spec = RandomSpec();
  int64_t buys = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(StrCat("seed ", seed));
    const auto jobs = RandomJobs(seed, 250);
    InvariantChecker checker;
    const SimRun r = Simulate(GetParam(), spec, jobs, seed, &checker);
    ASSERT_GT(checker.checks(), 100);
    buys += checker.buys();
    const sim::PolicyResult& res = r.out.result;
    EXPECT_EQ(res.jobs_total, static_cast<int64_t>(jobs.size()));
    if (res.kind != "fixed") {
      // Every job that fits some pool runs to completion; the two that fit none are reported.
      EXPECT_EQ(res.jobs_completed, res.jobs_total - 2);
      EXPECT_EQ(res.jobs_unschedulable, 2);
    }
    EXPECT_LE(res.gpu_hours_busy, res.cost.gpu_hours_paid + 1e-9);
  }
  if (GetParam().rfind("fixed", 0) != 0) EXPECT_GT(buys, 0);
}

TEST_P(PropertyTest, SameSeedSameBytes) {
  const model::ClusterSpec spec = RandomSpec();
  const auto jobs = RandomJobs(99, 300);
  const SimRun a = Simulate(GetParam(), spec, jobs, 4, nullptr);
  const SimRun b = Simulate(GetParam(), spec, jobs, 4, nullptr);
  EXPECT_EQ(a.json, b.json);
  EXPECT_EQ(a.out.decisions, b.out.decisions);
  EXPECT_FALSE(a.out.decisions.empty());
}

// The simulator skips autoscaler ticks where nothing changed and no timer is
// due; that must not change a single decision.
TEST_P(PropertyTest, SkippingQuietTicksChangesNothing) {
  const model::ClusterSpec spec = RandomSpec();
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE(StrCat("seed ", seed));
    const auto jobs = RandomJobs(seed + 100, 200);
    const SimRun skip = Simulate(GetParam(), spec, jobs, seed, nullptr, false);
    const SimRun all = Simulate(GetParam(), spec, jobs, seed, nullptr, true);
    const auto& x = skip.out.decisions;
    const auto& y = all.out.decisions;
    for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
      if (i >= x.size() || i >= y.size() || x[i] != y[i]) {
        ADD_FAILURE() << "first difference at decision " << i << "\n  skipping: " << (i < x.size() ? x[i] : "(none)")
                      << "\n  every tick: " << (i < y.size() ? y[i] : "(none)")
                      << "\n  previous: " << (i > 0 ? y[i - 1] : "(none)");
        break;
      }
    }
    EXPECT_EQ(skip.json.substr(0, skip.json.find("\"events\"")), all.json.substr(0, all.json.find("\"events\"")));
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, PropertyTest,
                         ::testing::Values("tide", "reactive", "slurm-powersave", "fixed:3"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (auto& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace tide
