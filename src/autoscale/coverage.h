// Coverage: the first step of every pass. It builds the what-if snapshot of
// the capacity pending jobs can count on, and sorts the pending jobs into
// those it covers (nothing to buy) and the demand that is left.
//
// The what-if holds the free GPUs of ready and booting nodes (not of nodes
// being drained or under interruption notice), the GPUs of jobs that are
// stopping (they exit within a checkpoint), and the GPUs of running jobs that
// end within the release lookahead. Pending jobs are placed on it in queue
// order: whole gangs (gang_aware) or worker by worker.
#ifndef TIDE_AUTOSCALE_COVERAGE_H_
#define TIDE_AUTOSCALE_COVERAGE_H_

#include "autoscale/context.h"
#include "autoscale/scaleup/scale_up.h"

namespace tide::autoscale {

// Fills ctx->live, active, pending and queued. The first step of a pass.
void IndexState(PassContext* ctx);

// Fills ctx->snap, slot_of, demands and needed, and plan->covered.
// ctx->max_nodes must already hold the limits in force.
void BuildCoverage(const ScaleUpOptions& o, PassContext* ctx, ScalingPlan* plan);

// The release lookahead in force (see ScaleUpOptions::release_lookahead).
Duration ReleaseLookahead(const ScaleUpOptions& o, const PassContext& ctx);

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_COVERAGE_H_
