#include "autoscale/coverage.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"

#include "sched/eligibility.h"
#include "sched/queue.h"

namespace tide::autoscale {

using model::JobState;
using model::NodeState;

Duration ReleaseLookahead(const ScaleUpOptions& o, const PassContext& ctx) {
  if (o.release_lookahead) return *o.release_lookahead;
  Duration fastest = Duration::max();
  for (size_t p = 0; p < ctx.spec.pools.size(); ++p) {
    const auto& pool = ctx.spec.pools[p];
    if (pool.tier == model::Tier::kReserved || ctx.live[p] >= ctx.max_nodes[p]) continue;
    fastest = std::min(fastest, pool.boot_delay.Expected());
  }
  return fastest == Duration::max() ? Duration{0} : fastest;
}

namespace {

// How many demands ahead the gather into queue order asks for memory.
constexpr size_t kAhead = 8;

}  // namespace

void IndexState(PassContext* ctx) {
  const int num_pools = static_cast<int>(ctx->spec.pools.size());
  ctx->live.assign(num_pools, 0);
  ctx->extra_nodes.assign(num_pools, 0);
  ctx->index = model::IndexFor(ctx->state);
  if (ctx->index != nullptr && !ctx->index->nodes_in_id_order()) ctx->index = nullptr;
  sched::EligibilityMemo eligible(ctx->spec);
  if (const model::StateIndex* x = ctx->index) {
    // The same facts, without a scan: pending jobs come in queue order.
    const std::vector<model::Job>& jobs = ctx->state.jobs;
    for (int p = 0; p < num_pools; ++p) ctx->live[p] = x->live(p);
    ctx->active_.clear();
    ctx->active_known_ = false;  // listed when first asked
    ctx->elastic.clear();
    x->elastic().ForEach([&](size_t pos) { ctx->elastic.push_back(&jobs[pos]); });
    ctx->elastic_async.clear();
    x->elastic_async().ForEach([&](size_t pos) { ctx->elastic_async.push_back(&jobs[pos]); });
    ctx->elastic_below_max.clear();
    x->elastic_below_max().ForEach([&](size_t pos) { ctx->elastic_below_max.push_back(&jobs[pos]); });
    ctx->pending.clear();
    ctx->pending.reserve(x->pending().size());
    ctx->queued.clear();
    ctx->queued.reserve(x->pending().size());
    // Each demand is made from the index's compact facts of the job, not
    // from the job (six cache lines, in queue order, which is not memory
    // order); the facts are fetched a few jobs ahead.
    auto ahead = x->pending().begin();
    for (size_t k = 0; k < kAhead && ahead != x->pending().end(); ++k) ++ahead;
    for (const auto& q : x->pending()) {
      if (ahead != x->pending().end()) __builtin_prefetch(&x->pending_facts((ahead++)->pos));
      const model::Job* j = &jobs[q.pos];
      const model::StateIndex::PendingFacts& f = x->pending_facts(q.pos);
      const sched::PoolMask pools = eligible.Of(f.gpus_per_worker, f.priority_class, f.slice_units, f.preemptible,
                                                f.is_protected, f.restricted, j->spec);
      ctx->pending.push_back(j);
      ctx->queued.push_back(Demand{j, q.id, pools, f.workers, f.gpus_per_worker, f.slice_units, f.min_workers,
                                   q.priority, true, f.moves_data, q.submit});
    }
    return;
  }
  for (const auto& n : ctx->state.nodes) {
    if (n.state != NodeState::kTerminated) ++ctx->live[n.pool];
  }
  // One scan in memory order: the jobs that hold GPUs, and each pending job's
  // key and demand. Queue order is not memory order, and a job is 392 bytes:
  // reading 100,000 of them in queue order waits on memory at every job.
  const std::vector<model::Job>& jobs = ctx->state.jobs;
  std::vector<sched::QueueKey> keys;
  std::vector<Demand> demands;
  keys.reserve(jobs.size());
  demands.reserve(jobs.size());
  ctx->active_.clear();
  ctx->active_known_ = true;
  for (size_t n = 0; n < jobs.size(); ++n) {
    const model::Job& j = jobs[n];
    if (j.state == JobState::kPending) {
      keys.push_back(sched::QueueKey::Of(j, static_cast<uint32_t>(demands.size())));
      demands.push_back(Demand::For(&j, eligible(j.spec), j.spec.workers));
    } else if (j.state != JobState::kCompleted) {
      ctx->active_.push_back(&j);
    }
  }
  ctx->elastic.clear();
  ctx->elastic_async.clear();
  ctx->elastic_below_max.clear();
  for (const model::Job* j : ctx->active_) {
    if (!j->spec.elastic()) continue;
    ctx->elastic.push_back(j);
    if (j->spec.async) ctx->elastic_async.push_back(j);
    if (j->BelowMaxWorkers()) ctx->elastic_below_max.push_back(j);
  }
  const std::vector<uint32_t> order = sched::QueueOrder(keys);
  ctx->pending.clear();
  ctx->pending.reserve(order.size());
  ctx->queued.clear();
  ctx->queued.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (i + kAhead < order.size()) __builtin_prefetch(&demands[order[i + kAhead]]);
    const Demand& d = demands[order[i]];
    ctx->queued.push_back(d);
    ctx->pending.push_back(d.job);
  }
}

