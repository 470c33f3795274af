// IdleRelease: give back nodes that have run nothing for a while.
//
// Rule: a ready node that has been idle for at least `idle_after` (default 10
// minutes) is released, oldest idle first, unless a pending job is planned
// onto it, its pool would drop below min_nodes, or it is reserved capacity
// (paid for whether used or not, so releasing it saves nothing).
// See docs/design/idle-release.md.
#ifndef TIDE_AUTOSCALE_SCALEDOWN_IDLE_RELEASE_H_
#define TIDE_AUTOSCALE_SCALEDOWN_IDLE_RELEASE_H_

#include "absl/container/flat_hash_set.h"
#include "autoscale/plan.h"
#include "core/time.h"
#include "model/cluster.h"

namespace tide::autoscale {

struct IdleReleaseOptions {
  Duration idle_after = Minutes(10);
  bool release_reserved = false;
};

class IdleRelease {
 public:
  explicit IdleRelease(IdleReleaseOptions options) : options_(options) {}

  // Appends one kRelease action per pool to `plan` and lowers
  // plan->next_wakeup to the next time an idle node becomes due. `needed`
  // holds nodes the scale-up what-if placed pending jobs on.
  void Evaluate(const model::ClusterState& state, const absl::flat_hash_set<model::NodeId>& needed,
                Timestamp now, ScalingPlan* plan) const;

 private:
  IdleReleaseOptions options_;
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_SCALEDOWN_IDLE_RELEASE_H_
