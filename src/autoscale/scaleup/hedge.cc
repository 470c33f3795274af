#include "autoscale/scaleup/hedge.h"

#include <algorithm>

#include "autoscale/scaledown/idle_release.h"
#include "core/strings.h"

namespace tide::autoscale {

bool BootHedge::Hedges(const model::NodePool& pool) const {
  return options_.nodes > 0 && pool.tier != model::Tier::kReserved && pool.boot_delay.Expected() > Duration{0};
}

BootHedge::Booting BootHedge::Count(const PassContext& ctx) const {
  const size_t num_pools = ctx.spec.pools.size();
  Booting b{std::vector<std::vector<const model::Node*>>(num_pools), std::vector<int>(num_pools, 0)};
  auto visit = [&](const model::Node& n) {
    if (n.state != model::NodeState::kProvisioning || n.interrupt_at != kInfiniteFuture) return;
    if (ctx.leaving.contains(n.id) || !Hedges(ctx.spec.pools[n.pool])) return;
    if (ctx.needed.contains(n.id)) {
      ++b.waited_for[n.pool];
    } else {
      b.spare[n.pool].push_back(&n);
    }
  };
  if (const model::StateIndex* x = ctx.index) {
    x->booting().ForEach([&](size_t pos) { visit(ctx.state.nodes[pos]); });
  } else {
    for (const auto& n : ctx.state.nodes) visit(n);
  }
  for (auto& nodes : b.spare) {
    std::sort(nodes.begin(), nodes.end(), [](const model::Node* a, const model::Node* c) {
      return a->created != c->created ? a->created > c->created : a->id > c->id;
    });
  }
  return b;
}

int BootHedge::Spares(const PassContext& ctx, int pool) const {
  if (!Hedges(ctx.spec.pools[pool])) return 0;
  const Booting b = Count(ctx);
  return std::max(0, options_.nodes - static_cast<int>(b.spare[pool].size()));
}

void BootHedge::Evaluate(PassContext* ctx, ScalingPlan* plan) const {
  if (options_.nodes <= 0 || ctx->forecast_expects) return;
  const Booting b = Count(*ctx);
  std::vector<int> staying;  // read only if something is to go
  for (size_t p = 0; p < b.spare.size(); ++p) {
    const auto& spare = b.spare[p];
    const int keep = b.waited_for[p] > 0 ? options_.nodes : 0;
    if (static_cast<int>(spare.size()) <= keep) continue;
    if (staying.empty()) staying = StayingNodes(*ctx);
    const int go =
        std::min(static_cast<int>(spare.size()) - keep, std::max(0, staying[p] - ctx->MinNodes(static_cast<int>(p))));
    if (go <= 0) continue;
    Action a;
    a.kind = ActionKind::kRelease;
    a.pool = static_cast<int>(p);
    a.count = go;
    for (int i = 0; i < go; ++i) {
      a.nodes.push_back(spare[i]->id);
      ctx->leaving.insert(spare[i]->id);
    }
    staying[p] -= go;
    a.reason = b.waited_for[p] > 0
                   ? StrCat(go, " spare booting node", go == 1 ? "" : "s", " beyond the ", options_.nodes,
                            " kept while jobs wait for a boot (boot_hedge)")
                   : StrCat(go, " booting node", go == 1 ? "" : "s", " no job waits for (boot_hedge)");
    plan->actions.push_back(std::move(a));
  }
}

}  // namespace tide::autoscale
