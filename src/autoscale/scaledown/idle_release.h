// IdleRelease: give back nodes that have run nothing for a while.
//
// Rule: a ready node that has been idle for at least `idle_after` (tide-seed's 10
// minutes; tide's 2) is released, longest idle first, unless a pending job is planned
// onto it, its pool would drop below its minimum in force (nodes still
// booting count toward it), or it is reserved capacity (paid for whether used
// or not, so releasing it saves nothing). See docs/design/idle-release.md.
#ifndef TIDE_AUTOSCALE_SCALEDOWN_IDLE_RELEASE_H_
#define TIDE_AUTOSCALE_SCALEDOWN_IDLE_RELEASE_H_

#include <vector>

#include "autoscale/context.h"

namespace tide::autoscale {

struct IdleReleaseOptions {
  Duration idle_after = Minutes(10);
  bool release_reserved = false;
};

// Whether idle release keeps every idle node of `pool`, however long idle:
// reserved capacity, unless reserved nodes may be released. Such a node is
// paid for whether it runs anything or not.
inline bool KeepsIdleNodes(const model::NodePool& pool, bool release_reserved) {
  return pool.tier == model::Tier::kReserved && !release_reserved;
}

// Per pool, the nodes that are not on their way out: ready or booting, not
// under a spot notice, and not taken out by this pass (ctx.leaving).
std::vector<int> StayingNodes(const PassContext& ctx);

class IdleRelease {
 public:
  explicit IdleRelease(IdleReleaseOptions options) : options_(options) {}

  // Appends one kRelease action per pool and lowers plan->next_wakeup to the
  // next time an idle node becomes due. Uses ctx->needed, ctx->leaving and
  // ctx->min_nodes.
  void Evaluate(PassContext* ctx, ScalingPlan* plan) const;

 private:
  IdleReleaseOptions options_;
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_SCALEDOWN_IDLE_RELEASE_H_
