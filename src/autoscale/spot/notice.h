// SpotNoticeResponder: when the provider gives notice that it will interrupt a
// spot node, drain it and tell its jobs to checkpoint and exit, so they are
// requeued with nothing lost and their replacement is bought at once
// (MISSION 11). The disruption budget does not apply: the node goes anyway.
// See docs/design/spot.md.
#ifndef TIDE_AUTOSCALE_SPOT_NOTICE_H_
#define TIDE_AUTOSCALE_SPOT_NOTICE_H_

#include "autoscale/context.h"

namespace tide::autoscale {

struct SpotNoticeOptions {
  bool enabled = true;
};

class SpotNoticeResponder {
 public:
  explicit SpotNoticeResponder(const SpotNoticeOptions& o) : o_(o) {}
  // Appends drain and evacuate actions; marks the nodes leaving and the jobs touched.
  void Evaluate(PassContext* ctx, ScalingPlan* plan) const;

 private:
  const SpotNoticeOptions& o_;
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_SPOT_NOTICE_H_
