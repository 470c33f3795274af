// ScaleUp: buys nodes for pending jobs that no capacity on hand or on the way
// will hold. The pending trigger decides whether to buy at all; the
// bin-packing estimator and the expander chain decide what.
//
// Capacity tiers (MISSION 6; docs/design/capacity-tiers.md):
//   - spot pools host only preemptible jobs (sched/eligibility.h);
//   - the tier-ratio expander keeps spot at `spot_share` of elastic GPUs;
//   - when a spot pool cannot create nodes (a stock-out), jobs that could use
//     it wait up to `spot_fallback_after`, then fall back to on-demand; the
//     pool is asked again `spot_retry_after` after each failure.
// With boot_hedge, each pool it buys in gets spare nodes as well (hedge.h).
// See docs/design/scale-up-estimator.md and docs/design/expanders.md.
#ifndef TIDE_AUTOSCALE_SCALEUP_SCALE_UP_H_
#define TIDE_AUTOSCALE_SCALEUP_SCALE_UP_H_

#include <optional>
#include <string>
#include <vector>

#include "autoscale/context.h"
#include "autoscale/scaleup/expander.h"
#include "autoscale/scaleup/hedge.h"
#include "autoscale/scaleup/trigger.h"

namespace tide::autoscale {

struct ScaleUpOptions {
  bool enabled = true;
  TriggerOptions trigger;
  // Pack whole gangs (tide) or worker by worker (cluster-autoscaler).
  bool gang_aware = true;
  std::vector<std::string> expanders = {"priority", "tier-ratio", "least-cost", "least-waste"};
  // Grow at most this many pools per pass (0: no limit). cluster-autoscaler grows one.
  int max_pools_per_pass = 0;
  // GPUs of running jobs expected to end within this lookahead count as free
  // in the what-if: no node is bought for work that capacity freeing sooner
  // than a boot would serve. nullopt: the expected boot delay of the fastest
  // pool that can grow. Zero turns it off (cluster-autoscaler and Slurm do not
  // look at job run times).
  std::optional<Duration> release_lookahead;
  // Count the data transfer a pool's region would cost the jobs (MISSION 9);
  // the scheduler then also places jobs in their data's region first.
  bool egress_aware = true;
  // Pools it may buy from (empty: all).
  std::vector<int> buy_from;
  // Spare nodes bought against slow boots (hedge.h).
  BootHedgeOptions hedge;
};

struct TierOptions {
  double spot_share = 0.3;  // on-demand:spot = 7:3 (MISSION 8.5)
  Duration spot_fallback_after = Minutes(5);
  Duration spot_retry_after = Minutes(1);
};

class ScaleUp {
 public:
  ScaleUp(const ScaleUpOptions& o, const TierOptions& tiers, const ExpanderChain& chain)
      : o_(o), tiers_(tiers), chain_(chain) {}

  // Appends scale-up, at-max and note actions for ctx->demands; marks the
  // existing nodes its plan uses as needed. Leaves in ctx->demands what it
  // did not serve, with (*blocked)[i] true where no pool has room for it.
  void Evaluate(PassContext* ctx, ScalingPlan* plan, std::vector<bool>* blocked) const;

 private:
  const ScaleUpOptions& o_;
  const TierOptions& tiers_;
  const ExpanderChain& chain_;
};

// Demands of jobs no pool could ever hold are reported (kUnschedulable) and
// removed from ctx->demands.
void ReportUnschedulable(PassContext* ctx, ScalingPlan* plan);

// "job train-7 (2x8 GPUs) waits: <cause>": one job of a kAtMax action.
std::string AtMaxLine(const model::JobSpec& job, std::string_view cause);

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_SCALEUP_SCALE_UP_H_
