#include "autoscale/autoscaler.h"
#include "core/strings.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "autoscale/scaleup/estimator.h"
#include "sched/eligibility.h"
#include "sched/queue.h"
#include "sched/snapshot.h"

namespace tide::autoscale {
namespace {

using model::ClusterSpec;
using model::ClusterState;
using model::Job;
using model::NodeState;

std::string JobList(const std::vector<model::JobId>& ids, const absl::flat_hash_map<model::JobId, const Job*>& jobs) {
  constexpr size_t kShown = 8;
  std::vector<std::string> names;
  for (size_t i = 0; i < ids.size() && i < kShown; ++i) names.push_back(jobs.at(ids[i])->spec.name);
  std::string s = StrJoin(names, ",");
  if (ids.size() > kShown) StrAppend(&s, ",... (", ids.size(), " jobs)");
  return s;
}

// Workers of `d`'s size that all its eligible pools hold at their max, every node empty.
int64_t MaxWorkers(const ClusterSpec& spec, const Demand& d) {
  int64_t possible = 0;
  for (size_t p = 0; p < spec.pools.size(); ++p) {
    if (!(d.pools & sched::PoolBit(static_cast<int>(p)))) continue;
    possible += int64_t{spec.pools[p].max_nodes} * (spec.pools[p].type.gpus / d.job->spec.gpus_per_worker);
  }
  return possible;
}

bool CouldEverFit(const ClusterSpec& spec, const Demand& d) {
  return d.pools != 0 && MaxWorkers(spec, d) >= d.job->spec.workers;
}

// Why nothing can be bought for a job: it fits no pool at all, or every pool
// that could hold it is at its max.
Action ClassifyUnserved(const ClusterSpec& spec, const Demand& d, const std::vector<int>& live) {
  const model::JobSpec& js = d.job->spec;
  Action a;
  a.jobs.push_back(d.job->id);
  const int64_t possible = MaxWorkers(spec, d);
  int largest = 0;
  for (const auto& p : spec.pools) largest = std::max(largest, p.type.gpus);
  if (d.pools == 0) {
    a.kind = ActionKind::kUnschedulable;
    a.reason = StrCat("job ", js.name, " needs ", js.gpus_per_worker, " GPUs per worker; the largest node has ",
                            largest);
  } else if (possible < js.workers) {
    a.kind = ActionKind::kUnschedulable;
    a.reason = StrCat("job ", js.name, " needs ", js.workers, " workers x ", js.gpus_per_worker,
                            " GPUs; all pools together hold at most ", possible, " such workers at their max");
  } else {
    a.kind = ActionKind::kAtMax;
    std::vector<std::string> full;
    for (size_t p = 0; p < spec.pools.size(); ++p) {
      if (d.pools & sched::PoolBit(static_cast<int>(p))) {
        full.push_back(StrCat(spec.pools[p].name, " ", live[p], "/", spec.pools[p].max_nodes));
      }
    }
    a.reason = StrCat("job ", js.name, " (", js.workers, "x", js.gpus_per_worker,
                            " GPUs) waits: no pool has room for it (", StrJoin(full, ", "), ")");
  }
  return a;
}

}  // namespace

Result<Autoscaler> Autoscaler::Make(AutoscalerOptions options) {
  if (options.scan_interval.count() < 0) return absl::InvalidArgumentError("scan_interval must be >= 0");
  if (options.scale_up.trigger.pending_threshold < 0) {
    return absl::InvalidArgumentError("pending_threshold must be >= 0");
  }
  if (options.scale_up.trigger.pending_grace.count() < 0) {
    return absl::InvalidArgumentError("pending_grace must be >= 0");
  }
  if (options.scale_down.idle.idle_after.count() < 0) return absl::InvalidArgumentError("idle_after must be >= 0");
  TIDE_ASSIGN_OR_RETURN(ExpanderChain chain, ExpanderChain::Make(options.scale_up.expanders));
  return Autoscaler(std::move(options), std::move(chain));
}

Duration Autoscaler::ReleaseLookahead(const ClusterSpec& spec, const std::vector<int>& live) const {
  if (options_.scale_up.release_lookahead) return *options_.scale_up.release_lookahead;
  Duration fastest = Duration::max();
  for (size_t p = 0; p < spec.pools.size(); ++p) {
    const auto& pool = spec.pools[p];
    if (pool.tier == model::Tier::kReserved || live[p] >= pool.max_nodes) continue;
    fastest = std::min(fastest, pool.boot_delay.Expected());
  }
  return fastest == Duration::max() ? Duration{0} : fastest;
}

Result<ScalingPlan> Autoscaler::RunOnce(const ClusterState& state, Timestamp now) const {
  ScalingPlan plan;
  if (state.spec == nullptr) return absl::InvalidArgumentError("ClusterState has no spec");
  const ClusterSpec& spec = *state.spec;
  const int num_pools = static_cast<int>(spec.pools.size());
  if (num_pools > sched::kMaxPools) return absl::InvalidArgumentError("more than 64 pools");

  std::vector<int> live(num_pools, 0);  // nodes that count against max_nodes
  std::vector<const model::Node*> nodes;
  for (const auto& n : state.nodes) {
    if (n.pool < 0 || n.pool >= num_pools) {
      return absl::InvalidArgumentError(StrCat("node ", n.name, " has unknown pool index ", n.pool));
    }
    if (n.state == NodeState::kTerminated) continue;
    ++live[n.pool];
    if (n.state == NodeState::kReady || n.state == NodeState::kProvisioning) nodes.push_back(&n);
  }
  std::sort(nodes.begin(), nodes.end(), [](const model::Node* a, const model::Node* b) { return a->id < b->id; });

  const std::vector<const Job*> pending = sched::PendingInQueueOrder(state);
  absl::flat_hash_set<model::NodeId> needed;

  if (!pending.empty()) {
    absl::flat_hash_map<model::JobId, const Job*> by_id;
    for (const Job* j : pending) by_id[j->id] = j;

    // The what-if snapshot: free GPUs of ready nodes and of nodes still booting.
    sched::CapacitySnapshot snap(num_pools, std::max(1, spec.MaxGpusPerNode()));
    absl::flat_hash_map<model::NodeId, int> slot_of;
    for (const auto* n : nodes) slot_of[n->id] = snap.AddNode(n->id, n->pool, n->gpus, n->free_gpus);

    // Capacity that running jobs give back before a new node could boot.
    const Duration lookahead = ReleaseLookahead(spec, live);
    if (lookahead.count() > 0) {
      for (const auto& j : state.jobs) {
        if (j.state != model::JobState::kRunning) continue;
        if (j.expected_end > now + lookahead) {
          // The what-if changes when this job's end enters the lookahead.
          plan.next_wakeup = std::min(plan.next_wakeup, j.expected_end - lookahead);
          continue;
        }
        for (const auto& sh : j.alloc) {
          if (auto it = slot_of.find(sh.node); it != slot_of.end()) {
            snap.Give(it->second, sh.workers * j.spec.gpus_per_worker);
          }
        }
      }
    }

    // 1. Pending jobs that already fit there need nothing bought.
    std::vector<Demand> demands;
    std::vector<sched::SlotShare> shares;
    for (const Job* j : pending) {
      Demand d{j, sched::EligiblePools(spec, j->spec), j->spec.workers};
      const int g = j->spec.gpus_per_worker;
      const int64_t slots = snap.Slots(d.pools, g);
      const int fit = options_.scale_up.gang_aware ? (slots >= d.workers_left ? d.workers_left : 0)
                                                   : static_cast<int>(std::min<int64_t>(slots, d.workers_left));
      if (fit > 0) {
        shares.clear();
        snap.Place(d.pools, g, fit, &shares);
        Claim c{j->id, {}};
        for (const auto& s : shares) {
          c.shares.push_back({snap.id(s.slot), s.workers});
          needed.insert(snap.id(s.slot));
        }
        plan.covered.push_back(std::move(c));
        d.workers_left -= fit;
      }
      if (d.workers_left > 0) demands.push_back(d);
    }

    // 2. A job no pool could hold even at its max is reported, never bought for.
    std::vector<const Job*> waiting;
    std::vector<Demand> fittable;
    for (const Demand& d : demands) {
      if (CouldEverFit(spec, d)) {
        waiting.push_back(d.job);
        fittable.push_back(d);
      } else {
        plan.actions.push_back(ClassifyUnserved(spec, d, live));
      }
    }
    demands = std::move(fittable);

    // 3. Should we buy at all? The grace counts only jobs that need capacity.
    const TriggerDecision trig = PendingTrigger(options_.scale_up.trigger).Evaluate(pending, waiting, now);
    plan.next_wakeup = std::min(plan.next_wakeup, trig.next_check);

    if (options_.scale_up.enabled && trig.fire && !demands.empty()) {
      BinpackingEstimator estimator(options_.scale_up.gang_aware);
      model::NodeId next_template_id = -1;
      int pools_grown = 0;
      bool exhausted = false;  // no pool can serve what is left
      std::vector<bool> grown(num_pools, false);
      // 4. Each round: every pool with room proposes an option; the expander
      // chain picks one; it is committed to the snapshot; repeat.
      while (true) {
        if (options_.scale_up.max_pools_per_pass > 0 && pools_grown >= options_.scale_up.max_pools_per_pass) {
          plan.next_wakeup = std::min(plan.next_wakeup, now + Seconds(1));  // the rest on the next pass
          break;
        }
        std::vector<ScaleUpOption> options;
        for (int p = 0; p < num_pools; ++p) {
          const int room = spec.pools[p].max_nodes - live[p];
          if (spec.pools[p].tier == model::Tier::kReserved) continue;  // a fixed quota
          sched::CapacitySnapshot::Fork fork(&snap);
          model::NodeId tmp_id = next_template_id;
          ScaleUpOption o = estimator.Estimate(spec, p, std::max(0, room), demands, &snap, &tmp_id);
          if (!o.served.empty()) options.push_back(std::move(o));
        }
        if (options.empty()) {
          exhausted = true;
          break;
        }
        std::vector<const ScaleUpOption*> ptrs;
        for (const auto& o : options) ptrs.push_back(&o);
        const ExpanderChain::Choice choice = chain_.Choose(ptrs, spec);
        const int pool = choice.option->pool;

        // Commit: the same estimate, on the snapshot itself this time.
        const int first_slot = snap.size();
        ScaleUpOption o = estimator.Estimate(spec, pool, spec.pools[pool].max_nodes - live[pool], demands, &snap,
                                             &next_template_id);
        std::vector<model::JobId> served_jobs;
        for (const auto& [idx, workers] : o.served) {
          demands[idx].workers_left -= workers;
          served_jobs.push_back(demands[idx].job->id);
        }
        // Existing nodes the served jobs landed on are needed, not idle.
        for (int s = 0; s < first_slot; ++s) {
          if (snap.id(s) >= 0 && snap.free(s) < snap.gpus(s)) needed.insert(snap.id(s));
        }
        live[pool] += o.nodes;
        if (o.nodes == 0) {
          // The jobs ride on nodes an earlier round bought; nothing new to buy.
          for (auto id : served_jobs) plan.covered.push_back({id, {}});
        } else {
          const model::NodePool& p = spec.pools[pool];
          Action a;
          a.kind = ActionKind::kScaleUp;
          a.pool = pool;
          a.count = o.nodes;
          a.jobs = served_jobs;
          a.reason = fmt::format(
              "{}; +{} {} ({}, {:.4g} {}/h each) for {}; {} of {} new GPUs used; {}", trig.reason, o.nodes, p.name,
              model::TierName(p.tier), p.price_per_hour, spec.currency, JobList(served_jobs, by_id), o.useful_gpus,
              o.new_gpus, choice.why);
          plan.actions.push_back(std::move(a));
          if (!grown[pool]) {
            grown[pool] = true;
            ++pools_grown;
          }
        }
        demands.erase(std::remove_if(demands.begin(), demands.end(), [](const Demand& d) { return d.workers_left <= 0; }),
                      demands.end());
        if (demands.empty()) break;
      }
      // 5. Whatever is left waits for room, never half-bought.
      if (exhausted) {
        for (const Demand& d : demands) plan.actions.push_back(ClassifyUnserved(spec, d, live));
      }
    }
  }

  if (options_.scale_down.enabled) {
    IdleRelease(options_.scale_down.idle).Evaluate(state, needed, now, &plan);
  }
  return plan;
}

std::string_view ActionKindName(ActionKind kind) {
  switch (kind) {
    case ActionKind::kScaleUp: return "scale-up";
    case ActionKind::kRelease: return "release";
    case ActionKind::kUnschedulable: return "unschedulable";
    case ActionKind::kAtMax: return "at-max";
    case ActionKind::kDrain: return "drain";
    case ActionKind::kPreempt: return "preempt";
    case ActionKind::kReclaim: return "reclaim";
    case ActionKind::kResize: return "resize";
    case ActionKind::kNote: return "note";
  }
  return "?";
}

}  // namespace tide::autoscale
