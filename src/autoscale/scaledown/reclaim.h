// IdleReclaim: a running job whose GPUs have stayed below `below` (10%) for
// more than `after` (30 minutes) is reclaimed: it checkpoints and is
// requeued, or cancelled (MISSION 8.6). The GPUs it frees go back to the
// queue or, idle, to idle release. Protected jobs are never reclaimed; a
// job reclaimed once and idle again is cancelled, so a job that only ever
// idles does not cycle. Missing utilization data is never read as idle.
// See docs/design/idle-reclaim.md.
#ifndef TIDE_AUTOSCALE_SCALEDOWN_RECLAIM_H_
#define TIDE_AUTOSCALE_SCALEDOWN_RECLAIM_H_

#include "autoscale/context.h"

namespace tide::autoscale {

struct ReclaimOptions {
  bool enabled = true;
  double below = 0.10;
  Duration after = Minutes(30);
  bool cancel = false;  // cancel rather than requeue
};

class IdleReclaim {
 public:
  explicit IdleReclaim(const ReclaimOptions& o) : o_(o) {}
  void Evaluate(PassContext* ctx, ScalingPlan* plan) const;

 private:
  const ReclaimOptions& o_;
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_SCALEDOWN_RECLAIM_H_
