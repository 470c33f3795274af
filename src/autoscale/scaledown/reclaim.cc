#include "autoscale/scaledown/reclaim.h"

#include <algorithm>

#include "core/strings.h"

namespace tide::autoscale {

void IdleReclaim::Evaluate(PassContext* ctx, ScalingPlan* plan) const {
  const model::MetricsView* m = ctx->state.metrics;
  if (!o_.enabled || m == nullptr) return;
  struct Idle {
    const model::Job* job;
    Timestamp since;
  };
  std::vector<Idle> idle;
  // Each running job that may be reclaimed: due now (idle for long enough),
  // or the time it would be, for the next wake-up. Returns whether its
  // answer was later than now.
  auto look = [&](const model::Job& j, Timestamp due) {
    if (due > ctx->now) {
      plan->next_wakeup = std::min(plan->next_wakeup, due);
      return true;
    }
    const auto since = m->BelowSince(j.id, o_.below, ctx->now);
    if (since) idle.push_back({&j, *since});
    return false;
  };
  auto candidate = [&](const model::Job& j) {
    return j.state == model::JobState::kRunning && !j.spec.is_protected && !ctx->touched.contains(j.id);
  };
  // A view that keeps the answers in order walks the jobs due and the first
  // that is not; the order of `idle` is set below.
  const bool ordered = m->VisitByDue(true, o_.below, o_.after, ctx->now, [&](model::JobId id, Timestamp due) {
    const model::Job& j = ctx->JobById(id);
    return !candidate(j) || !look(j, due);
  });
  if (!ordered) {
    for (const model::Job* jp : ctx->active()) {
      if (candidate(*jp)) look(*jp, m->NextBelowFor(jp->id, o_.below, o_.after, ctx->now));
    }
  }
  std::sort(idle.begin(), idle.end(),
            [](const Idle& a, const Idle& b) { return a.since != b.since ? a.since < b.since : a.job->id < b.job->id; });
  for (const Idle& i : idle) {
    absl::flat_hash_set<model::NodeId> distinct;
    for (const auto& sh : i.job->alloc) distinct.insert(sh.node);
    const int nodes = static_cast<int>(distinct.size());
    if (nodes > ctx->disruption_allowance) {
      if (nodes <= ctx->disruption_max) ctx->budget_blocked = true;
      Action note;
      note.kind = ActionKind::kNote;
      note.jobs.push_back(i.job->id);
      note.reason = StrCat("job ", i.job->spec.name, " is idle but the disruption budget allows no more now");
      plan->actions.push_back(std::move(note));
      continue;
    }
    ctx->disruption_allowance -= nodes;
    ctx->touched.insert(i.job->id);
    Action a;
    a.kind = ActionKind::kReclaim;
    a.jobs.push_back(i.job->id);
    // A job reclaimed once already is cancelled the second time: it came
    // back and sat idle again.
    a.cancel = o_.cancel || i.job->reclaimed;
    a.reason = StrCat("job ", i.job->spec.name, " (", i.job->Workers() * i.job->spec.gpus_per_worker,
                      " GPUs) below ", static_cast<int>(o_.below * 100), "% utilization since ",
                      FormatTimestamp(i.since), " (", FormatDuration(ctx->now - i.since), "); ",
                      o_.cancel ? "cancel" : "checkpoint and requeue (a second time: cancel)");
    plan->actions.push_back(std::move(a));
  }
}

}  // namespace tide::autoscale
