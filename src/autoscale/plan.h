// ScalingPlan: what the autoscaler decided, as a value. Each action carries
// the reason a human reads in the decision log and in dry-run output.
#ifndef TIDE_AUTOSCALE_PLAN_H_
#define TIDE_AUTOSCALE_PLAN_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/time.h"
#include "model/cluster.h"

namespace tide::autoscale {

enum class ActionKind : uint8_t {
  kScaleUp,        // buy `count` nodes of `pool` for `jobs`
  kRelease,        // give back `nodes` (idle)
  kUnschedulable,  // `jobs` fit no pool even at its max: reported, nothing bought
  kAtMax,          // `jobs` would need nodes but every pool that fits them is at its max
  kDrain,          // place nothing more on `nodes`; release each once its jobs are gone
  kPreempt,        // checkpoint `jobs`, then requeue them (for a higher-priority job)
  kReclaim,        // checkpoint `jobs` (idle ones), then requeue or cancel them
  kEvacuate,       // checkpoint `jobs`, then requeue them: their node is being interrupted
  kConsolidate,    // checkpoint `jobs`, then requeue them onto other running nodes:
                   // `nodes` (drained by a kDrain in the same plan) is then released
  kResize,         // change job `jobs[0]` to `workers` workers (elastic)
  kNote,           // nothing to do; worth saying (a bottleneck, a fallback pending)
};
std::string_view ActionKindName(ActionKind kind);  // "scale-up", "release", ...

// What a resized job is told: the framework re-shards and rescales.
struct ResizeInfo {
  int old_workers = 0;
  int workers = 0;             // the new world size, in workers
  int64_t global_batch = 0;    // per-worker batch x workers
  double learning_rate = 0;    // by the configured rule
  // Workers to add (node, count) or remove (node, count).
  std::vector<model::NodeShare> add;
  std::vector<model::NodeShare> remove;
};

struct Action {
  ActionKind kind = ActionKind::kScaleUp;
  int pool = -1;
  int count = 0;
  std::vector<model::NodeId> nodes;
  std::vector<model::JobId> jobs;
  std::string reason;
  // kAtMax: the reason for any one of `jobs`, without naming it ("no pool has
  // room for it (a100 12/12)"); AtMaxLine() names the job.
  std::string cause;
  bool cancel = false;    // kReclaim: cancel instead of requeue
  bool forecast = false;  // kScaleUp: bought ahead of forecast demand
  int spares = 0;         // kScaleUp: of `count`, spares against slow boots (BootHedge)
  bool bottleneck = false;  // kNote: mark jobs[0] as input- or communication-bound
  ResizeInfo resize;      // kResize
};

// A pending job that fits, in the what-if, on capacity that already exists or
// is already booting (or that this plan buys for another job). Nothing is
// bought for it. Template nodes this plan buys have negative ids.
struct Claim {
  model::JobId job = 0;
  // Most covered jobs fit on one node: no allocation for them.
  absl::InlinedVector<model::NodeShare, 1> shares;
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