namespace {

// Templates for the nodes this pass already buys (scheduled pre-warm): the
// what-if counts them as booting.
// `dense_ctx`: the context of a dense what-if, which lists its slots' nodes.
void AddPrewarmTemplates(const PassContext& ctx, sched::CapacitySnapshot* snap, PassContext* dense_ctx) {
  model::NodeId template_id = -1000000;
  for (int p = 0; p < static_cast<int>(ctx.spec.pools.size()); ++p) {
    for (int k = 0; k < ctx.extra_nodes[p]; ++k) {
      snap->AddNode(template_id--, p, ctx.spec.pools[p].type.gpus, ctx.spec.pools[p].type.gpus);
      if (dense_ctx != nullptr) dense_ctx->AddTemplateToWhatIf();
    }
  }
}

// Gives job `j`'s whole GPUs back to the what-if, on the nodes it holds.
void GiveBack(const PassContext& ctx, const model::Job& j) {
  for (const auto& sh : j.alloc) {
    if (sh.units > 0) continue;  // a slice frees a whole GPU only sometimes; not counted
    ctx.GiveTo(sh.node, sh.workers * j.spec.gpus_per_worker);
  }
}

// Calls f(job) for each job whose GPUs the sparse what-if counts as given
// back, without reading every running job: the stopping ones, those this
// pass stopped before coverage, then running ones by expected end up to the
// lookahead (the entries say all that is asked of a job until it is given
// back). The order does not matter: the GPUs are only added up.
template <typename F>
void ForEachFreeing(const PassContext& ctx, F&& f) {
  const model::StateIndex* x = ctx.index;
  const std::vector<model::Job>& jobs = ctx.state.jobs;
  x->stopping().ForEach([&](size_t pos) { f(jobs[pos]); });
  for (model::JobId id : ctx.stopped_before()) {
    const int pos = x->JobPos(id);
    if (pos >= 0 && x->active().contains(pos) && !x->stopping().contains(pos)) f(jobs[pos]);
  }
  if (ctx.lookahead().count() <= 0) return;
  // A job's record and its shares lie apart, in no order: each is asked for
  // a few jobs ahead (the record's two lines read here kAhead ahead, its
  // shares half as far).
  absl::InlinedVector<uint32_t, 64> due;
  for (const auto& e : x->ends()) {
    if (!e.running || ctx.stopped_before().contains(e.id)) continue;
    if (e.at > ctx.now + ctx.lookahead()) break;
    due.push_back(e.pos);
  }
  for (size_t i = 0; i < due.size(); ++i) {
    if (i + kAhead < due.size()) {
      __builtin_prefetch(&jobs[due[i + kAhead]].alloc);
      __builtin_prefetch(&jobs[due[i + kAhead]].spec.gpus_per_worker);  // another line of the record
    }
    if (i + kAhead / 2 < due.size()) __builtin_prefetch(jobs[due[i + kAhead / 2]].alloc.data());
    f(jobs[due[i]]);
  }
}

}  // namespace

