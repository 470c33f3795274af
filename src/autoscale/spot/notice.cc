#include "autoscale/spot/notice.h"

#include "core/strings.h"

namespace tide::autoscale {

void SpotNoticeResponder::Evaluate(PassContext* ctx, ScalingPlan* plan) const {
  if (!o_.enabled) return;
  // Only noticed nodes matter: with an index, only they are read.
  std::vector<const model::Node*> noticed;
  if (const model::StateIndex* x = ctx->index) {
    x->noticed().ForEach([&](size_t pos) { noticed.push_back(&ctx->state.nodes[pos]); });
  } else {
    for (const auto& n : ctx->state.nodes) {
      if (n.reclaim_at != kInfiniteFuture) noticed.push_back(&n);
    }
  }
  for (const model::Node* np : noticed) {
    const model::Node& n = *np;
    if (n.state == model::NodeState::kDraining) continue;
    ctx->leaving.insert(n.id);
    Action drain;
    drain.kind = ActionKind::kDrain;
    drain.pool = n.pool;
    drain.nodes.push_back(n.id);
    drain.reason = StrCat("spot notice: ", n.name, " is reclaimed at ", FormatTimestamp(n.reclaim_at));
    plan->actions.push_back(std::move(drain));
    Action stop;
    stop.kind = ActionKind::kEvacuate;
    stop.pool = n.pool;
    for (const model::Job* jp : ctx->active()) {
      const model::Job& j = *jp;
      if (j.state != model::JobState::kRunning || ctx->touched.contains(j.id)) continue;
      for (const auto& sh : j.alloc) {
        if (sh.node == n.id) {
          stop.jobs.push_back(j.id);
          ctx->touched.insert(j.id);
          break;
        }
      }
    }
    if (stop.jobs.empty()) continue;
    std::vector<std::string> names;
    for (auto id : stop.jobs) names.push_back(ctx->JobById(id).spec.name);
    stop.reason = StrCat(StrJoin(names, ","), ": checkpoint and requeue before ", n.name, " is reclaimed at ",
                         FormatTimestamp(n.reclaim_at));
    plan->actions.push_back(std::move(stop));
  }
}

}  // namespace tide::autoscale
