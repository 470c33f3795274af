// DisruptionBudget: at most `max_nodes` nodes may be disrupted by tide
// (jobs on them preempted or reclaimed) in any `window`; a drain lets its
// jobs finish and does not count. Like a Kubernetes PodDisruptionBudget, but
// for a whole pool's training work. Provider interruptions do not count: tide did not choose them.
// See docs/design/protection.md.
#ifndef TIDE_AUTOSCALE_SCALEDOWN_BUDGET_H_
#define TIDE_AUTOSCALE_SCALEDOWN_BUDGET_H_

#include "core/time.h"
#include "model/cluster.h"

namespace tide::autoscale {

struct BudgetOptions {
  int max_nodes = 4;  // 0: no limit
  Duration window = Minutes(10);
};

// How many more nodes may be disrupted at `now`, and (through *next) the
// next time the allowance grows (when the oldest disruption in the window
// leaves it).
int DisruptionAllowance(const BudgetOptions& o, const model::ClusterState& state, Timestamp now, Timestamp* next);

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_SCALEDOWN_BUDGET_H_
