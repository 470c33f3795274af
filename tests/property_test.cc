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
// And with every policy switched on (spot, slices, regions, elastic and idle
// jobs, scheduled capacity, forecasting, boot spares, storage, the disruption
// budget):
//   - no protected job is ever interrupted;
//   - no GPU or slice is allocated twice;
//   - no high-priority (non-preemptible) job runs on spot;
//   - the disruption budget is never exceeded;
//   - every requeued job completes (or is cancelled as idle), and no
//     interruption loses more than a checkpoint interval plus its cost.
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "autoscale/autoscaler.h"
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
        if (j.state == JobState::kRunning) { EXPECT_EQ(n.state, NodeState::kReady) << j.spec.name; }
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
  o.check_index = true;  // the state index must match a fresh build before every decision
  sim::Simulator sim(&spec, *policy, o, &trace, checker);
  auto out = sim.Run();
  EXPECT_TRUE(out.ok()) << out.status();
  SimRun r;
  if (!out.ok()) return r;
  r.out = std::move(*out);
  r.json = report::FormatJson({}, spec, {r.out.result});
  return r;
}

// Every unit of money is either some job's (by class, and again by team),
// idle capacity's, or egress.
void ExpectCostFullyAttributed(const sim::PolicyResult& r) {
  double by_class = 0, by_team = 0;
  for (const auto& [name, c] : r.cost_by_priority) by_class += c;
  for (const auto& [name, c] : r.cost_by_team) by_team += c;
  const double tolerance = 1e-6 * r.cost.total + 0.01;
  EXPECT_NEAR(by_class + r.cost_idle + r.cost.egress, r.cost.total, tolerance);
  EXPECT_NEAR(by_team + r.cost_idle + r.cost.egress, r.cost.total, tolerance);
  EXPECT_GE(r.cost_idle, -tolerance);
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
    ExpectCostFullyAttributed(res);
  }
  if (GetParam().rfind("fixed", 0) != 0) { EXPECT_GT(buys, 0); }
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
                         ::testing::Values("tide", "tide-seed", "reactive", "slurm-powersave", "fixed:3"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (auto& c : n) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return n;
                         });

// ---- Every policy on ----

class EveryPolicyChecker final : public sim::SimObserver {
 public:
  explicit EveryPolicyChecker(const autoscale::BudgetOptions& budget) : budget_(budget) {}

  void AfterStep(const ClusterState& s, Timestamp now) override {
    ++steps_;
    absl::flat_hash_map<model::NodeId, const model::Node*> nodes;
    for (const auto& n : s.nodes) nodes[n.id] = &n;
    // Slices and whole GPUs on MIG nodes add up, GPU by GPU.
    absl::flat_hash_map<model::NodeId, std::vector<int>> units;  // used units per GPU
    for (const auto& n : s.nodes) {
      if (!n.slice_free.empty()) units[n.id].assign(n.slice_free.size(), 0);
    }
    for (const auto& j : s.jobs) {
      if (j.state == JobState::kPending) continue;
      for (const auto& sh : j.alloc) {
        ASSERT_TRUE(nodes.contains(sh.node));
        const model::Node& n = *nodes.at(sh.node);
        const auto& pool = s.spec->pools[n.pool];
        if (pool.tier == Tier::kSpot) {
          EXPECT_TRUE(j.spec.preemptible && !j.spec.is_protected) << j.spec.name << " runs on spot";
        }
        if (n.slice_free.empty()) continue;
        if (sh.units > 0) {
          units[n.id][sh.gpu] += sh.units;
        } else {
          for (size_t g = 0; g < n.slice_free.size(); ++g) {
            if (sh.gpu_mask >> g & 1) units[n.id][g] += pool.mig.units_per_gpu;
          }
        }
      }
    }
    for (const auto& [id, used] : units) {
      const model::Node& n = *nodes.at(id);
      const int per_gpu = s.spec->pools[n.pool].mig.units_per_gpu;
      int free = 0;
      for (size_t g = 0; g < used.size(); ++g) {
        ASSERT_LE(used[g], per_gpu) << "GPU " << g << " of " << n.name << " allocated twice";
        EXPECT_EQ(used[g] + n.slice_free[g], per_gpu) << "slice accounting on " << n.name;
        free += n.slice_free[g] == per_gpu;
      }
      EXPECT_EQ(free, n.free_gpus) << "free GPUs on " << n.name;
    }
    // The budget: disruptions in any window.
    if (budget_.max_nodes > 0) {
      int in_window = 0;
      for (Timestamp t : s.recent_disruptions) in_window += t > now - budget_.window;
      EXPECT_LE(in_window, budget_.max_nodes) << "disruption budget exceeded at " << FormatTimestamp(now);
    }
  }

