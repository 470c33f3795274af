// Preemption: a pending job may take GPUs from running preemptible jobs of
// lower priority: they checkpoint first, then are requeued (MISSION 8.2: low
// priority jobs cannot hold high-priority jobs' GPUs).
//
// Rule: a pending job that no capacity on hand, on the way or buyable will
// serve (every pool it fits is at its max), and that has waited at least
// `after`, preempts. Victims are running, preemptible, unprotected jobs of
// strictly lower priority on nodes it may use; they are chosen to lose the
// least work (least progress since their last checkpoint), then the fewest,
// within the disruption budget. With `before_buying`, it preempts instead
// of buying. See docs/design/preemption.md.
#ifndef TIDE_AUTOSCALE_PREEMPT_PREEMPTION_H_
#define TIDE_AUTOSCALE_PREEMPT_PREEMPTION_H_

#include "autoscale/context.h"

namespace tide::autoscale {

struct PreemptionOptions {
  bool enabled = true;
  Duration after = Minutes(2);
  bool before_buying = false;
};

class Preemption {
 public:
  explicit Preemption(const PreemptionOptions& o) : o_(o) {}
  // Considers the demands in ctx->demands that `blocked` marks (same order):
  // those that cannot be bought for. Appends kPreempt actions; removes the
  // demands it serves.
  void Evaluate(PassContext* ctx, const std::vector<bool>& blocked, ScalingPlan* plan) const;

 private:
  const PreemptionOptions& o_;
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_PREEMPT_PREEMPTION_H_
