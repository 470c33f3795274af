#include "autoscale/scaledown/consolidation.h"
#include "autoscale/scaledown/consolidation_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "autoscale/scaledown/idle_release.h"
#include "core/strings.h"
#include "sched/eligibility.h"

namespace tide::autoscale {

using model::Job;
using model::JobState;
using model::Node;
using model::NodeState;

namespace {

// A running node as the what-if sees it: its jobs, the GPUs free now, and
// how long it is expected to stay busy.
struct NodeView {
  const Node* node = nullptr;
  absl::InlinedVector<const Job*, 4> jobs;  // most nodes run a few
  int free = 0;
  Duration life{0};      // read through `life_of` in Evaluate, which works it out when first asked
  bool life_known = false;
  bool movable = true;  // every job on it may be moved
  bool source = false;  // emptied in this pass
  bool dest = false;    // receives a moved job in this pass
  size_t pos = 0;       // in the state's nodes (read from the index only)
};

// One worker of a moved job, planned onto a destination.
struct Move {
  NodeView* to;
  int gpus;
  Duration old_life;
};

}  // namespace

bool MovableNow(const ConsolidationOptions& o, const PassContext& ctx, const Job& j) {
  if (ctx.touched.contains(j.id) || ctx.Freeing(j)) return false;
  return o.max_unsaved.count() <= 0 ||
         model::UnsavedWorkOf(ctx.state, j, ctx.now) <= static_cast<double>(o.max_unsaved.count());
}

bool KeptIdle(const model::ClusterSpec& spec, bool release_reserved, const model::StateIndex::NodeFacts& n) {
  return n.state == NodeState::kReady && !n.noticed && !n.sliced && n.free == n.gpus &&
         KeepsIdleNodes(spec.pools[n.pool], release_reserved);
}

Duration Consolidation::Remaining(const model::ClusterState& state, const Job& job, Timestamp now) const {
  if (o_.remaining == ConsolidationOptions::Remaining::kExpectedEnd && job.expected_end != kInfiniteFuture &&
      job.expected_end > kInfinitePast) {
    return std::max(Duration{0}, job.expected_end - now);
  }
  // Work done so far, at least this run's age: a job that has run for t is
  // expected to run about t more when run times are heavy-tailed.
  const auto age = Seconds(static_cast<int64_t>(std::max(0.0, model::ProgressOf(state, job, now))));
  return std::max(age, now - job.started);
}

namespace {


// What a pass of consolidation starts from: the candidates to empty, when a
// job next becomes movable, and the nodes a worker may move to, counted by
// pool and GPUs free. Gathered by a scan of every node and job, or from the
// driver's state index (model/state_index.h, placement()) in time that grows
// with the candidates rather than the cluster: both give the same.
struct Gathered {
  // Scan: every node that runs something, and the sources among them.
  // Index: the sources read, and nothing else.
  std::vector<NodeView> views;
  std::vector<NodeView*> sources;
  // Per pool: it is growing (PoolStand) and has a node that would be a
  // source, so it is looked at again once quiet. Such nodes are not sources.
  absl::InlinedVector<bool, 8> held;
  Timestamp movable_at = kInfiniteFuture;
  int most_gpus = 0;
  // How many of the views not emptied in this pass have each number of GPUs
  // free, per pool: [pool * (most_gpus + 1) + free]. From the index, counted
  // only when a node may be a source (empty, and most_gpus 0, otherwise).
  std::vector<int> with_free;
  int& Count(int pool, int free) { return with_free[static_cast<size_t>(pool) * (most_gpus + 1) + free]; }
};

// How a pool stands in a pass. Closed to consolidation: emptying a node would
// take it below its minimum in force (kAtMin), or it bought a node within
// quiet_for (kGrowing: a growing pool buys back what is emptied).
enum class PoolStand { kOpen, kAtMin, kGrowing };

// The order in which a node's jobs move: the most GPUs first, then the lowest
// id (the index's Settled entries name the first by the same order).
bool MovesFirst(const Job* a, const Job* b) {
  return a->spec.gpus() != b->spec.gpus() ? a->spec.gpus() > b->spec.gpus() : a->id < b->id;
}


// The view of Settled node `id`, in `views`, if all its jobs may be moved
// now (it is a source); else nullptr.
NodeView* ViewOf(const ConsolidationOptions& o, const PassContext& ctx, const model::StateIndex& x, model::NodeId id,
                 std::vector<NodeView>* views) {
  const int pos = x.NodePos(id);
  const auto* on = x.JobsOn(id);
  if (pos < 0 || on == nullptr) return nullptr;
  for (const uint32_t j : *on) {
    if (!MovableNow(o, ctx, ctx.state.jobs[j])) return nullptr;
  }
  NodeView& v = views->emplace_back();
  v.node = &ctx.state.nodes[pos];
  v.pos = static_cast<size_t>(pos);
  v.free = v.node->free_gpus;
  for (const uint32_t j : *on) v.jobs.push_back(&ctx.state.jobs[j]);
  return &v;
}

// Gathered from the index: of the nodes and jobs, only the sources that may
// have room elsewhere are read.
void GatherIndexed(const ConsolidationOptions& o, bool release_reserved, const PassContext& ctx,
                   const model::StateIndex& x, absl::FunctionRef<PoolStand(int)> stand, Gathered* g) {
  const model::ClusterSpec& spec = ctx.spec;
  const Timestamp now = ctx.now;
  // The destinations, counted by pool and GPUs free, and the most GPUs free
  // on one (`top`): worked out when a pool open to consolidation first has a
  // node that may be a source. Most passes have none (the nodes in use ran
  // their jobs for less than min_run, or the pools are at their minimum or
  // growing), and then nothing reads the counts: no source is left to move.
  int top = 0;
  bool counted = false;
  auto count_destinations = [&] {
    counted = true;
    // Every candidate and destination is a node in use, counted by the
    // index, or an idle node that stays (KeptIdle), counted here: none has
    // more GPUs free than the counts span.
    std::vector<const model::StateIndex::NodeFacts*> kept_idle;
    x.idle().ForEach([&](size_t pos) {
      const auto& n = x.node(pos);
      if (KeptIdle(spec, release_reserved, n) && !ctx.leaving.contains(n.id)) kept_idle.push_back(&n);
    });
    int span = 1;
    for (size_t p = 0; p < spec.pools.size(); ++p) span = std::max(span, x.InUseSpan(static_cast<int>(p)));
    for (const auto* n : kept_idle) span = std::max(span, n->free + 1);
    g->most_gpus = span - 1;
    g->with_free.assign(spec.pools.size() * span, 0);
    for (int p = 0; p < static_cast<int>(spec.pools.size()); ++p) {
      for (int f = 0; f < x.InUseSpan(p); ++f) g->Count(p, f) = x.InUseCount(p, f);
    }
    for (const auto* n : kept_idle) ++g->Count(n->pool, n->free);
    for (int p = 0; p < static_cast<int>(spec.pools.size()); ++p) {
      for (int f = 0; f < span; ++f) top = g->Count(p, f) > 0 ? std::max(top, f) : top;
    }
    for (const model::NodeId id : ctx.leaving) {
      const int pos = x.NodePos(id);
      if (pos < 0) continue;
      const auto& n = x.node(pos);
      if (!model::StateIndex::InUse(n) || n.free < 0) continue;
      if (--g->Count(n.pool, n.free) == 0 && n.free == top) {  // the most free may be fewer now
        top = 0;
        for (int p = 0; p < static_cast<int>(spec.pools.size()); ++p) {
          for (int f = 0; f <= g->most_gpus; ++f) top = g->Count(p, f) > 0 ? std::max(top, f) : top;
        }
      }
    }
  };
  // The earliest start, after now - min_run, of a job that could be moved
  // now, on a node in use that is not leaving.
  const auto& starts = x.starts();
  const model::StateIndex::Start young{now - o.min_run, std::numeric_limits<model::JobId>::max(), 0};
  for (auto it = starts.upper_bound(young); it != starts.end(); ++it) {
    const Job& j = ctx.state.jobs[it->pos];
    const model::NodeId on = j.alloc.front().node;
    const int pos = x.NodePos(on);
    if (pos < 0 || !model::StateIndex::InUse(x.node(pos)) || ctx.leaving.contains(on) || !MovableNow(o, ctx, j)) continue;
    g->movable_at = it->at + o.min_run;
    break;
  }
  std::vector<NodeView> scratch;
  for (size_t p = 0; p < spec.pools.size(); ++p) {
    if (KeepsIdleNodes(spec.pools[p], release_reserved)) continue;  // emptying one saves nothing
    const auto* buckets = x.settled(static_cast<int>(p));
    if (buckets == nullptr) continue;
    const auto ripe = [&](const absl::btree_set<model::StateIndex::Settled>& settled) {
      return !settled.empty() && now - settled.begin()->latest >= o.min_run;
    };
    if (std::none_of(buckets->begin(), buckets->end(), ripe)) continue;
    const PoolStand st = stand(static_cast<int>(p));
    if (st == PoolStand::kAtMin) continue;
    if (st == PoolStand::kGrowing) {  // only whether it has a source, of any bucket
      for (const auto& settled : *buckets) {
        for (const auto& s : settled) {
          if (now - s.latest < o.min_run || g->held[p]) break;
          g->held[p] = !ctx.leaving.contains(s.id) && ViewOf(o, ctx, x, s.id, &scratch) != nullptr;
        }
      }
      continue;
    }
    if (!counted) count_destinations();
    for (int b = 0; b < static_cast<int>(buckets->size()); ++b) {
      const auto& settled = (*buckets)[b];
      // With more GPUs per worker than any destination has free, the lead
      // job fits nowhere: such a node cannot be emptied in this pass.
      if (!ripe(settled) || b > top) continue;
      for (const auto& s : settled) {
        if (now - s.latest < o.min_run) break;  // the rest started later still
        if (!ctx.leaving.contains(s.id)) ViewOf(o, ctx, x, s.id, &g->views);
      }
    }
  }
  for (auto& v : g->views) g->sources.push_back(&v);
}

}  // namespace

void Consolidation::Evaluate(PassContext* ctx, ScalingPlan* plan) const {
  if (!o_.enabled) return;
  const model::ClusterSpec& spec = ctx->spec;
  const Timestamp now = ctx->now;

  // Pending work that can run claims free GPUs first; consolidate only in a
  // quiet moment. Jobs no pool could ever hold do not count.
  absl::flat_hash_set<model::JobId> unschedulable;
  for (const auto& a : plan->actions) {
    if (a.kind == ActionKind::kUnschedulable) unschedulable.insert(a.jobs.begin(), a.jobs.end());
  }
  for (const Job* j : ctx->pending) {
    if (!unschedulable.contains(j->id)) return;
  }
  if (o_.gangs) MoveGangs(ctx, plan);

  // Nodes on their way out: drained or evacuated this pass, or given notice.
  auto leaving = [ctx](const Node& n) { return ctx->leaving.contains(n.id) || n.interrupt_at != kInfiniteFuture; };
  const model::StateIndex* x = ctx->index != nullptr && ctx->index->placement() ? ctx->index : nullptr;
  // Nodes per pool that stay, for the pool minimums, and the last time each
  // pool bought one (worked out when first asked).
  std::vector<int> staying = StayingNodes(*ctx);
  absl::InlinedVector<Timestamp, 8> last_bought(spec.pools.size(), kInfiniteFuture);
  // A ready node created `now` is one the driver did not buy (the live
  // controller's static nodes): not a purchase.
  auto bought = [&](const Node& n) { return n.state == NodeState::kProvisioning || n.created < now; };
  auto last_bought_in = [&](int p) {
    if (last_bought[p] != kInfiniteFuture) return last_bought[p];
    Timestamp last = kInfinitePast;
    if (x == nullptr) {
      for (const auto& n : ctx->state.nodes) {
        if (n.pool == p && n.state != NodeState::kTerminated && bought(n)) last = std::max(last, n.created);
      }
    } else if (const auto* created = x->created(p)) {
      for (auto it = created->rbegin(); it != created->rend(); ++it) {
        const int pos = x->NodePos(it->second);
        if (pos >= 0 && bought(ctx->state.nodes[pos])) {
          last = it->first;
          break;
        }
      }
    }
    return last_bought[p] = last;
  };
  // Emptying a node of pool `p` would take it below its minimum (as nodes
  // are emptied in this pass, too); how `p` stands as the pass begins.
  auto at_min = [&](int p) { return staying[p] - 1 < ctx->MinNodes(p); };
  absl::InlinedVector<std::optional<PoolStand>, 8> stands(spec.pools.size());
  auto stand = [&](int p) {
    if (stands[p]) return *stands[p];
    if (at_min(p)) {
      stands[p] = PoolStand::kAtMin;
    } else if (o_.quiet_for.count() > 0 && last_bought_in(p) > now - o_.quiet_for) {
      stands[p] = PoolStand::kGrowing;
    } else {
      stands[p] = PoolStand::kOpen;
    }
    return *stands[p];
  };

  Gathered g;
  g.held.assign(spec.pools.size(), false);
  if (x == nullptr) {
    // The ready nodes that run something, with their jobs, and the idle ones
    // that stay.
    absl::flat_hash_map<model::NodeId, size_t> index;
    g.views.reserve(ctx->state.nodes.size());
    index.reserve(ctx->state.nodes.size());
    for (const auto& n : ctx->state.nodes) {
      const bool kept_idle = KeptIdle(spec, release_reserved_, model::StateIndex::FactsOf(n));
      if (!kept_idle && (n.state != NodeState::kReady || n.idle() || !n.slice_free.empty())) continue;  // MIG: not yet
      if (leaving(n)) continue;
      index[n.id] = g.views.size();
      NodeView& v = g.views.emplace_back();
      v.node = &n;
      v.free = n.free_gpus;
    }
    std::vector<size_t> on;  // the views a job has workers on; allocations are a few shares
    for (const model::Job* jp : ctx->active()) {
      const model::Job& j = *jp;
      if (j.alloc.empty()) continue;
      on.clear();
      for (const auto& sh : j.alloc) {
        auto it = index.find(sh.node);
        if (it != index.end() && std::find(on.begin(), on.end(), it->second) == on.end()) on.push_back(it->second);
      }
      bool movable = model::StateIndex::CouldMove(j) && on.size() == 1 && MovableNow(o_, *ctx, j);
      if (movable && now - j.started < o_.min_run) {
        movable = false;
        g.movable_at = std::min(g.movable_at, j.started + o_.min_run);
      }
      for (size_t v : on) {
        NodeView& view = g.views[v];
        view.jobs.push_back(&j);
        view.movable &= movable;
      }
    }
    for (auto& v : g.views) {
      const int p = v.node->pool;
      if (!v.movable || v.jobs.empty() || KeepsIdleNodes(spec.pools[p], release_reserved_)) continue;
      const PoolStand st = stand(p);
      if (st == PoolStand::kOpen) g.sources.push_back(&v);
      g.held[p] = g.held[p] || st == PoolStand::kGrowing;
    }
    for (const auto& v : g.views) g.most_gpus = std::max(g.most_gpus, v.node->gpus);
    g.with_free.assign(spec.pools.size() * (g.most_gpus + 1), 0);
    for (const auto& v : g.views) ++g.Count(v.node->pool, std::clamp(v.free, 0, g.most_gpus));
  } else {
    GatherIndexed(o_, release_reserved_, *ctx, *x, stand, &g);
  }
  const bool indexed = x != nullptr;
  std::vector<NodeView>& views = g.views;
  std::vector<NodeView*>& sources = g.sources;
  const int most_gpus = g.most_gpus;
  plan->next_wakeup = std::min(plan->next_wakeup, g.movable_at);
  // A growing pool with a node to empty is looked at again once quiet.
  for (size_t p = 0; p < spec.pools.size(); ++p) {
    if (g.held[p]) plan->next_wakeup = std::min(plan->next_wakeup, last_bought_in(static_cast<int>(p)) + o_.quiet_for);
  }

  // How long a node is expected to stay busy: its running jobs' longest
  // expected remaining time. Worked out for the candidates, and for other
  // nodes only when a what-if weighs them (most passes never do).
  auto life_of = [&](NodeView& v) {
    if (!v.life_known) {
      for (const Job* j : v.jobs) {
        if (j->state == JobState::kRunning) v.life = std::max(v.life, Remaining(ctx->state, *j, now));
      }
      v.life_known = true;
    }
    return v.life;
  };
  // Per pool, how many of the nodes a worker may move to (every view not
  // emptied in this pass) have each number of GPUs free. Most what-ifs of a
  // busy cluster find at once that no node of a pool the job may use has
  // room for its first worker, and need no search.
  auto count = [&](const NodeView* v, int n) { g.Count(v->node->pool, std::clamp(v->free, 0, most_gpus)) += n; };
  auto room_elsewhere = [&](const Job& j, const NodeView* src) {
    const int need = std::max(j.spec.gpus_per_worker, 0);
    for (size_t p = 0; p < spec.pools.size(); ++p) {
      int n = 0;
      for (int f = need; f <= most_gpus; ++f) n += g.Count(static_cast<int>(p), f);
      if (static_cast<int>(p) == src->node->pool && src->free >= need) --n;
      if (n > 0 && sched::Eligible(spec, static_cast<int>(p), j.spec, j.priority)) return true;
    }
    return false;
  };
  auto set_free = [&](NodeView* v, int free) {
    count(v, -1);
    v->free = free;
    count(v, 1);
  };
  // A node's jobs are moved largest first (then by id); if no other node has
  // room for the first one's first worker now, it never will in this pass:
  // what-ifs only take free GPUs away. Such a source is set aside before the
  // what-ifs, with no order, life or what-if worked out for it. In most
  // passes of a busy cluster every source is set aside.
  std::erase_if(sources, [&](const NodeView* v) {
    const Job* first = *std::min_element(v->jobs.begin(), v->jobs.end(), MovesFirst);
    return first->Workers() > 0 && !room_elsewhere(*first, v);
  });
  if (sources.empty()) return;
  // The nodes a worker may move to: every view (scan); with the index, the
  // ones with a GPU free, found now.
  std::vector<NodeView> more;
  std::vector<NodeView*> dests;
  if (!indexed) {
    for (auto& v : views) dests.push_back(&v);
  } else {
    absl::flat_hash_map<size_t, NodeView*> source_at;
    for (NodeView* v : sources) source_at[v->pos] = v;
    // A worker of no GPUs fits on a node with none free too (any node in use).
    bool gpuless = false;
    for (const NodeView* v : sources) {
      for (const Job* j : v->jobs) gpuless |= j->spec.gpus_per_worker <= 0;
    }
    model::PosSet all;
    if (gpuless) {
      for (size_t pos = 0; pos < ctx->state.nodes.size(); ++pos) all.insert(pos);
    }
    const model::PosSet& near = gpuless ? all : x->ready_free();
    more.reserve(near.size());
    near.ForEach([&](size_t pos) {
      if (auto it = source_at.find(pos); it != source_at.end()) {
        dests.push_back(it->second);
        return;
      }
      const Node& n = ctx->state.nodes[pos];
      const auto& facts = x->node(pos);
      if (!model::StateIndex::InUse(facts) && !KeptIdle(spec, release_reserved_, facts)) return;
      if (ctx->leaving.contains(n.id)) return;
      NodeView& v = more.emplace_back();
      v.node = &n;
      v.pos = pos;
      v.free = n.free_gpus;
      if (const auto* on = x->JobsOn(n.id)) {
        for (const uint32_t j : *on) v.jobs.push_back(&ctx->state.jobs[j]);
      }
      dests.push_back(&v);
    });
  }
  // Cheapest to empty first: fewest busy GPUs, then the longest expected life (the most saved).
  for (NodeView* v : sources) life_of(*v);
  std::sort(sources.begin(), sources.end(), [](const NodeView* a, const NodeView* b) {
    const int ba = a->node->gpus - a->free, bb = b->node->gpus - b->free;
    if (ba != bb) return ba < bb;
    if (a->life != b->life) return a->life > b->life;
    return a->node->id < b->node->id;
  });

  // Free GPUs on the running nodes that stay (idle ones wait for idle release and count too).
  int64_t free_staying = 0;
  if (!indexed) {
    for (const auto& n : ctx->state.nodes) {
      if (n.state == NodeState::kReady && !leaving(n)) free_staying += n.free_gpus;
    }
  } else {
    for (size_t p = 0; p < spec.pools.size(); ++p) free_staying += x->ReadyFree(static_cast<int>(p));
    for (const model::NodeId id : ctx->leaving) {
      const int pos = x->NodePos(id);
      if (pos < 0) continue;
      const auto& n = x->node(pos);
      if (n.state == NodeState::kReady && !n.noticed) free_staying -= std::max(0, n.free);
    }
  }
  int headroom = o_.headroom_gpus;
  if (o_.headroom_window.count() > 0) {
    int recent = 0;
    for (auto it = ctx->state.arrivals.rbegin(); it != ctx->state.arrivals.rend() && it->at > now - o_.headroom_window;
         ++it) {
      if (it->at <= now) recent += it->gpus;
    }
    headroom = std::max(headroom, recent);
  }
  bool worth_later = false;
  for (NodeView* src : sources) {
    if (src->dest) continue;
    const Node& node = *src->node;
    const auto& pool = spec.pools[node.pool];
    if (at_min(node.pool)) continue;  // after the nodes emptied before it
    // Releasing it takes its free GPUs away, and its jobs take others'.
    if (free_staying - node.gpus < headroom) continue;
    if (ctx->disruption_allowance < 1) {
      if (ctx->disruption_max >= 1) ctx->budget_blocked = true;
      break;
    }
    // The what-if: each job's workers onto other nodes, on the copy in `views`.
    std::vector<Move> moves;
    bool fits = true;
    double extension = 0;  // price of destination time the moved jobs add
    Duration longest_stop{0};
    double cost = 0;
    std::vector<const Job*> jobs(src->jobs.begin(), src->jobs.end());
    std::sort(jobs.begin(), jobs.end(), MovesFirst);
    for (const Job* j : jobs) {
      const int g = j->spec.gpus_per_worker;
      const Duration stop = j->spec.checkpoint.cost;
      const Duration restart = stop + j->spec.phases.load;
      longest_stop = std::max(longest_stop, stop);
      const Duration new_life = Remaining(ctx->state, *j, now) + restart;
      for (int w = 0; w < j->Workers() && fits; ++w) {
        if (!room_elsewhere(*j, src)) {
          fits = false;
          break;
        }
        NodeView* best = nullptr;
        for (NodeView* dp : dests) {
          NodeView& d = *dp;
          if (&d == src || d.source || d.free < g) continue;
          if (!sched::Eligible(spec, d.node->pool, j->spec, j->priority)) continue;
          // Best fit, as the scheduler will place it, then the longest life.
          if (best == nullptr || d.free < best->free ||
              (d.free == best->free && life_of(d) > life_of(*best)) ||
              (d.free == best->free && life_of(d) == life_of(*best) && d.node->id < best->node->id)) {
            best = &d;
          }
        }
        if (best == nullptr) {
          fits = false;
          break;
        }
        moves.push_back({best, g, life_of(*best)});
        set_free(best, best->free - g);
        const auto& dpool = spec.pools[best->node->pool];
        if (new_life > best->life) {
          if (dpool.tier != model::Tier::kReserved) extension += dpool.price_per_hour * HoursOf(new_life - best->life);
          best->life = new_life;
        }
      }
      if (!fits) break;
      cost += j->spec.gpus() * (pool.price_per_hour / std::max(1, node.gpus)) * HoursOf(restart);
    }
    const double saving = pool.price_per_hour * HoursOf(src->life + idle_after_ - longest_stop) - extension;
    if (!fits || saving <= 0 || saving < o_.min_ratio * cost) {
      // Undo the what-if, latest first (a destination may have taken two workers).
      for (size_t k = moves.size(); k-- > 0;) {
        set_free(moves[k].to, moves[k].to->free + moves[k].gpus);
        moves[k].to->life = moves[k].old_life;
      }
      // Under the age estimate the saving grows as the jobs age.
      worth_later |= fits && o_.remaining == ConsolidationOptions::Remaining::kAge;
      continue;
    }
    src->source = true;
    count(src, -1);  // no destination any more
    --staying[node.pool];
    free_staying -= node.gpus;
    ctx->disruption_allowance -= 1;
    ctx->leaving.insert(node.id);
    std::vector<std::string> names, to;
    absl::flat_hash_set<model::NodeId> seen;
    for (const Move& m : moves) {
      m.to->dest = true;
      if (seen.insert(m.to->node->id).second) to.push_back(m.to->node->name);
    }
    Action stop;
    stop.kind = ActionKind::kConsolidate;
    stop.nodes.push_back(node.id);
    for (const Job* j : jobs) {
      stop.jobs.push_back(j->id);
      ctx->touched.insert(j->id);
      names.push_back(StrCat(j->spec.name, " (", j->spec.gpus(), " GPUs)"));
    }
    const int busy = node.gpus - src->free;
    stop.reason = StrCat("node ", node.name, " runs ", busy, " of ", node.gpus, " GPUs (", StrJoin(names, ", "),
                         ") for about ", FormatDuration(src->life), " more; they fit now on ", StrJoin(to, ", "),
                         ": releasing it saves about ", static_cast<int64_t>(std::lround(saving)), " ",
                         spec.currency, " against ", static_cast<int64_t>(std::lround(cost)), " ", spec.currency,
                         " of checkpoint and restart; checkpoint and requeue");
    Action drain;
    drain.kind = ActionKind::kDrain;
    drain.pool = node.pool;
    drain.count = 1;
    drain.nodes.push_back(node.id);
    drain.reason = StrCat("consolidation: its jobs move to ", StrJoin(to, ", "), "; released once they exit");
    plan->actions.push_back(std::move(drain));
    plan->actions.push_back(std::move(stop));
  }
  if (worth_later) plan->next_wakeup = std::min(plan->next_wakeup, now + Minutes(10));
}

}  // namespace tide::autoscale