  void OnInterrupt(const model::Job& job, std::string_view cause, double lost, Timestamp now) override {
    ++interrupts_;
    EXPECT_FALSE(job.spec.is_protected) << "protected job " << job.spec.name << " interrupted (" << cause << ")";
    // Work is counted at the job's requested size: an elastic job grown past
    // it does up to workers/requested times as much work per second.
    const double grown = std::max(1.0, static_cast<double>(job.workers) / std::max(1, job.spec.workers));
    const double bound =
        grown * static_cast<double>((job.spec.checkpoint.interval + job.spec.checkpoint.cost).count());
    EXPECT_LE(lost, bound + 1e-6) << job.spec.name << " lost " << lost << "s of work (" << cause << " at " << FormatTimestamp(now) << ", " << job.workers << " of "
                                    << job.spec.workers << " workers)";
  }

  int64_t steps() const { return steps_; }
  int64_t interrupts() const { return interrupts_; }

 private:
  autoscale::BudgetOptions budget_;
  int64_t steps_ = 0, interrupts_ = 0;
};

model::ClusterSpec EverythingSpec() {
  auto mig = testing::Pool("mig", 4, Tier::kOnDemand, 50, 0, 4);
  mig.mig.profiles = {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"};
  auto far = testing::Pool("od8-west", 8, Tier::kOnDemand, 85, 0, 4);
  far.region = "west";
  model::ClusterSpec spec = testing::Spec({
      testing::Pool("res8", 8, Tier::kReserved, 55, 2, 2),
      testing::Pool("od8", 8, Tier::kOnDemand, 100, 0, 6),
      testing::Pool("spot8", 8, Tier::kSpot, 20, 0, 6),
      mig,
      far,
  });
  spec.regions = {{"default", 0.05}, {"west", 0.05}};
  for (auto& p : spec.pools) {
    p.boot_delay.kind = model::BootDelay::Kind::kUniform;
    p.boot_delay.min = Seconds(60);
    p.boot_delay.max = Seconds(300);
  }
  return spec;
}

std::vector<model::JobSpec> EverythingJobs(uint64_t seed, int n) {
  Rng rng(seed);
  std::vector<model::JobSpec> jobs;
  int64_t t = 0;
  for (int i = 0; i < n; ++i) {
    t += rng.Bernoulli(0.1) ? rng.UniformInt(1800, 7200) : rng.UniformInt(0, 120);
    const int kind = static_cast<int>(rng.UniformInt(0, 9));
    const int cls = static_cast<int>(rng.UniformInt(0, 2));
    model::JobSpec j = testing::JobSpecOf(StrCat("e", i), t, 8, 1, rng.UniformInt(300, 5 * 3600), cls);
    j.checkpoint.interval = Minutes(rng.UniformInt(10, 40));
    j.checkpoint.cost = Seconds(rng.UniformInt(20, 150));  // sometimes longer than a spot notice
    j.is_protected = cls == 0 && rng.Bernoulli(0.3);
    switch (kind) {
      case 0:  // elastic, asynchronous, sometimes input-bound
        j.gpus_per_worker = 2;
        j.workers = 2;
        j.min_workers = 1;
        j.max_workers = 6;
        j.async = true;
        if (rng.Bernoulli(0.5)) j.io_bound_workers = 2;
        break;
      case 1:  // a slice
        j.gpus_per_worker = 1;
        j.slice_units = std::vector<int>{1, 2, 3}[rng.UniformInt(0, 2)];
        j.slice = StrCat(j.slice_units, "g.", 10 * j.slice_units, "gb");
        break;
      case 2:  // idle: holds GPUs, does nothing
        j.phases.train_util = 0.02;
        j.gpus_per_worker = 4;
        break;
      case 3:  // data-heavy with a home
        j.data_region = "default";
        j.data_gb = 500;
        j.output_gb = 50;
        break;
      case 4:
        j.workers = static_cast<int>(rng.UniformInt(2, 4));
        break;
      default:
        j.gpus_per_worker = std::vector<int>{1, 2, 4, 8}[rng.UniformInt(0, 3)];
        break;
    }
    jobs.push_back(std::move(j));
  }
  return jobs;
}

TEST(EveryPolicyOnTest, InvariantsHold) {
  const model::ClusterSpec base = EverythingSpec();
  autoscale::PolicyDefaults d;
  auto& o = d.tide;
  o.budget.max_nodes = 3;
  o.forecast.enabled = true;
  o.forecast.min_days = 1;
  o.scale_up.hedge.nodes = 1;
  autoscale::CronRule night;
  night.name = "night";
  night.pools = {2, 4};  // spot and the far region: capped at night
  night.from = 20 * 60;
  night.to = 7 * 60;
  night.max_nodes = 1;
  autoscale::CronRule prewarm;
  prewarm.name = "prewarm";
  prewarm.pools = {1};
  prewarm.from = 9 * 60;
  prewarm.to = 10 * 60;
  prewarm.min_nodes = 2;
  o.schedule.rules = {night, prewarm};
  int64_t interrupts = 0, resizes = 0, reclaims = 0, preemptions = 0, slices_run = 0, spares = 0, released_booting = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(StrCat("seed ", seed));
    auto jobs = EverythingJobs(seed, 300);
    for (const auto& j : jobs) slices_run += j.slice_units > 0;
    auto policy = autoscale::MakePolicy("tide", d, base, autoscale::DemandStats{64, 20});
    ASSERT_TRUE(policy.ok()) << policy.status();
    testing::VectorTrace trace(jobs, testing::kT0);
    sim::SimOptions so;
    so.seed = seed;
    so.world.spot.mean_time_to_interrupt = Hours(1);
    so.world.storage.load_gb = 100;
    so.world.storage.max_concurrent = 3;
    so.check_index = true;  // the state index must match a fresh build before every decision
    EveryPolicyChecker checker(o.budget);
    sim::Simulator sim(&base, *policy, so, &trace, &checker);
    auto out = sim.Run();
    ASSERT_TRUE(out.ok()) << out.status();
    const sim::PolicyResult& r = out->result;
    ASSERT_GT(checker.steps(), 300);
    // Everything that started either completed or was cancelled as idle.
    EXPECT_EQ(r.jobs_completed + r.jobs_cancelled + r.jobs_unstarted, r.jobs_total);
    EXPECT_EQ(r.jobs_unstarted, r.jobs_unschedulable);
    ExpectCostFullyAttributed(r);
    interrupts += checker.interrupts();
    resizes += r.resizes;
    reclaims += r.reclaims;
    preemptions += r.preemptions;
    spares += r.spare_nodes;
    released_booting += r.released_booting;
  }
  // The mechanisms were exercised, not just switched on.
  EXPECT_GT(interrupts, 0);
  EXPECT_GT(resizes, 0);
  EXPECT_GT(reclaims, 0);
  EXPECT_GT(slices_run, 0);
  EXPECT_GT(spares, 0);
  EXPECT_GT(released_booting, 0);
  RecordProperty("preemptions", static_cast<int>(preemptions));
}

}  // namespace
}  // namespace tide