void BuildSparseWhatIf(const PassContext& ctx) {
  const model::ClusterSpec& spec = ctx.spec;
  const model::StateIndex* x = ctx.index;
  const int num_pools = static_cast<int>(spec.pools.size()), max_gpus = std::max(1, spec.MaxGpusPerNode());
  std::unique_ptr<sched::CapacitySnapshot> owned;
  if (ctx.spare != nullptr) owned = ctx.spare->Take();  // the last pass's, made anew
  if (owned == nullptr || owned->num_pools() != num_pools || owned->max_gpus_per_node() != max_gpus) {
    owned = std::make_unique<sched::CapacitySnapshot>(num_pools, max_gpus);
  }
  sched::CapacitySnapshot& snap = *owned;
  // Every node has a slot at its position; the ready and booting ones without
  // notice that have a GPU free are filled in now, and a busy one when a step
  // first asks for it (SlotOf). Slots stay in id order, so best fit chooses
  // as it would among them all, and a full node could hold nothing anyway.
  snap.ResetAbsent(static_cast<int>(ctx.state.nodes.size()));
  auto fill = [&](size_t pos) {
    if (!ctx.InSparseWhatIf(pos)) return;
    const auto& n = x->node(pos);
    snap.Materialize(static_cast<int>(pos), n.id, n.pool, n.gpus, n.free);
  };
  x->ready_free().ForEach(fill);
  x->booting_free().ForEach(fill);
  AddPrewarmTemplates(ctx, &snap, nullptr);
  ctx.SetSparse(std::move(owned));
  // The freeing jobs' GPUs. No fork is open.
  ForEachFreeing(ctx, [&](const model::Job& j) { GiveBack(ctx, j); });
}

int64_t SparseWhatIfFreeNow(const PassContext& ctx) {
  int64_t free = ctx.SparseFreeNow();
  for (size_t p = 0; p < ctx.spec.pools.size(); ++p) {
    free += int64_t{ctx.extra_nodes[p]} * ctx.spec.pools[p].type.gpus;
  }
  return free;
}

int64_t SparseWhatIfFree(const PassContext& ctx) {
  // What BuildSparseWhatIf adds up, node by node: the GPUs free now on the
  // nodes it holds, the templates', and what the freeing jobs give back to
  // the nodes it holds (GiveBack, through GiveTo).
  int64_t free = SparseWhatIfFreeNow(ctx);
  const model::StateIndex* x = ctx.index;
  ForEachFreeing(ctx, [&](const model::Job& j) {
    for (const auto& sh : j.alloc) {
      if (sh.units > 0) continue;
      const int pos = x->NodePos(sh.node);
      if (pos >= 0 && ctx.InSparseWhatIf(static_cast<size_t>(pos))) free += int64_t{sh.workers} * j.spec.gpus_per_worker;
    }
  });
  return free;
}

