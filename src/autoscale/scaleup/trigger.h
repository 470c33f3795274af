// PendingTrigger: when to consider buying nodes (layer one of the mission).
//
// Rule: scale up when more than `threshold` GPU jobs are pending (tide-seed's 3,
// MISSION section 2; tide's 0), or when a pending job that still needs capacity (no
// ready or booting node will hold it, yet some pool could) has waited at
// least `grace` (tide-seed's 30 s; tide's 0), so that a small queue is never left waiting
// forever. A job that was interrupted (a spot interruption, a preemption) has its
// replacement requested at once (MISSION 11). With threshold 0 it fires on
// any pending job, as cluster-autoscaler does. See
// docs/design/scale-up-trigger.md.
#ifndef TIDE_AUTOSCALE_SCALEUP_TRIGGER_H_
#define TIDE_AUTOSCALE_SCALEUP_TRIGGER_H_

#include <string>
#include <vector>

#include "core/time.h"
#include "model/cluster.h"

namespace tide::autoscale {

struct TriggerOptions {
  int pending_threshold = 3;
  Duration pending_grace = Seconds(30);
  bool replace_interrupted_at_once = true;
};

struct TriggerDecision {
  bool fire = false;
  std::string reason;
  // When the decision would change with no other event (grace running out).
  Timestamp next_check = kInfiniteFuture;
};

class PendingTrigger {
 public:
  explicit PendingTrigger(TriggerOptions options) : options_(options) {}
  // `pending`: every pending GPU job; `waiting`: those that still need
  // capacity and could get it. Any order. Pure.
  TriggerDecision Evaluate(const std::vector<const model::Job*>& pending,
                           const std::vector<const model::Job*>& waiting, Timestamp now) const;

 private:
  TriggerOptions options_;
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_SCALEUP_TRIGGER_H_
