#include "autoscale/scaledown/idle_release.h"

#include <algorithm>
#include <vector>

#include "core/strings.h"

namespace tide::autoscale {

std::vector<int> StayingNodes(const PassContext& ctx) {
  std::vector<int> staying(ctx.spec.pools.size(), 0);
  if (const model::StateIndex* x = ctx.index) {
    for (size_t p = 0; p < staying.size(); ++p) staying[p] = x->staying(static_cast<int>(p));
    for (model::NodeId id : ctx.leaving) {
      const int pos = x->NodePos(id);
      if (pos >= 0 && x->staying().contains(pos)) --staying[x->node(pos).pool];
    }
    return staying;
  }
  for (const auto& n : ctx.state.nodes) {
    const bool leaving = ctx.leaving.contains(n.id) || n.interrupt_at != kInfiniteFuture;
    if ((n.state == model::NodeState::kProvisioning || n.state == model::NodeState::kReady) && !leaving) {
      ++staying[n.pool];
    }
  }
  return staying;
}

void IdleRelease::Evaluate(PassContext* ctx, ScalingPlan* plan) const {
  const model::ClusterSpec& spec = ctx->spec;
  const Timestamp now = ctx->now;
  const size_t num_pools = spec.pools.size();
  // By pool, the idle nodes due for release: made when the first is found
  // (most passes find none, and then count nothing else).
  std::vector<std::vector<const model::Node*>> due;
  auto consider = [&](const model::Node& n) {
    const bool leaving = ctx->leaving.contains(n.id) || n.interrupt_at != kInfiniteFuture;
    if (n.state != model::NodeState::kReady || !n.idle() || leaving) return;
    if (KeepsIdleNodes(spec.pools[n.pool], options_.release_reserved)) return;
    const Timestamp deadline = n.idle_since + options_.idle_after;
    if (deadline > now) {
      plan->next_wakeup = std::min(plan->next_wakeup, deadline);
      return;
    }
    if (ctx->needed.contains(n.id)) return;
    if (due.empty()) due.resize(num_pools);
    due[n.pool].push_back(&n);
  };
  // Idle nodes are the only ones that may go; with an index only they are
  // read, and of those only the ones of pools that release idle nodes (a
  // reserved base is most of the idle nodes of a busy cluster): the index's
  // compact facts name the pool without a read of the node.
  if (const model::StateIndex* x = ctx->index) {
    sched::PoolMask keeps = 0;
    for (size_t p = 0; p < num_pools; ++p) {
      if (KeepsIdleNodes(spec.pools[p], options_.release_reserved)) keeps |= sched::PoolBit(static_cast<int>(p));
    }
    x->idle().ForEach([&](size_t pos) {
      if (!(keeps & sched::PoolBit(x->node(pos).pool))) consider(ctx->state.nodes[pos]);
    });
  } else {
    for (const auto& n : ctx->state.nodes) {
      if (n.state == model::NodeState::kReady && n.idle()) consider(n);
    }
  }
  if (due.empty()) return;
  const std::vector<int> staying = StayingNodes(*ctx);  // nodes that are not on their way out
  for (size_t p = 0; p < num_pools; ++p) {
    auto& nodes = due[p];
    if (nodes.empty()) continue;
    std::sort(nodes.begin(), nodes.end(), [](const model::Node* a, const model::Node* b) {
      return a->idle_since != b->idle_since ? a->idle_since < b->idle_since : a->id < b->id;
    });
    const int min_nodes = ctx->MinNodes(static_cast<int>(p));
    const int can_release = std::max(0, staying[p] - min_nodes);
    if (static_cast<int>(nodes.size()) > can_release) nodes.resize(can_release);
    if (nodes.empty()) continue;
    Action a;
    a.kind = ActionKind::kRelease;
    a.pool = static_cast<int>(p);
    a.count = static_cast<int>(nodes.size());
    Duration longest{0};
    for (const auto* n : nodes) {
      a.nodes.push_back(n->id);
      ctx->leaving.insert(n->id);
      longest = std::max(longest, now - n->idle_since);
    }
    a.reason = StrCat(a.count, " node", a.count == 1 ? "" : "s", " idle for ", a.count == 1 ? "" : "up to ",
                      FormatDuration(longest), " (release after ", FormatDuration(options_.idle_after),
                      "); pool stays at or above min ", min_nodes);
    plan->actions.push_back(std::move(a));
  }
}

}  // namespace tide::autoscale
