#include "autoscale/scaleup/scale_up.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

#include "core/strings.h"
#include "sched/eligibility.h"

namespace tide::autoscale {
namespace {

using model::ClusterSpec;
using model::Job;

// The first served jobs' names. They come from the demands, not from the
// pass's job index: building that index for a queue of 100,000 costs more
// than the rest of the scale-up.
std::string JobList(const std::vector<const Job*>& jobs) {
  constexpr size_t kShown = 8;
  std::vector<std::string> names;
  for (size_t i = 0; i < jobs.size() && i < kShown; ++i) names.push_back(jobs[i]->spec.name);
  std::string s = StrJoin(names, ",");
  if (jobs.size() > kShown) StrAppend(&s, ",... (", jobs.size(), " jobs)");
  return s;
}

// Workers of `d`'s size all its eligible pools hold at their max, every node empty.
int64_t MaxWorkers(const ClusterSpec& spec, const Demand& d) {
  return sched::WorkersAtMax(spec, d.pools, d.gpus_per_worker);
}

// "a100 12/12, h100 4/4": the pools of `pools` against their max. `cache`
// keeps each set's text for the pass, which may report thousands of jobs.
const std::string& PoolsAtMax(const PassContext& ctx, sched::PoolMask pools,
                              absl::flat_hash_map<sched::PoolMask, std::string>* cache) {
  auto [it, fresh] = cache->try_emplace(pools);
  if (fresh) {
    std::vector<std::string> full;
    for (size_t p = 0; p < ctx.spec.pools.size(); ++p) {
      if (pools & sched::PoolBit(static_cast<int>(p))) {
        full.push_back(StrCat(ctx.spec.pools[p].name, " ", ctx.live[p], "/", ctx.max_nodes[p]));
      }
    }
    it->second = StrJoin(full, ", ");
  }
  return it->second;
}

// "train-7 (2x8 GPUs)".
std::string JobShape(const model::JobSpec& js) {
  return StrCat(js.name, " (", js.workers, "x", js.gpus_per_worker, " GPUs)");
}

// One action per set of pools, for the jobs left waiting for room in them, in
// queue order. A pass can leave 100,000 jobs waiting: an action and a line
// each would bury the log, and building them took a sixth of the pass.
void ReportAtMax(const PassContext& ctx, const std::vector<Demand>& waiting, ScalingPlan* plan) {
  constexpr size_t kNamed = 8;
  struct Group {
    size_t action;                        // index in plan->actions
    std::vector<const model::Job*> named;  // the first kNamed jobs
  };
  absl::flat_hash_map<sched::PoolMask, Group> groups;
  absl::flat_hash_map<sched::PoolMask, std::string> pools_text;
  for (const Demand& d : waiting) {
    auto [it, fresh] = groups.try_emplace(d.pools, Group{plan->actions.size(), {}});
    if (fresh) {
      Action a;
      a.kind = ActionKind::kAtMax;
      a.cause = StrCat("no pool has room for it (", PoolsAtMax(ctx, d.pools, &pools_text), ")");
      plan->actions.push_back(std::move(a));
    }
    plan->actions[it->second.action].jobs.push_back(d.id);
    if (it->second.named.size() < kNamed) it->second.named.push_back(d.job);
  }
  for (const auto& [pools, g] : groups) {
    Action& a = plan->actions[g.action];
    const size_t n = a.jobs.size();
    if (n == 1) {
      a.reason = AtMaxLine(g.named[0]->spec, a.cause);
      continue;
    }
    std::vector<std::string> named;
    for (const model::Job* j : g.named) named.push_back(JobShape(j->spec));
    a.reason = StrCat(n, " jobs wait: no pool has room for them (", pools_text.at(pools), "): ", StrJoin(named, ", "),
                      n > kNamed ? StrCat(" and ", n - kNamed, " more") : std::string());
  }
}

}  // namespace

std::string AtMaxLine(const model::JobSpec& js, std::string_view cause) {
  return StrCat("job ", JobShape(js), " waits: ", cause);
}

void ReportUnschedulable(PassContext* ctx, ScalingPlan* plan) {
  const ClusterSpec& spec = ctx->spec;
  // Those that could ever fit stay, in order, compacted in place. A queue
  // of thousands has a few shapes: each (pools, GPUs per worker) is summed
  // once.
  absl::flat_hash_map<std::pair<sched::PoolMask, int>, int64_t> at_max;
  std::pair<sched::PoolMask, int> last_shape{0, 0};  // the last shape asked, answered without a hash
  int64_t last_workers = 0;
  auto could_ever_fit = [&](const Demand& d) {
    if (d.pools == 0) return false;
    const auto shape = std::make_pair(d.pools, d.gpus_per_worker);
    if (shape != last_shape) {
      auto [it, fresh] = at_max.try_emplace(shape, 0);
      if (fresh) it->second = MaxWorkers(spec, d);
      last_shape = shape;
      last_workers = it->second;
    }
    return last_workers >= d.min_workers;
  };
  size_t left = 0;
  for (size_t i = 0; i < ctx->demands.size(); ++i) {
    const Demand& d = ctx->demands[i];
    if (could_ever_fit(d)) {
      if (left != i) ctx->demands[left] = d;  // most stay where they are
      ++left;
      continue;
    }
    const model::JobSpec& js = d.job->spec;
    Action a;
    a.kind = ActionKind::kUnschedulable;
    a.jobs.push_back(d.job->id);
    int largest = 0;
    for (const auto& p : spec.pools) largest = std::max(largest, p.type.gpus);
    if (d.pools == 0) {
      bool spot_only = false;
      for (const auto& p : spec.pools) spot_only |= p.type.gpus >= js.gpus_per_worker;
      a.reason = spot_only ? StrCat("job ", js.name, " needs ", js.gpus_per_worker,
                                    " GPUs per worker; only spot nodes are that large, and it may not run on spot")
                           : StrCat("job ", js.name, " needs ", js.gpus_per_worker,
                                    " GPUs per worker; the largest node has ", largest);
    } else {
      a.reason = StrCat("job ", js.name, " needs ", js.MinWorkers(), " workers x ", js.gpus_per_worker,
                        " GPUs; all pools together hold at most ", MaxWorkers(spec, d), " such workers at their max");
    }
    plan->actions.push_back(std::move(a));
  }
  ctx->demands.resize(left);
}

void ScaleUp::Evaluate(PassContext* ctx, ScalingPlan* plan, std::vector<bool>* blocked) const {
  blocked->assign(ctx->demands.size(), false);
  if (!o_.enabled || ctx->demands.empty()) return;
  const ClusterSpec& spec = ctx->spec;
  const int num_pools = static_cast<int>(spec.pools.size());
  const Timestamp now = ctx->now;

  // Spot stock-outs: a pool that just failed is not asked again until the
  // retry time; while spot is below its share, jobs that could use it wait
  // for the retry, up to the fallback time, then go to on-demand.
  std::vector<bool> spot_blocked(num_pools, false);
  sched::PoolMask spot_pools = 0, spot_out = 0;
  double spot_gpus = 0, elastic_gpus = 0;
  for (int p = 0; p < num_pools; ++p) {
    const model::NodePool& pool = spec.pools[p];
    if (pool.tier != model::Tier::kReserved) elastic_gpus += double{1} * ctx->live[p] * pool.type.gpus;
    if (pool.tier != model::Tier::kSpot) continue;
    spot_gpus += double{1} * ctx->live[p] * pool.type.gpus;
    spot_pools |= sched::PoolBit(p);
    if (!ctx->SpotOut(p)) continue;
    const model::PoolStatus& st = ctx->state.pools[p];
    if (now < st.last_failure + tiers_.spot_retry_after) {
      spot_blocked[p] = true;
      plan->next_wakeup = std::min(plan->next_wakeup, st.last_failure + tiers_.spot_retry_after);
      // Before the fallback time, jobs wait for the retry rather than go to
      // on-demand; after a retry the pool is asked again.
      if (now < st.unavailable_since + tiers_.spot_fallback_after) spot_out |= sched::PoolBit(p);
    }
  }
  const bool spot_below_share = elastic_gpus <= 0 || spot_gpus / elastic_gpus < tiers_.spot_share;
  std::vector<Demand> demands;
  std::vector<Demand> held;  // waiting for spot: not blocked, not served
  // A demand is held only while spot is out and below its share; otherwise
  // all of them are asked for, and 100,000 need not be copied.
  if (spot_out == 0 || !spot_below_share) {
    demands = std::move(ctx->demands);
    ctx->demands.clear();
  }
  for (const Demand& d : ctx->demands) {
    const sched::PoolMask usable_spot = d.pools & spot_pools;
    if (usable_spot == 0 || (usable_spot & ~spot_out) != 0 || !spot_below_share) {
      demands.push_back(d);
      continue;
    }
    held.push_back(d);
    // Every spot pool it could use is out: hold it until the fallback.
    Timestamp fallback = kInfiniteFuture, since = kInfiniteFuture;
    for (int p = 0; p < num_pools; ++p) {
      if (!(usable_spot & sched::PoolBit(p))) continue;
      since = std::min(since, ctx->state.pools[p].unavailable_since);
      fallback = std::min(fallback, ctx->state.pools[p].unavailable_since + tiers_.spot_fallback_after);
    }
    plan->next_wakeup = std::min(plan->next_wakeup, fallback);
    Action a;
    a.kind = ActionKind::kNote;
    a.jobs.push_back(d.job->id);
    a.reason = StrCat("job ", d.job->spec.name, " waits for spot capacity (none since ", FormatTimestamp(since),
                      "); falls back to on-demand at ", FormatTimestamp(fallback));
    plan->actions.push_back(std::move(a));
  }
  if (!held.empty()) {
    // A job with a demand that is asked for is not held for another.
    absl::flat_hash_set<const Job*> asked;
    for (const Demand& d : demands) asked.insert(d.job);
    std::erase_if(held, [&](const Demand& d) { return asked.contains(d.job); });
  }
  auto leave = [&](std::vector<Demand> unserved, bool exhausted) {
    blocked->assign(unserved.size(), exhausted);
    ctx->demands = std::move(unserved);
    for (const Demand& d : held) {
      ctx->demands.push_back(d);
      blocked->push_back(false);
    }
  };
  if (demands.empty()) {
    leave({}, false);
    return;
  }

  // Should we buy at all? The grace counts only jobs that need capacity.
  // Growth that running elastic jobs want counts like pending work.
  std::vector<const Job*> waiting, counted = ctx->pending;
  for (const Demand& d : demands) {
    waiting.push_back(d.job);
    if (!d.pending) counted.push_back(d.job);
  }
  const TriggerDecision trig = PendingTrigger(o_.trigger).Evaluate(counted, waiting, now);
  plan->next_wakeup = std::min(plan->next_wakeup, trig.next_check);
  if (!trig.fire) {
    leave(std::move(demands), false);
    return;
  }

  BinpackingEstimator estimator(o_.gang_aware, o_.egress_aware);
  sched::CapacitySnapshot& snap = ctx->Snap();
  model::NodeId next_template_id = -1;
  int pools_grown = 0;
  bool exhausted = false;
  std::vector<bool> grown(num_pools, false);
  const ExpanderContext ectx{spec, ctx->live, tiers_.spot_share};
  // Demands a round serves in full stay in `demands` until the rounds are
  // over (the estimator skips them), rather than 100,000 being compacted
  // after every round.
  size_t unserved = std::count_if(demands.begin(), demands.end(), [](const Demand& d) { return d.workers_left > 0; });
  bool committed = false;
  const size_t first_action = plan->actions.size();
  // Each round: every pool with room proposes an option; the expander chain
  // picks one; it is committed to the snapshot; repeat.
  while (true) {
    if (o_.max_pools_per_pass > 0 && pools_grown >= o_.max_pools_per_pass) {
      plan->next_wakeup = std::min(plan->next_wakeup, now + Seconds(1));  // the rest on the next pass
      break;
    }
    std::vector<ScaleUpOption> options;
    for (int p = 0; p < num_pools; ++p) {
      if (spec.pools[p].tier == model::Tier::kReserved || spot_blocked[p]) continue;  // a fixed quota; a stock-out
      if (!o_.buy_from.empty() && std::find(o_.buy_from.begin(), o_.buy_from.end(), p) == o_.buy_from.end()) continue;
      const int room = ctx->max_nodes[p] - ctx->live[p];
      // A full pool with no free GPU left in the what-if can serve nothing.
      if (room <= 0 && snap.pool_free(p) == 0 && !spec.pools[p].mig.enabled()) continue;
      sched::CapacitySnapshot::Fork fork(&snap);
      sched::SliceSnapshot slices = ctx->slices;
      model::NodeId tmp_id = next_template_id;
      ScaleUpOption o = estimator.Estimate(spec, p, std::max(0, room), demands, &snap, &slices, &tmp_id);
      if (!o.served.empty()) options.push_back(std::move(o));
    }
    if (options.empty()) {
      exhausted = true;
      break;
    }
    std::vector<const ScaleUpOption*> ptrs;
    for (const auto& o : options) ptrs.push_back(&o);
    const ExpanderChain::Choice choice = chain_.Choose(ptrs, ectx);
    const int pool = choice.option->pool;

    // Commit: the same estimate, on the snapshot itself this time. The room
    // is clamped as the option's was: a scheduled cap can put a pool's max
    // below its live nodes, and with a negative room the estimator would
    // serve nothing, not even from GPUs a shrink freed, and the rounds
    // would repeat the same choice for ever.
    ScaleUpOption o = estimator.Estimate(spec, pool, std::max(0, ctx->max_nodes[pool] - ctx->live[pool]), demands,
                                         &snap, &ctx->slices, &next_template_id);
    committed = true;
    std::vector<model::JobId> served;
    std::vector<const Job*> served_jobs;
    for (const auto& [idx, workers] : o.served) {
      Demand& d = demands[idx];
      const bool was_waiting = d.workers_left > 0;
      d.workers_left -= workers;
      if (was_waiting && d.workers_left <= 0) --unserved;
      served.push_back(d.id);
      served_jobs.push_back(d.job);
    }
    ctx->live[pool] += o.nodes;
    if (o.nodes == 0) {
      // The jobs ride on nodes an earlier round bought; nothing new to buy.
      for (auto id : served) plan->covered.emplace_back().job = id;
    } else {
      const model::NodePool& p = spec.pools[pool];
      Action a;
      a.kind = ActionKind::kScaleUp;
      a.pool = pool;
      a.count = o.nodes;
      a.jobs = served;
      a.reason = fmt::format("{}; +{} {} ({}, {:.4g} {}/h each) for {}; {:.3g} of {} new GPUs used; {}", trig.reason,
                             o.nodes, p.name, model::TierName(p.tier), p.price_per_hour, spec.currency,
                             JobList(served_jobs), o.useful_gpus, o.new_gpus, choice.why);
      plan->actions.push_back(std::move(a));
      if (!grown[pool]) {
        grown[pool] = true;
        ++pools_grown;
      }
    }
    if (unserved == 0) break;
  }
  std::erase_if(demands, [](const Demand& d) { return d.workers_left <= 0; });
  // Existing nodes the served jobs landed on are needed, not idle. Committed
  // rounds only take GPUs, so the nodes in use after the last round are
  // those of every round (new nodes have negative ids until they exist).
  // Of those, only the ones `needed` could be asked about go in (NeededAsked).
  if (committed) {
    for (int s = 0; s < snap.size(); ++s) {
      if (snap.absent(s)) {
        // A node of a sparse what-if no step touched: as it is in the state.
        if (static_cast<size_t>(s) < ctx->state.nodes.size() && ctx->InSparseWhatIf(s)) {
          const auto& n = ctx->index->node(s);
          if (n.free < n.gpus && ctx->NeededAsked(s)) ctx->needed.insert(n.id);
        }
        continue;
      }
      if (snap.id(s) >= 0 && snap.free(s) < snap.gpus(s)) ctx->NeedSlot(s);
    }
  }
  // Spares against slow boots: once per pool and pass, on its first buy,
  // within its max, now that `needed` holds every booting node a job waits for.
  if (o_.hedge.nodes > 0) {
    const BootHedge hedge(o_.hedge);
    std::vector<bool> hedged(num_pools, false);
    for (size_t i = first_action; i < plan->actions.size(); ++i) {
      Action& a = plan->actions[i];
      if (a.kind != ActionKind::kScaleUp || hedged[a.pool]) continue;
      hedged[a.pool] = true;
      a.spares = std::min(hedge.Spares(*ctx, a.pool), std::max(0, ctx->max_nodes[a.pool] - ctx->live[a.pool]));
      if (a.spares == 0) continue;
      a.count += a.spares;
      ctx->live[a.pool] += a.spares;
      a.reason += fmt::format("; +{} spare against slow boots (boot_hedge)", a.spares);
    }
  }
  // Whatever is left waits for room, never half-bought.
  if (exhausted) ReportAtMax(*ctx, demands, plan);
  leave(std::move(demands), exhausted);
}

}  // namespace tide::autoscale
