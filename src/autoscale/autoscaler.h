// Autoscaler::RunOnce: one pass of the decision core's capacity loop.
//
//   snapshot, now --> [pending trigger] --> [estimator x pools] --> [expander chain]
//                                                                   --> scale-up actions
//                 --> [idle release]                                 --> release actions
//
// It is a pure function of the ClusterState and `now`: it reads no clock,
// file or network, and keeps no state between calls. What is already booting
// is part of the snapshot, so it is counted before anything is bought. The
// simulator and the live controller call the same RunOnce.
#ifndef TIDE_AUTOSCALE_AUTOSCALER_H_
#define TIDE_AUTOSCALE_AUTOSCALER_H_

#include <optional>
#include <string>
#include <vector>

#include "autoscale/plan.h"
#include "autoscale/scaledown/idle_release.h"
#include "autoscale/scaleup/expander.h"
#include "autoscale/scaleup/trigger.h"
#include "core/status.h"
#include "core/time.h"
#include "model/cluster.h"

namespace tide::autoscale {

struct ScaleUpOptions {
  bool enabled = true;
  TriggerOptions trigger;
  // Pack whole gangs (tide) or worker by worker (cluster-autoscaler).
  bool gang_aware = true;
  std::vector<std::string> expanders = {"priority", "least-cost", "least-waste"};
  // Grow at most this many pools per pass (0: no limit). cluster-autoscaler grows one.
  int max_pools_per_pass = 0;
  // GPUs of running jobs expected to end within this lookahead count as free
  // in the what-if: no node is bought for work that capacity freeing sooner
  // than a boot would serve. nullopt: the expected boot delay of the fastest
  // pool that can grow. Zero turns it off (cluster-autoscaler and Slurm do not
  // look at job run times).
  std::optional<Duration> release_lookahead;
};

struct ScaleDownOptions {
  bool enabled = true;
  IdleReleaseOptions idle;
};

struct AutoscalerOptions {
  // How often the loop runs. 0 means "after every change" (Slurm reacts to
  // each submission).
  Duration scan_interval = Seconds(10);
  ScaleUpOptions scale_up;
  ScaleDownOptions scale_down;
};

class Autoscaler {
 public:
  // InvalidArgument if an option is out of range (an unknown expander, say).
  static Result<Autoscaler> Make(AutoscalerOptions options);

  const AutoscalerOptions& options() const { return options_; }

  // Decides what to buy and release at `now`. Pure; thread-safe.
  Result<ScalingPlan> RunOnce(const model::ClusterState& state, Timestamp now) const;

 private:
  // How far ahead job ends count as free capacity (see ScaleUpOptions).
  Duration ReleaseLookahead(const model::ClusterSpec& spec, const std::vector<int>& live) const;

  Autoscaler(AutoscalerOptions options, ExpanderChain chain)
      : options_(std::move(options)), chain_(std::move(chain)) {}

  AutoscalerOptions options_;
  ExpanderChain chain_;
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_AUTOSCALER_H_
