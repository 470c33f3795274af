// Consolidation's gang pass (docs/design/consolidation.md, "Gangs onto idle
// reserved nodes"). The node-by-node pass never moves a job with workers on
// several nodes: emptying one of its nodes would need the whole gang to
// move. This pass moves the whole gang, in one checkpoint, when that frees
// every node it holds. The case it is for: demand fell below the reserved
// base while multi-node gangs that started in a busier hour still run on
// on-demand nodes, and whole reserved nodes, paid for anyway, sit idle
// (measured on ITP cluster04 before this pass: 59k GPU-hours of idle
// reserved GPUs alongside as many busy on-demand ones).
//
// Rule, per gang, in the order the state lists the running jobs (each gang
// moved takes idle reserved nodes until none are left):
//   - it runs, is not protected, checkpoints, uses whole GPUs, has run at
//     least min_run (and with max_unsaved, has little unsaved work), and
//     has two or more workers, one per node;
//   - each of its nodes is ready, not leaving, runs nothing else, and is of
//     a pool idle release gives back (not reserved, unless release_reserved);
//     emptying them keeps every pool at its minimum;
//   - enough idle reserved nodes that idle release keeps, of pools the job
//     may use and with room for one worker each, are ready and not leaving;
//   - the saving, each node's price over the gang's expected remaining time
//     plus the idle tail less the checkpoint, is positive and at least
//     min_ratio times the cost, the nodes' price over checkpoint + load;
//   - the disruption budget has one node left for each of its nodes.
// It plans, per node, a kDrain, and one kConsolidate of the gang naming all
// its nodes, as the node-by-node pass does for one node.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "autoscale/scaledown/consolidation.h"
#include "autoscale/scaledown/consolidation_rules.h"
#include "autoscale/scaledown/idle_release.h"
#include "core/strings.h"
#include "sched/eligibility.h"

