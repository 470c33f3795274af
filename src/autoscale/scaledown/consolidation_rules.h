// Rules consolidation's two passes share: the node-by-node pass
// (consolidation.cc) and the gang pass (consolidation_gangs.cc).
#ifndef TIDE_AUTOSCALE_SCALEDOWN_CONSOLIDATION_RULES_H_
#define TIDE_AUTOSCALE_SCALEDOWN_CONSOLIDATION_RULES_H_

#include "autoscale/context.h"
#include "autoscale/scaledown/consolidation.h"
#include "model/state_index.h"

namespace tide::autoscale {

// Hours, for prices per hour.
inline double HoursOf(Duration d) { return static_cast<double>(d.count()) / 3600.0; }

// Whether `j`, which could move as far as it says itself, may be moved in
// this pass, but for how long it has run: no step of the pass stopped it, it
// is not giving its GPUs back, and it has little enough unsaved work.
bool MovableNow(const ConsolidationOptions& o, const PassContext& ctx, const model::Job& j);

// An idle node that idle release keeps (KeepsIdleNodes): paid for whether or
// not it runs anything, so it takes moved jobs as a partly used node does.
bool KeptIdle(const model::ClusterSpec& spec, bool release_reserved, const model::StateIndex::NodeFacts& n);

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_SCALEDOWN_CONSOLIDATION_RULES_H_
