#include "autoscale/scaledown/budget.h"

#include <algorithm>
#include <limits>

namespace tide::autoscale {

int DisruptionAllowance(const BudgetOptions& o, const model::ClusterState& state, Timestamp now, Timestamp* next) {
  if (o.max_nodes <= 0) return std::numeric_limits<int>::max() / 2;
  int used = 0;
  Timestamp oldest = kInfiniteFuture;
  for (Timestamp t : state.recent_disruptions) {
    if (t > now - o.window && t <= now) {
      ++used;
      oldest = std::min(oldest, t);
    }
  }
  if (oldest != kInfiniteFuture) *next = std::min(*next, oldest + o.window);
  return std::max(0, o.max_nodes - used);
}

}  // namespace tide::autoscale
