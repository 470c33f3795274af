// BinpackingEstimator: how many nodes of one pool the pending jobs need.
//
// It packs the pending gangs, in queue order, onto a what-if snapshot: first
// onto whatever capacity is left there (ready nodes, booting nodes, nodes this
// plan already bought), then onto new nodes built from the pool's template,
// up to the pool's headroom. A gang is packed whole or not at all, so a buy
// never leaves half a job's nodes idle. With gang_aware = false it packs
// worker by worker, as cluster-autoscaler does with pods, and may buy part of
// a gang. See docs/design/scale-up-estimator.md.
#ifndef TIDE_AUTOSCALE_SCALEUP_ESTIMATOR_H_
#define TIDE_AUTOSCALE_SCALEUP_ESTIMATOR_H_

#include <cstdint>
#include <vector>

#include "model/cluster.h"
#include "sched/slices.h"
#include "sched/snapshot.h"

namespace tide::autoscale {

// A pending job and how many of its workers still need a place.
struct Demand {
  const model::Job* job = nullptr;
  model::JobId id = 0;
  sched::PoolMask pools = 0;  // where its workers may run
  int workers_left = 0;
  // Copied from the job's spec: the estimator reads these for every demand
  // on every round, and a pass may hold 100,000 of them.
  int gpus_per_worker = 0;
  int slice_units = 0;
  int min_workers = 0;
  int priority = 0;
  bool pending = false;     // a queued job, not a running one's growth
  bool moves_data = false;  // has data or output somewhere: egress may cost
  Timestamp submit;

  static Demand For(const model::Job* job, sched::PoolMask pools, int workers) {
    return Demand{job,
                  job->id,
                  pools,
                  workers,
                  job->spec.gpus_per_worker,
                  job->spec.slice_units,
                  job->spec.MinWorkers(),
                  job->priority,
                  job->state == model::JobState::kPending,
                  !job->spec.data_region.empty() && (job->spec.data_gb > 0 || job->spec.output_gb > 0),
                  job->spec.submit};
  }
};

// One way to serve (part of) the demand: `nodes` new nodes of `pool`.
struct ScaleUpOption {
  int pool = -1;
  int nodes = 0;
  // (index into the demand list, workers placed) for every demand served.
  std::vector<std::pair<int, int>> served;
  double useful_gpus = 0;  // GPUs' worth of demand the new nodes serve (a slice counts its share)
  int64_t new_gpus = 0;    // GPUs of the new nodes
  double cost_per_hour = 0;
  // Data transfer the served jobs would cost here, spread over their run
  // times (0 unless egress-aware).
  double egress_per_hour = 0;

  // Hourly cost per GPU that is actually used; infinite when none is.
  double CostPerUsedGpuHour() const;
  // The share of the new GPUs left idle, in [0, 1].
  double Waste() const;
};

class BinpackingEstimator {
 public:
  explicit BinpackingEstimator(bool gang_aware, bool egress_aware = true)
      : gang_aware_(gang_aware), egress_aware_(egress_aware) {}

  // Packs `demands` onto `snap` (and, for slices of a MIG pool, `slices`)
  // plus at most `max_new_nodes` new nodes of `pool` (whose ids count down
  // from *next_template_id). Mutates both: callers who only ask "what if"
  // wrap the call in a CapacitySnapshot::Fork and pass a copy of `slices`.
  ScaleUpOption Estimate(const model::ClusterSpec& spec, int pool, int max_new_nodes,
                         const std::vector<Demand>& demands, sched::CapacitySnapshot* snap,
                         sched::SliceSnapshot* slices, model::NodeId* next_template_id) const;

 private:
  bool gang_aware_;
  bool egress_aware_;
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_SCALEUP_ESTIMATOR_H_
