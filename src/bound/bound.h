// The offline lower bound on cost (docs/design/bound.md): what capacity for a
// workload would cost with perfect foresight, zero boot delay and perfect
// packing at GPU granularity. Every job runs from its submission for its run
// time; a reserved base of R GPUs is paid for over the whole billing window
// and serves non-preemptible demand first; non-preemptible demand above it is
// on demand, preemptible demand above it spot. R is chosen to minimise the
// total.
//
// Pure: values in, values out; no I/O, no clock.
#ifndef TIDE_BOUND_BOUND_H_
#define TIDE_BOUND_BOUND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/time.h"
#include "model/cluster.h"

namespace tide::bound {

// Price per GPU-hour of the cheapest pool of each tier (price_per_hour /
// GPUs per node), in the cluster's currency. nullopt: the tier has no pool
// that can hold a node (max_nodes 0 counts as none).
struct TierPrices {
  std::optional<double> reserved;
  std::optional<double> on_demand;
  std::optional<double> spot;
};
TierPrices CheapestPrices(const model::ClusterSpec& spec);

// One job's demand: `gpus` GPUs over [submit, submit + runtime). Only
// preemptible, unprotected jobs may use spot (as in the simulator).
struct JobDemand {
  Timestamp submit{};
  Duration runtime{};
  int64_t gpus = 0;
  bool spot_ok = false;
};

// GPU-seconds by how many GPUs were asked for at once, over the billing
// window: seconds_np[k] is the time during which exactly k non-preemptible
// GPUs were in use, seconds_total[k] the time during which exactly k in all.
struct DemandHistogram {
  Timestamp start{};
  Timestamp end{};  // the last submission or completion, at least `start`
  std::vector<int64_t> seconds_np;
  std::vector<int64_t> seconds_total;
  int64_t gpu_seconds_np = 0;
  int64_t gpu_seconds_spot_ok = 0;
  int64_t Span() const { return (end - start).count(); }
  int64_t PeakNp() const { return static_cast<int64_t>(seconds_np.size()) - 1; }
  int64_t PeakTotal() const { return static_cast<int64_t>(seconds_total.size()) - 1; }
};

// Builds the histogram of `jobs` over the window the simulator bills: from
// `start` (the trace's time zero) to the last submission or completion.
// Jobs may come in any order. InvalidArgument, naming the job (by index), for
// one submitted before `start`, with a negative run time or GPU count.
Result<DemandHistogram> BuildHistogram(Timestamp start, const std::vector<JobDemand>& jobs);

struct Bound {
  int64_t reserved_gpus = 0;  // R
  Timestamp start{};
  Timestamp end{};
  int64_t peak_gpus = 0;     // unqueued, all jobs
  int64_t peak_np_gpus = 0;  // unqueued, non-preemptible jobs
  double demand_gpu_hours = 0;
  // Where the GPU-hours go. Preemptible demand above the base goes to the
  // cheaper of spot and on-demand; without a spot pool, to on-demand.
  double reserved_gpu_hours = 0;  // R x span, used or not
  double on_demand_gpu_hours = 0;
  double spot_gpu_hours = 0;
  double reserved_cost = 0;
  double on_demand_cost = 0;
  double spot_cost = 0;
  double total = 0;
  TierPrices prices;
};

// The cheapest reserved base for `demand` under `prices`, and what it costs.
// R runs over 0 .. the total peak (beyond it only the base's price grows);
// ties go to the smaller R. Without a reserved price R is 0; without an
// on-demand price R covers the non-preemptible peak (and the total peak
// without a spot price too). FailedPrecondition when no tier can run some of
// the demand (e.g. non-preemptible jobs and only spot pools).
Result<Bound> ComputeBound(const DemandHistogram& demand, const TierPrices& prices);

// The same rule with the base fixed at `reserved_gpus`: what the bound is
// for a cluster that keeps its configured reserved pools. FailedPrecondition
// when that base leaves demand no tier can run, or there is no reserved pool
// to price a base above 0.
Result<Bound> BoundAtReserved(const DemandHistogram& demand, const TierPrices& prices, int64_t reserved_gpus);

// GPUs the configuration's reserved pools hold (min_nodes x GPUs per node;
// a reserved pool's nodes are fixed).
int64_t ConfiguredReservedGpus(const model::ClusterSpec& spec);

}  // namespace tide::bound

#endif  // TIDE_BOUND_BOUND_H_
