// ElasticResizer: grows and shrinks elastic jobs (min..max workers) and tells
// the framework the new world size, global batch size and learning rate
// (MISSION 10). Two rules, one component:
//
// Capacity (any elastic job):
//   - shrink toward the minimum when a job of equal or higher priority waits
//     and no pool can be grown for it (faster than a boot, nothing lost);
//   - grow into free capacity on running nodes when nothing waits for it.
// Utilization (asynchronous elastic work only, MISSION 3; sync gangs are
// scaled only through the queue):
//   - below `low` (20%) for `low_for` (5 min): halve, not below the minimum;
//   - above `high` (90%) for `high_for` (10 min): double, not above the
//     maximum; buy nodes for it if free capacity cannot hold it;
//   - nothing is read in the `warmup` after a start or resize (data loading);
//   - after growing, utilization below `bottleneck_below` for
//     `bottleneck_for` flags the job as input- or communication-bound: it is
//     not grown again, and the log says why (MISSION 11).
// A resize pauses the job for a re-rendezvous; `cooldown` spaces resizes.
// The learning rate follows the linear rule (lr x new/old batch) or the
// square-root rule. See docs/design/elastic-jobs.md and
// docs/design/utilization-scaling.md.
#ifndef TIDE_AUTOSCALE_ELASTIC_ELASTIC_H_
#define TIDE_AUTOSCALE_ELASTIC_ELASTIC_H_

#include <vector>

#include "autoscale/context.h"

namespace tide::autoscale {

enum class LrRule : uint8_t { kLinear, kSqrt };

struct ElasticOptions {
  bool enabled = true;
  Duration cooldown = Minutes(10);
  LrRule lr_rule = LrRule::kLinear;
  int per_worker_batch = 32;
  double base_lr = 0.1;  // at the job's requested size
};

struct UtilizationOptions {
  bool enabled = true;
  double low = 0.20;
  Duration low_for = Minutes(5);
  double high = 0.90;
  Duration high_for = Minutes(10);
  Duration warmup = Minutes(10);
  double bottleneck_below = 0.60;
  Duration bottleneck_for = Minutes(10);
};

// The batch and learning rate for `workers` workers of a job whose
// configuration is for `reference` workers.
void RescaleFor(const ElasticOptions& o, int reference, int workers, int64_t* global_batch, double* lr);

class ElasticResizer {
 public:
  ElasticResizer(const ElasticOptions& e, const UtilizationOptions& u) : e_(e), u_(u) {}

  // Utilization rules; growth that capacity on hand cannot hold is added to
  // ctx->demands so that scale-up buys for it.
  void BeforeScaleUp(PassContext* ctx, ScalingPlan* plan) const;
  // Capacity rules: shrink for `unserved` demands, grow into idle capacity.
  void AfterScaleUp(PassContext* ctx, const std::vector<Demand>& unserved, ScalingPlan* plan) const;

 private:
  bool Settled(const PassContext& ctx, const model::Job& j, ScalingPlan* plan) const;
  Action Resize(const PassContext& ctx, const model::Job& j, int workers, std::string why) const;

  const ElasticOptions& e_;
  const UtilizationOptions& u_;
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_ELASTIC_ELASTIC_H_
