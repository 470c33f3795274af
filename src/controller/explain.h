// Why each waiting job waits, in a sentence for people, from the plan the
// decision core just made: the nodes being bought for it, the booting
// capacity it will use, or the limit that keeps it waiting. A manager that
// can show it (Kubernetes: the pods' PodScheduled message) is told whenever
// the sentence changes.
#ifndef TIDE_CONTROLLER_EXPLAIN_H_
#define TIDE_CONTROLLER_EXPLAIN_H_

#include <map>
#include <string>

#include "autoscale/plan.h"
#include "core/time.h"
#include "model/cluster.h"

namespace tide::controller {

// For every pending job of `state`, by id.
std::map<model::JobId, std::string> WhyWaiting(const model::ClusterSpec& spec, const model::ClusterState& state,
                                               const autoscale::ScalingPlan& plan, Timestamp now);

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_EXPLAIN_H_