namespace tide::autoscale {

using model::Job;
using model::JobState;
using model::Node;
using model::NodeState;

void Consolidation::MoveGangs(PassContext* ctx, ScalingPlan* plan) const {
  const model::ClusterSpec& spec = ctx->spec;
  const Timestamp now = ctx->now;
  const auto leaving = [ctx](const Node& n) {
    return ctx->leaving.contains(n.id) || n.interrupt_at != kInfiniteFuture;
  };
  // Idle reserved nodes that stay, by pool, and the GPUs of the largest.
  std::vector<int> idle(spec.pools.size(), 0), idle_gpus(spec.pools.size(), 0);
  int total = 0;
  const auto count = [&](const Node& n) {
    if (spec.pools[n.pool].tier != model::Tier::kReserved || leaving(n) ||
        !KeptIdle(spec, release_reserved_, model::StateIndex::FactsOf(n))) {
      return;
    }
    ++idle[n.pool];
    idle_gpus[n.pool] = std::max(idle_gpus[n.pool], n.gpus);
    ++total;
  };
  if (const model::StateIndex* x = ctx->index) {
    x->idle().ForEach([&](size_t pos) { count(ctx->state.nodes[pos]); });  // KeptIdle needs idle
  } else {
    for (const Node& n : ctx->state.nodes) count(n);
  }
  // A gang has two workers at least, each onto an idle reserved node of its own.
  if (total < 2 || ctx->disruption_allowance < 2) return;

  // A node by id: from the state index when there is one (every pass in the
  // simulator and the controller), else from a map built here.
  absl::flat_hash_map<model::NodeId, const Node*> by_id;
  if (ctx->index == nullptr) {
    by_id.reserve(ctx->state.nodes.size());
    for (const Node& n : ctx->state.nodes) by_id[n.id] = &n;
  }
  const auto node_of = [&](model::NodeId id) -> const Node* {
    if (ctx->index != nullptr) {
      const int pos = ctx->index->NodePos(id);
      return pos < 0 ? nullptr : &ctx->state.nodes[static_cast<size_t>(pos)];
    }
    auto it = by_id.find(id);
    return it == by_id.end() ? nullptr : it->second;
  };
  std::vector<int> staying;  // StayingNodes, once a gang gets that far
  std::vector<const Node*> nodes;
  for (const Job* jp : ctx->active()) {
    const Job& j = *jp;
    if (j.state != JobState::kRunning || j.alloc.size() < 2 || j.spec.is_protected ||
        j.spec.checkpoint.interval.count() <= 0 || j.spec.slice_units != 0 || now - j.started < o_.min_run ||
        !MovableNow(o_, *ctx, j) || ctx->disruption_allowance < static_cast<int>(j.alloc.size())) {
      continue;
    }
    nodes.clear();
    absl::flat_hash_map<int, int> from_pool;
    bool alone = true;
    for (const auto& sh : j.alloc) {
      const Node* n = node_of(sh.node);
      // Its one worker is all the node runs: its only busy GPUs are the worker's.
      if (n == nullptr || sh.workers != 1 || n->gpus - n->free_gpus != j.spec.gpus_per_worker ||
          n->state != NodeState::kReady || leaving(*n) || KeepsIdleNodes(spec.pools[n->pool], release_reserved_)) {
        alone = false;
        break;
      }
      nodes.push_back(n);
      ++from_pool[n->pool];
    }
    if (!alone) continue;
    if (staying.empty()) staying = StayingNodes(*ctx);
    bool above_min = true;
    for (const auto& [p, k] : from_pool) above_min = above_min && staying[p] - k >= ctx->MinNodes(p);
    if (!above_min) continue;
    // Room: idle reserved nodes of pools the job may use, enough for every worker.
    const auto takes = [&](size_t p) {
      return idle[p] > 0 && idle_gpus[p] >= j.spec.gpus_per_worker &&
             sched::Eligible(spec, static_cast<int>(p), j.spec, j.priority);
    };
    int room = 0;
    for (size_t p = 0; p < spec.pools.size(); ++p) room += takes(p) ? idle[p] : 0;
    const int workers = static_cast<int>(nodes.size());
    if (room < workers) continue;
    const Duration remaining = Remaining(ctx->state, j, now);
    const Duration restart = j.spec.checkpoint.cost + j.spec.phases.load;
    double price = 0;
    for (const Node* n : nodes) price += spec.pools[n->pool].price_per_hour;
    const double saving = price * HoursOf(remaining + idle_after_ - j.spec.checkpoint.cost);
    const double cost = price * HoursOf(restart);
    if (saving <= 0 || saving < o_.min_ratio * cost) continue;

    // Take the idle reserved nodes the gang will land on, pool by pool.
    int need = workers;
    for (size_t p = 0; p < spec.pools.size() && need > 0; ++p) {
      if (!takes(p)) continue;
      const int take = std::min(need, idle[p]);
      idle[p] -= take;
      need -= take;
    }
    ctx->disruption_allowance -= workers;
    ctx->touched.insert(j.id);
    Action stop;
    stop.kind = ActionKind::kConsolidate;
    stop.jobs.push_back(j.id);
    std::vector<std::string> names;
    for (const Node* n : nodes) {
      ctx->leaving.insert(n->id);
      --staying[n->pool];
      stop.nodes.push_back(n->id);
      names.push_back(n->name);
      Action drain;
      drain.kind = ActionKind::kDrain;
      drain.pool = n->pool;
      drain.count = 1;
      drain.nodes.push_back(n->id);
      drain.reason = StrCat("consolidation: gang ", j.spec.name, " moves to idle reserved nodes; released once it exits");
      plan->actions.push_back(std::move(drain));
    }
    stop.reason = StrCat("gang ", j.spec.name, " (", workers, " x ", j.spec.gpus_per_worker, " GPUs) runs alone on ",
                         StrJoin(names, ", "), " for about ", FormatDuration(remaining), " more, and ", workers,
                         " idle reserved nodes can hold it: releasing its nodes saves about ",
                         static_cast<int64_t>(std::lround(saving)), " ", spec.currency, " against ",
                         static_cast<int64_t>(std::lround(cost)), " ", spec.currency,
                         " of checkpoint and restart; checkpoint and requeue");
    plan->actions.push_back(std::move(stop));
  }
}

}  // namespace tide::autoscale
