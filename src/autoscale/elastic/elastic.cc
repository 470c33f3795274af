#include "autoscale/elastic/elastic.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "core/strings.h"
#include "sched/eligibility.h"

namespace tide::autoscale {

using model::Job;
using model::JobState;
using model::NodeState;

void RescaleFor(const ElasticOptions& o, int reference, int workers, int64_t* global_batch, double* lr) {
  *global_batch = int64_t{o.per_worker_batch} * workers;
  const double ratio = static_cast<double>(workers) / std::max(1, reference);
  *lr = o.lr_rule == LrRule::kLinear ? o.base_lr * ratio : o.base_lr * std::sqrt(ratio);
}

namespace {

// Enters in ctx->needed the booting (or idle) nodes of `pools` with room for
// `workers` workers of `gpus_per_worker` GPUs, by slot order.
void NeedBootingFor(PassContext* ctx, sched::PoolMask pools, int gpus_per_worker, int64_t workers) {
  const sched::CapacitySnapshot& snap = ctx->Snap();
  for (int s = 0; s < snap.size() && workers > 0; ++s) {
    if (snap.absent(s) || !(pools & sched::PoolBit(snap.pool(s))) || !ctx->NeededAsked(s)) continue;
    const int fit = snap.free(s) / gpus_per_worker;
    if (fit <= 0) continue;
    ctx->needed.insert(snap.id(s));
    workers -= fit;
  }
}

// The elastic jobs, each read for a few fields (its state, sizes and flags,
// on four cache lines of a large record). The jobs lie apart in memory, so
// each job's lines are asked for a few jobs before it is read, rather than
// waiting on memory job after job.
void AskAhead(const std::vector<const Job*>& jobs, size_t i) {
  constexpr size_t kAhead = 6;
  if (i + kAhead >= jobs.size()) return;
  const Job& a = *jobs[i + kAhead];
  __builtin_prefetch(&a.state);
  __builtin_prefetch(&a.spec.max_workers);
  __builtin_prefetch(&a.spec.is_protected);
}
template <typename F>
void ForEachElastic(const std::vector<const Job*>& jobs, F&& f) {
  for (size_t i = 0; i < jobs.size(); ++i) {
    AskAhead(jobs, i);
    f(*jobs[i]);
  }
}

// GPUs of a ready node's slot free now: unallocated in the live state and
// not yet taken by a resize earlier in this pass.
int FreeNow(const PassContext& ctx, int slot) {
  const int free = ctx.NodeFree(slot);
  if (ctx.taken_now.empty()) return free;
  const auto t = ctx.taken_now.find(slot);
  return free - (t == ctx.taken_now.end() ? 0 : t->second);
}

// Slots of ready nodes (growth lands only where a node is up) with a GPU
// free now. A pass only takes GPUs free now, never gives them, so a node
// left out here could hold no worker later in the pass either.
std::vector<int> ReadySlots(const PassContext& ctx) {
  std::vector<int> slots;
  if (const model::StateIndex* x = ctx.index) {
    x->ready_free().ForEach([&](size_t pos) {
      const auto& n = x->node(pos);
      if (n.noticed || ctx.leaving.contains(n.id)) return;
      if (const int slot = ctx.SlotOfFreeNode(pos); slot >= 0 && FreeNow(ctx, slot) > 0) {
        slots.push_back(slot);
      }
    });
    if (!std::is_sorted(slots.begin(), slots.end())) std::sort(slots.begin(), slots.end());
    return slots;
  }
  for (const auto& n : ctx.state.nodes) {
    if (n.free_gpus <= 0 || n.state != NodeState::kReady || n.interrupt_at != kInfiniteFuture || ctx.leaving.contains(n.id)) {
      continue;
    }
    if (const int slot = ctx.SlotOf(n.id); slot >= 0 && FreeNow(ctx, slot) > 0) slots.push_back(slot);
  }
  if (!std::is_sorted(slots.begin(), slots.end())) std::sort(slots.begin(), slots.end());
  return slots;
}

// The ready slots of the pools in `mask` (a job's eligible pools).
std::vector<int> EligibleSlots(const PassContext& ctx, const std::vector<int>& ready, sched::PoolMask mask) {
  std::vector<int> out;
  for (int s : ready) {
    if (mask & sched::PoolBit(ctx.PoolOfSlot(s))) out.push_back(s);
  }
  return out;
}

// Places up to `workers` workers on `slots` using only GPUs free now: the
// what-if also counts GPUs that stopping or ending jobs give back soon, which
// a resize cannot use yet. Takes them from the what-if too.
int PlaceOnFreeNow(PassContext* ctx, const std::vector<int>& slots, int g, int workers,
                   std::vector<sched::SlotShare>* out) {
  std::vector<int> free_now;
  free_now.reserve(slots.size());
  for (int s : slots) free_now.push_back(FreeNow(*ctx, s));
  std::vector<sched::SlotShare> shares;
  const int placed = ctx->Snap().PlaceOnSlots(slots, free_now, g, workers, &shares);
  for (const auto& sh : shares) ctx->taken_now[sh.slot] += sh.workers * g;
  out->insert(out->end(), shares.begin(), shares.end());
  return placed;
}

// Picks `count` workers of `j` to remove, from the nodes where it has the
// fewest (to free whole nodes), and gives their GPUs back to the what-if.
std::vector<model::NodeShare> RemoveWorkers(PassContext* ctx, const Job& j, int count) {
  std::vector<model::NodeShare> alloc(j.alloc.begin(), j.alloc.end()), out;
  std::sort(alloc.begin(), alloc.end(), [](const auto& x, const auto& y) {
    return x.workers != y.workers ? x.workers < y.workers : x.node > y.node;
  });
  for (const auto& sh : alloc) {
    if (count == 0) break;
    const int k = std::min(count, sh.workers);
    out.push_back({sh.node, k});
    ctx->GiveTo(sh.node, k * j.spec.gpus_per_worker);
    count -= k;
  }
  return out;
}

}  // namespace

bool ElasticResizer::Settled(const PassContext& ctx, const Job& j, ScalingPlan* plan) const {
  // Nothing is read until the run's data loading is over (warm-up after a
  // start) and a resize has had time to show its effect (cooldown).
  const Timestamp settled = std::max(j.started + u_.warmup,
                                     j.last_resize == kInfinitePast ? kInfinitePast : j.last_resize + e_.cooldown);
  if (ctx.now < settled) {
    plan->next_wakeup = std::min(plan->next_wakeup, settled);
    return false;
  }
  return true;
}

Action ElasticResizer::Resize(const PassContext& ctx, const Job& j, int workers, std::string why) const {
  Action a;
  a.kind = ActionKind::kResize;
  a.jobs.push_back(j.id);
  a.resize.old_workers = j.Workers();
  a.resize.workers = workers;
  RescaleFor(e_, j.spec.workers, workers, &a.resize.global_batch, &a.resize.learning_rate);
  int64_t old_batch;
  double old_lr;
  RescaleFor(e_, j.spec.workers, j.Workers(), &old_batch, &old_lr);
  a.reason = fmt::format("{} {} -> {} workers ({}): global batch {} -> {}, learning rate {:.4g} -> {:.4g} ({} rule)",
                         j.spec.name, j.Workers(), workers, why, old_batch, a.resize.global_batch, old_lr,
                         a.resize.learning_rate, e_.lr_rule == LrRule::kLinear ? "linear" : "square-root");
  return a;
}

void ElasticResizer::BeforeScaleUp(PassContext* ctx, ScalingPlan* plan) const {
  const model::MetricsView* m = ctx->state.metrics;
  if (!u_.enabled || m == nullptr) return;
  // The ready slots with a GPU free, found when a job first wants to grow:
  // nothing before that changes which they are (a shrink gives GPUs to the
  // what-if, not to the nodes).
  std::optional<std::vector<int>> ready_slots;
  auto ready = [&]() -> const std::vector<int>& {
    if (!ready_slots) ready_slots = ReadySlots(*ctx);
    return *ready_slots;
  };
  // Only asynchronous jobs are resized for utilization.
  for (size_t i = 0; i < ctx->elastic_async.size(); ++i) {
    AskAhead(ctx->elastic_async, i);
    const Job& j = *ctx->elastic_async[i];
    // A resize pauses the job to re-rendezvous: protected jobs are left alone.
    if (j.state != JobState::kRunning || !j.spec.elastic() || !j.spec.async || j.spec.is_protected ||
        ctx->touched.contains(j.id) || ctx->Freeing(j)) {
      continue;
    }
    if (!Settled(*ctx, j, plan)) continue;
    const int w = j.Workers();
    // Grown, yet utilization stays low: the input pipeline or the network is the limit.
    if (!j.bottleneck && j.last_resize != kInfinitePast && w > j.workers_before_resize) {
      const Timestamp due = m->NextBelowFor(j.id, u_.bottleneck_below, u_.bottleneck_for, ctx->now);
      if (due <= ctx->now) {
        Action note;
        note.kind = ActionKind::kNote;
        note.bottleneck = true;
        note.jobs.push_back(j.id);
        note.reason = StrCat("job ", j.spec.name, ": utilization stayed below ", std::lround(u_.bottleneck_below * 100),
                             "% for ", FormatDuration(u_.bottleneck_for), " after growing from ",
                             j.workers_before_resize, " to ", w,
                             " workers: a data-loading or communication bottleneck; more workers will not help, "
                             "so tide gives back the growth and will not grow it again");
        plan->actions.push_back(std::move(note));
        // Undo the growth that did not help.
        Action undo = Resize(*ctx, j, std::max(j.spec.MinWorkers(), j.workers_before_resize), "bottleneck");
        undo.resize.remove = RemoveWorkers(ctx, j, w - undo.resize.workers);
        ctx->touched.insert(j.id);
        plan->actions.push_back(std::move(undo));
        continue;
      }
      plan->next_wakeup = std::min(plan->next_wakeup, due);
    }
    // Waste: shrink.
    if (w > j.spec.MinWorkers() && !j.spec.is_protected) {
      const Timestamp due = m->NextBelowFor(j.id, u_.low, u_.low_for, ctx->now);
      if (due <= ctx->now) {
        const int target = std::max(j.spec.MinWorkers(), w / 2);
        Action a = Resize(*ctx, j, target,
                          StrCat("utilization below ", std::lround(u_.low * 100), "% for ", FormatDuration(u_.low_for)));
        a.resize.remove = RemoveWorkers(ctx, j, w - target);
        ctx->touched.insert(j.id);
        plan->actions.push_back(std::move(a));
        continue;
      }
      plan->next_wakeup = std::min(plan->next_wakeup, due);
    }
    // Pressure: grow.
    if (w < j.spec.MaxWorkers() && !j.bottleneck) {
      const Timestamp due = m->NextAboveFor(j.id, u_.high, u_.high_for, ctx->now);
      if (due > ctx->now) {
        plan->next_wakeup = std::min(plan->next_wakeup, due);
        continue;
      }
      const int target = std::min(j.spec.MaxWorkers(), 2 * w);
      const int extra = target - w;
      const std::string why =
          StrCat("utilization above ", std::lround(u_.high * 100), "% for ", FormatDuration(u_.high_for));
      // Asynchronous work can grow by any number of workers: take what fits
      // on running nodes now.
      std::vector<sched::SlotShare> shares;
      const std::vector<int> slots = EligibleSlots(*ctx, ready(), sched::EligiblePools(ctx->spec, j.spec));
      const int placed = PlaceOnFreeNow(ctx, slots, j.spec.gpus_per_worker, extra, &shares);
      if (placed > 0) {
        Action a = Resize(*ctx, j, w + placed, why);
        for (const auto& s : shares) {
          a.resize.add.push_back({ctx->Snap().id(s.slot), s.workers});
          ctx->NeedSlot(s.slot);  // busy from now on: not idle for release
        }
        ctx->touched.insert(j.id);
        plan->actions.push_back(std::move(a));
      }
      // For the rest, buy only whole nodes' worth: a node bought for a few
      // workers would mostly idle. Capacity already booting counts first.
      const int rest = extra - placed;
      const sched::PoolMask mask = sched::EligiblePools(ctx->spec, j.spec);
      int per_node = 0;
      for (size_t p = 0; p < ctx->spec.pools.size(); ++p) {
        if (mask & sched::PoolBit(static_cast<int>(p))) {
          per_node = std::max(per_node, ctx->spec.pools[p].type.gpus / j.spec.gpus_per_worker);
        }
      }
      const int64_t booting = ctx->Snap().Slots(mask, j.spec.gpus_per_worker);
      // The booting nodes the growth counts on are waited for: boot spares
      // must not release them as nobody's, to be bought again next pass.
      NeedBootingFor(ctx, mask, j.spec.gpus_per_worker, std::min<int64_t>(rest, booting));
      const int64_t whole = per_node > 0 ? (rest - booting) / per_node * per_node : 0;
      if (whole > 0) ctx->demands.push_back(Demand::For(&j, mask, static_cast<int>(whole)));
    }
  }
}

void ElasticResizer::AfterScaleUp(PassContext* ctx, const std::vector<Demand>& unserved, ScalingPlan* plan) const {
  if (!e_.enabled) return;
  // The jobs that could give workers back at all, in snapshot order: few, so
  // each waiting job's search below costs little even behind 100,000 others.
  // Listed only if some waiting job is left to make room for.
  std::vector<const Job*> shrinkable;
  if (std::any_of(unserved.begin(), unserved.end(), [](const Demand& d) { return d.pending; })) {
    ForEachElastic(ctx->elastic, [&](const Job& j) {
      if (j.state == JobState::kRunning && j.spec.elastic() && !j.spec.is_protected &&
          j.Workers() > j.spec.MinWorkers() && ctx->now >= j.last_resize + e_.cooldown) {
        shrinkable.push_back(&j);
      }
    });
  }
  // Shrink elastic jobs for waiting work no pool can be grown for.
  for (const Demand& d : unserved) {
    if (!d.pending) continue;  // growth wants do not shrink others
    sched::CapacitySnapshot& snap = ctx->Snap();
    const int g = d.gpus_per_worker, w = d.min_workers;
    sched::CapacitySnapshot::Fork fork(&snap);
    std::vector<Action> resizes;
    for (const Job* jp : shrinkable) {
      const Job& j = *jp;
      if (snap.Slots(d.pools, g) >= w) break;
      if (ctx->touched.contains(j.id) || ctx->Freeing(j) || j.priority > d.priority) continue;
      std::vector<model::NodeShare> removed;
      int can = j.Workers() - j.spec.MinWorkers();
      for (const auto& sh : j.alloc) {
        const int slot = ctx->SlotOf(sh.node);
        if (can == 0 || slot < 0 || !(d.pools & sched::PoolBit(snap.pool(slot)))) continue;
        int k = 0;
        while (k < std::min(can, sh.workers) && snap.Slots(d.pools, g) < w) {
          snap.Give(slot, j.spec.gpus_per_worker);
          ++k;
        }
        if (k > 0) removed.push_back({sh.node, k});
        can -= k;
      }
      if (removed.empty()) continue;
      int gone = 0;
      for (const auto& r : removed) gone += r.workers;
      Action a = Resize(*ctx, j, j.Workers() - gone, StrCat("making room for ", d.job->spec.name));
      a.resize.remove = removed;
      resizes.push_back(std::move(a));
    }
    if (snap.Slots(d.pools, g) < w) continue;  // shrinking cannot make room: leave it
    std::vector<sched::SlotShare> shares;
    snap.PlacePreferring(sched::PlacementPreference(ctx->spec, d.job->spec, d.pools), g, w, &shares);
    fork.Commit();
    for (auto& a : resizes) {
      ctx->touched.insert(a.jobs[0]);
      plan->actions.push_back(std::move(a));
    }
    plan->covered.emplace_back().job = d.job->id;
  }
  // Grow into free capacity on running nodes when nothing is waiting for it.
  if (!ctx->demands.empty() || !unserved.empty()) return;
  // The jobs that could grow now. One still cooling down from its last
  // resize or start is only a time to look again (the loop below neither
  // stops early nor reads the wake-up, so this is as if it were tried there).
  std::vector<const Job*> growable;
  ForEachElastic(ctx->elastic_below_max, [&](const Job& j) {
    if (j.state != JobState::kRunning || !j.spec.elastic() || j.spec.is_protected || j.bottleneck ||
        !j.BelowMaxWorkers() || ctx->touched.contains(j.id) || ctx->Freeing(j)) {
      return;
    }
    if (ctx->now < j.last_resize + e_.cooldown || ctx->now < j.started + e_.cooldown) {
      plan->next_wakeup = std::min(plan->next_wakeup, std::max(j.last_resize, j.started) + e_.cooldown);
      return;
    }
    growable.push_back(&j);
  });
  std::sort(growable.begin(), growable.end(), [](const Job* a, const Job* b) {
    return a->priority != b->priority ? a->priority > b->priority : a->id < b->id;
  });
  if (growable.empty()) return;
  // Per pool, the most GPUs a worker could get on one slot that growth may
  // use (PlaceOnFreeNow's: free in the what-if and free now): a job whose
  // pools offer fewer than a worker needs cannot grow, and is not tried.
  // Worked out again after each growth, which takes some. With an index,
  // `most` starts as the bound its counts give (the most free on one ready
  // node with no notice, partly used unless reserved), which nothing in the
  // pass can raise: the ready slots are looked at only once a job passes it.
  std::optional<std::vector<int>> ready_slots;
  auto ready = [&]() -> const std::vector<int>& {
    if (!ready_slots) ready_slots = ReadySlots(*ctx);
    return *ready_slots;
  };
  std::vector<int> most;
  auto work_out_most = [&] {
    most.assign(ctx->spec.pools.size(), 0);
    for (int s : ready()) {
      const int p = ctx->PoolOfSlot(s);
      if (ctx->spec.pools[p].tier != model::Tier::kReserved && ctx->NodeIdle(s)) continue;
      const int now_free = std::max(0, FreeNow(*ctx, s));
      // A what-if not built yet holds at least what is free now: nothing has taken from it.
      most[p] = std::max(most[p], ctx->HasSnap() ? std::min(ctx->Snap().free(s), now_free) : now_free);
    }
  };
  if (const model::StateIndex* x = ctx->index) {
    most.assign(ctx->spec.pools.size(), 0);
    for (size_t p = 0; p < most.size(); ++p) {
      most[p] = x->MostFree(static_cast<int>(p), ctx->spec.pools[p].tier == model::Tier::kReserved);
    }
  } else {
    work_out_most();
  }
  sched::EligibilityMemo eligible(ctx->spec);  // the growable jobs have a few shapes
  for (const Job* j : growable) {
    // Only GPUs paid for anyway: reserved nodes, or nodes busy with other work.
    // An idle on-demand node is better released than kept for growth.
    const sched::PoolMask mask = eligible(j->spec);
    auto room = [&] {
      for (size_t p = 0; p < most.size(); ++p) {
        if ((mask & sched::PoolBit(static_cast<int>(p))) && most[p] >= j->spec.gpus_per_worker) return true;
      }
      return false;
    };
    if (!room()) continue;
    if (!ready_slots) {
      work_out_most();  // the bound let this job through: the slots tell
      if (!room()) continue;
    }
    if (ready().empty()) continue;  // no GPU is free now on a ready node
    std::vector<int> slots;
    for (int s : EligibleSlots(*ctx, ready(), mask)) {
      const bool reserved = ctx->spec.pools[ctx->PoolOfSlot(s)].tier == model::Tier::kReserved;
      if (reserved || !ctx->NodeIdle(s)) slots.push_back(s);
    }
    std::vector<sched::SlotShare> shares;
    const int placed =
        PlaceOnFreeNow(ctx, slots, j->spec.gpus_per_worker, j->spec.MaxWorkers() - j->Workers(), &shares);
    if (placed == 0) continue;
    Action a = Resize(*ctx, *j, j->Workers() + placed, "free capacity on running nodes");
    for (const auto& s : shares) {
      a.resize.add.push_back({ctx->Snap().id(s.slot), s.workers});
      ctx->NeedSlot(s.slot);
    }
    ctx->touched.insert(j->id);
    plan->actions.push_back(std::move(a));
    work_out_most();
  }
}

}  // namespace tide::autoscale
