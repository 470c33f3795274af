#include "autoscale/spot/notice.h"

#include <algorithm>

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
      if (n.interrupt_at != kInfiniteFuture) noticed.push_back(&n);
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
    drain.reason = StrCat("spot notice: ", n.name, " is interrupted at ", FormatTimestamp(n.interrupt_at));
    plan->actions.push_back(std::move(drain));
    Action stop;
    stop.kind = ActionKind::kEvacuate;
    stop.pool = n.pool;
    auto stop_if_on = [&](const model::Job& j) {
      if (j.state != model::JobState::kRunning || ctx->touched.contains(j.id)) return;
      for (const auto& sh : j.alloc) {
        if (sh.node == n.id) {
          stop.jobs.push_back(j.id);
          ctx->touched.insert(j.id);
          return;
        }
      }
    };
    // The jobs with a share on the node, in the order of active(): from the
    // index's placement view when it keeps one, else from every job.
    if (const model::StateIndex* x = ctx->index; x != nullptr && x->placement()) {
      if (const model::StateIndex::JobList* on = x->JobsOn(n.id)) {
        model::StateIndex::JobList pos = *on;
        std::sort(pos.begin(), pos.end());
        for (const uint32_t p : pos) stop_if_on(ctx->state.jobs[p]);
      }
    } else {
      for (const model::Job* jp : ctx->active()) stop_if_on(*jp);
    }
    if (stop.jobs.empty()) continue;
    std::vector<std::string> names;
    for (auto id : stop.jobs) names.push_back(ctx->JobById(id).spec.name);
    stop.reason = StrCat(StrJoin(names, ","), ": checkpoint and requeue before ", n.name, " is interrupted at ",
                         FormatTimestamp(n.interrupt_at));
    plan->actions.push_back(std::move(stop));
  }
}

}  // namespace tide::autoscale