void BuildCoverage(const ScaleUpOptions& o, PassContext* ctx, ScalingPlan* plan) {
  const model::ClusterSpec& spec = ctx->spec;
  const model::ClusterState& state = ctx->state;
  const int num_pools = static_cast<int>(spec.pools.size());
  const Timestamp now = ctx->now;
  const Duration lookahead = ReleaseLookahead(o, *ctx);

  const model::StateIndex* x = ctx->index;
  const bool any_mig =
      std::any_of(spec.pools.begin(), spec.pools.end(), [](const model::NodePool& p) { return p.mig.enabled(); });
  if (x != nullptr && !any_mig) {
    // Sparse (PassContext::Snap): built here only if a job waits; otherwise
    // when a later step first needs it, from the view kept now.
    ctx->MakeSparse(lookahead);
    if (ctx->pending.empty()) return;
    if (lookahead.count() > 0) {
      // The what-if changes when the first running job's end beyond the
      // lookahead enters it.
      for (const auto& e : x->ends()) {
        if (!e.running || ctx->touched.contains(e.id) || e.at <= now + lookahead) continue;
        plan->next_wakeup = std::min(plan->next_wakeup, e.at - lookahead);
        break;
      }
    }
  } else {
    auto owned = std::make_unique<sched::CapacitySnapshot>(num_pools, std::max(1, spec.MaxGpusPerNode()));
    sched::CapacitySnapshot& snap = *owned;
    std::vector<const model::Node*> usable;
    for (const auto& n : state.nodes) {
      const bool leaving = n.interrupt_at != kInfiniteFuture || ctx->leaving.contains(n.id);
      if ((n.state == NodeState::kReady || n.state == NodeState::kProvisioning) && !leaving) usable.push_back(&n);
    }
    auto by_id = [](const model::Node* a, const model::Node* b) { return a->id < b->id; };
    if (!std::is_sorted(usable.begin(), usable.end(), by_id)) std::sort(usable.begin(), usable.end(), by_id);
    snap.reserve(usable.size());
    for (const auto* n : usable) ctx->AddToWhatIf(n, snap.AddNode(n->id, n->pool, n->gpus, n->free_gpus));
    AddPrewarmTemplates(*ctx, &snap, ctx);
    ctx->SetDense(std::move(owned));
    // Capacity that stopping jobs give back at once, and running jobs before
    // a new node could boot.
    for (const model::Job* jp : ctx->active()) {
      const model::Job& j = *jp;
      bool freeing = j.state == JobState::kStopping || ctx->touched.contains(j.id);
      if (j.state == JobState::kRunning && !freeing && lookahead.count() > 0) {
        if (j.expected_end > now + lookahead) {
          // The what-if changes when this job's end enters the lookahead.
          if (!ctx->pending.empty()) plan->next_wakeup = std::min(plan->next_wakeup, j.expected_end - lookahead);
          continue;
        }
        freeing = true;
      }
      if (!freeing) continue;
      ctx->FreeingJob(j.id);
      GiveBack(*ctx, j);
    }
  }
  sched::CapacitySnapshot& snap = ctx->Snap();

  ctx->slices.AddFrom(state, ctx->slot_index());  // MIG pools only: never sparse

  // Pending jobs that already fit need nothing bought. Only the jobs that are
  // placed or hold slices are read here: the rest is in their demands. What
  // is left is kept in place, in queue order, and becomes ctx->demands.
  std::vector<sched::SlotShare> shares;
  std::vector<Demand> queued = std::move(ctx->queued);
  ctx->queued.clear();
  size_t left = 0;
  for (Demand& d : queued) {
    const model::Job* j = d.job;
    if (d.slice_units > 0) {
      Claim c{j->id, {}};
      std::vector<model::NodeShare> placed;
      if (sched::PlaceSliceJob(spec, j->spec, &ctx->slices, &snap, &placed)) {
        c.shares.assign(placed.begin(), placed.end());
        for (const auto& sh : c.shares) ctx->needed.insert(sh.node);
        plan->covered.push_back(std::move(c));
      } else {
        queued[left++] = d;
      }
      continue;
    }
    const int g = d.gpus_per_worker;
    const int64_t slots = snap.total_free() == 0 ? 0 : snap.Slots(d.pools, g);
    int fit = 0;
    if (o.gang_aware) {
      // An elastic job is covered once its minimum fits; it grows later. (A
      // job that is not elastic has min_workers == workers.)
      if (slots >= d.workers_left) {
        fit = d.workers_left;
      } else if (slots >= d.min_workers) {
        fit = static_cast<int>(slots);
      }
    } else {
      fit = static_cast<int>(std::min<int64_t>(slots, d.workers_left));
    }
    if (fit > 0) {
      shares.clear();
      const auto preference = sched::PlacementPreference(spec, j->spec, d.pools);
      snap.PlacePreferring(preference, g, fit, &shares);
      Claim c{j->id, {}};
      for (const auto& s : shares) {
        c.shares.push_back({snap.id(s.slot), s.workers});
        ctx->NeedSlot(s.slot);
      }
      plan->covered.push_back(std::move(c));
      d.workers_left = o.gang_aware ? 0 : d.workers_left - fit;
    }
    if (d.workers_left > 0) queued[left++] = d;
  }
  queued.resize(left);
  if (ctx->demands.empty()) {
    std::swap(ctx->demands, queued);
  } else {
    ctx->demands.insert(ctx->demands.end(), queued.begin(), queued.end());
  }
  queued.clear();
  ctx->queued = std::move(queued);  // its memory, for the next pass (PassScratch)
}

}  // namespace tide::autoscale
