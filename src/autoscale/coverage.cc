#include "autoscale/coverage.h"

#include <algorithm>

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

void IndexState(PassContext* ctx) {
  const int num_pools = static_cast<int>(ctx->spec.pools.size());
  ctx->live.assign(num_pools, 0);
  ctx->extra_nodes.assign(num_pools, 0);
  for (const auto& n : ctx->state.nodes) {
    if (n.state != NodeState::kTerminated) ++ctx->live[n.pool];
  }
  ctx->pending = sched::PendingInQueueOrder(ctx->state, &ctx->active);
}

namespace {

constexpr size_t kPrefetchAhead = 8;

// The cache lines of a job that a demand is made from.
void Prefetch(const model::Job* j) {
  const char* p = reinterpret_cast<const char*>(j);
  for (size_t off = 0; off < sizeof(model::Job) && off < 512; off += 64) __builtin_prefetch(p + off);
}

}  // namespace

void BuildCoverage(const ScaleUpOptions& o, PassContext* ctx, ScalingPlan* plan) {
  const model::ClusterSpec& spec = ctx->spec;
  const model::ClusterState& state = ctx->state;
  const int num_pools = static_cast<int>(spec.pools.size());
  const Timestamp now = ctx->now;

  std::vector<const model::Node*> usable;
  for (const auto& n : state.nodes) {
    const bool leaving = n.reclaim_at != kInfiniteFuture || ctx->leaving.contains(n.id);
    if ((n.state == NodeState::kReady || n.state == NodeState::kProvisioning) && !leaving) usable.push_back(&n);
  }
  auto by_id = [](const model::Node* a, const model::Node* b) { return a->id < b->id; };
  if (!std::is_sorted(usable.begin(), usable.end(), by_id)) std::sort(usable.begin(), usable.end(), by_id);

  ctx->snap = std::make_unique<sched::CapacitySnapshot>(num_pools, std::max(1, spec.MaxGpusPerNode()));
  sched::CapacitySnapshot& snap = *ctx->snap;
  ctx->slot_of.clear();
  ctx->node_at.clear();
  ctx->slot_of.reserve(usable.size());
  for (const auto* n : usable) {
    ctx->slot_of.Add(n->id, snap.AddNode(n->id, n->pool, n->gpus, n->free_gpus));
    ctx->node_at.push_back(n);
  }
  // Nodes this pass already buys (scheduled pre-warm) count as booting.
  model::NodeId template_id = -1000000;
  for (int p = 0; p < num_pools; ++p) {
    for (int k = 0; k < ctx->extra_nodes[p]; ++k) {
      snap.AddNode(template_id--, p, spec.pools[p].type.gpus, spec.pools[p].type.gpus);
      ctx->node_at.push_back(nullptr);
    }
  }

  // Capacity that stopping jobs give back at once, and running jobs before a
  // new node could boot.
  const Duration lookahead = ReleaseLookahead(o, *ctx);
  for (const model::Job* jp : ctx->active) {
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
    ctx->freeing.insert(j.id);
    for (const auto& sh : j.alloc) {
      if (sh.units > 0) continue;  // a slice frees a whole GPU only sometimes; not counted
      if (const int slot = ctx->slot_of.Find(sh.node); slot >= 0) snap.Give(slot, sh.workers * j.spec.gpus_per_worker);
    }
  }

  ctx->slices.AddFrom(state, ctx->slot_of);

  // Pending jobs that already fit need nothing bought.
  std::vector<sched::SlotShare> shares;
  const std::vector<const model::Job*>& queue = ctx->pending;
  for (size_t i = 0; i < queue.size(); ++i) {
    // Queue order is not memory order: ask for a later job's spec ahead, or a
    // long queue waits on memory at every job.
    if (i + kPrefetchAhead < queue.size()) Prefetch(queue[i + kPrefetchAhead]);
    const model::Job* j = queue[i];
    Demand d = Demand::For(j, sched::EligiblePools(spec, j->spec), j->spec.workers);
    if (j->spec.slice_units > 0) {
      Claim c{j->id, {}};
      if (sched::PlaceSliceJob(spec, j->spec, &ctx->slices, &snap, &c.shares)) {
        for (const auto& sh : c.shares) ctx->needed.insert(sh.node);
        plan->covered.push_back(std::move(c));
      } else {
        ctx->demands.push_back(d);
      }
      continue;
    }
    const int g = j->spec.gpus_per_worker;
    const int64_t slots = snap.total_free() == 0 ? 0 : snap.Slots(d.pools, g);
    int fit = 0;
    if (o.gang_aware) {
      // An elastic job is covered once its minimum fits; it grows later.
      if (slots >= j->spec.workers) {
        fit = j->spec.workers;
      } else if (j->spec.elastic() && slots >= j->spec.MinWorkers()) {
        fit = static_cast<int>(slots);
      }
    } else {
      fit = static_cast<int>(std::min<int64_t>(slots, d.workers_left));
    }
    if (fit > 0) {
      shares.clear();
      const auto preference = sched::PlacementPreference(spec, j->spec);
      snap.PlacePreferring(preference, g, fit, &shares);
      Claim c{j->id, {}};
      for (const auto& s : shares) {
        c.shares.push_back({snap.id(s.slot), s.workers});
        ctx->needed.insert(snap.id(s.slot));
      }
      plan->covered.push_back(std::move(c));
      d.workers_left = o.gang_aware ? 0 : d.workers_left - fit;
    }
    if (d.workers_left > 0) ctx->demands.push_back(d);
  }
}

}  // namespace tide::autoscale
