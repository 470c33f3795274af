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
    const bool leaving = ctx.leaving.contains(n.id) || n.reclaim_at != kInfiniteFuture;
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
  const std::vector<int> staying = StayingNodes(*ctx);  // nodes that are not on their way out
  std::vector<std::vector<const model::Node*>> due(num_pools);
  // Idle nodes are the only ones that may go; with an index only they are read.
  std::vector<const model::Node*> idle;
  if (const model::StateIndex* x = ctx->index) {
    x->idle().ForEach([&](size_t pos) { idle.push_back(&ctx->state.nodes[pos]); });
  } else {
    for (const auto& n : ctx->state.nodes) {
      if (n.state == model::NodeState::kReady && n.idle()) idle.push_back(&n);
    }
  }
  for (const model::Node* np : idle) {
    const model::Node& n = *np;
    const bool leaving = ctx->leaving.contains(n.id) || n.reclaim_at != kInfiniteFuture;
    if (n.state != model::NodeState::kReady || !n.idle() || leaving) continue;
    if (KeepsIdleNodes(spec.pools[n.pool], options_.release_reserved)) continue;
    const Timestamp deadline = n.idle_since + options_.idle_after;
    if (deadline > now) {
      plan->next_wakeup = std::min(plan->next_wakeup, deadline);
      continue;
    }
    if (ctx->needed.contains(n.id)) continue;
    due[n.pool].push_back(&n);
  }
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
