// Autoscaler::RunOnce: one pass of the decision core's capacity loop.
//
// Each step is its own component with its own options and design page:
//
//   scheduled capacity   limits in force (cron, time zone)      schedule/cron.h
//   disruption budget    how much tide may disrupt now          scaledown/budget.h
//   spot notices         evacuate spot nodes under notice       spot/notice.h
//   idle-job reclaim     stop jobs idle for 30 minutes          scaledown/reclaim.h
//   scheduled enforce    pre-warm floors, drain down to caps    schedule/cron.h
//   coverage             the what-if; covered jobs, demand      coverage.h
//   unschedulable        report what no pool could ever hold    scaleup/scale_up.h
//   utilization scaling  grow/shrink async elastic jobs         elastic/elastic.h
//   scale-up             trigger, estimator, expander chain     scaleup/scale_up.h
//   preemption           when nothing can be bought             preempt/preemption.h
//   elastic capacity     shrink for waiting work, grow idle     elastic/elastic.h
//   forecast             buy ahead of predictable arrivals      predict/forecast.h
//   consolidation        empty partly used nodes, move jobs     scaledown/consolidation.h
//   idle release         give back idle nodes                   scaledown/idle_release.h
//
// It is a pure function of the ClusterState (with its MetricsView) and
// `now`: it reads no clock, file or network, and keeps no state between
// calls. What is already booting or stopping is part of the snapshot, so it
// is counted before anything is bought. The simulator and the live
// controller call the same RunOnce.
#ifndef TIDE_AUTOSCALE_AUTOSCALER_H_
#define TIDE_AUTOSCALE_AUTOSCALER_H_

#include <optional>
#include <string>
#include <vector>

#include "autoscale/elastic/elastic.h"
#include "autoscale/plan.h"
#include "autoscale/predict/forecast.h"
#include "autoscale/preempt/preemption.h"
#include "autoscale/scaledown/budget.h"
#include "autoscale/scaledown/consolidation.h"
#include "autoscale/scaledown/idle_release.h"
#include "autoscale/scaledown/reclaim.h"
#include "autoscale/scaleup/expander.h"
#include "autoscale/scaleup/scale_up.h"
#include "autoscale/schedule/cron.h"
#include "autoscale/spot/notice.h"
#include "core/status.h"
#include "core/time.h"
#include "model/cluster.h"
#include "sched/snapshot.h"

namespace tide::autoscale {

struct ScaleDownOptions {
  bool enabled = true;
  IdleReleaseOptions idle;
};

// How nodes that join load their checkpoint or dataset (the storage model's
// bandwidth is the world's; these are tide's choices). Unset: as configured
// under simulation.storage.
struct StorageLoadOptions {
  std::optional<bool> prefetch;  // start loading during boot
  std::optional<int> stagger;    // at most this many nodes load at once
};

struct AutoscalerOptions {
  // How often the loop runs. 0 means "after every change" (Slurm reacts to
  // each submission).
  Duration scan_interval = Seconds(10);
  ScaleUpOptions scale_up;
  ScaleDownOptions scale_down;
  ConsolidationOptions consolidation;
  TierOptions tiers;
  SpotNoticeOptions spot_notice;
  PreemptionOptions preemption;
  ReclaimOptions reclaim;
  BudgetOptions budget;
  UtilizationOptions utilization;
  ElasticOptions elastic;
  ScheduleOptions schedule;
  ForecastOptions forecast;
  StorageLoadOptions storage;
};

struct PassScratch;  // context.h

class Autoscaler {
 public:
  // InvalidArgument if an option is out of range (an unknown expander, say).
  static Result<Autoscaler> Make(AutoscalerOptions options);

  Autoscaler(Autoscaler&&) noexcept;
  Autoscaler& operator=(Autoscaler&&) noexcept;
  ~Autoscaler();

  const AutoscalerOptions& options() const { return *options_; }

  // Decides what to buy, release, drain, stop and resize at `now`. Pure;
  // thread-safe. (A pass builds its what-if in the memory of the last one's,
  // if no other pass holds it: a cache that does not change the plan.)
  Result<ScalingPlan> RunOnce(const model::ClusterState& state, Timestamp now) const;

 private:
  Autoscaler(AutoscalerOptions options, ExpanderChain chain)
      : options_(std::make_unique<AutoscalerOptions>(std::move(options))), chain_(std::move(chain)) {}

  // Held by pointer: the components keep references into it, and an
  // Autoscaler is moved around.
  std::unique_ptr<AutoscalerOptions> options_;
  ExpanderChain chain_;
  mutable sched::SnapshotSpare spare_;
  mutable Spare<PassScratch> scratch_;
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_AUTOSCALER_H_
