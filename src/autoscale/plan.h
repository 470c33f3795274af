// ScalingPlan: what the autoscaler decided, as a value. Each action carries
// the reason a human reads in the decision log and in dry-run output.
#ifndef TIDE_AUTOSCALE_PLAN_H_
#define TIDE_AUTOSCALE_PLAN_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/time.h"
#include "model/cluster.h"

namespace tide::autoscale {

enum class ActionKind : uint8_t {
  kScaleUp,        // buy `count` nodes of `pool` for `jobs`
  kRelease,        // give back `nodes` (idle)
  kUnschedulable,  // `jobs` fit no pool even at its max: reported, nothing bought
  kAtMax,          // `jobs` would need nodes but every pool that fits them is at its max
};
std::string_view ActionKindName(ActionKind kind);  // "scale-up", "release", ...

struct Action {
  ActionKind kind = ActionKind::kScaleUp;
  int pool = -1;
  int count = 0;
  std::vector<model::NodeId> nodes;
  std::vector<model::JobId> jobs;
  std::string reason;
};

// A pending job that fits, in the what-if, on capacity that already exists or
// is already booting (or that this plan buys for another job). Nothing is
// bought for it. Template nodes this plan buys have negative ids.
struct Claim {
  model::JobId job = 0;
  std::vector<model::NodeShare> shares;
};

struct ScalingPlan {
  std::vector<Action> actions;
  std::vector<Claim> covered;
  // The latest time at which RunOnce should run again even if nothing else
  // changes (an idle timer or a pending job's grace ending).
  Timestamp next_wakeup = kInfiniteFuture;

  bool empty() const { return actions.empty(); }
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_PLAN_H_
