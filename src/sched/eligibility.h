// Which pools a job may run on. One rule, used by the scheduler and by the
// scale-up estimator alike, so the estimator never buys a node the scheduler
// would refuse to use.
#ifndef TIDE_SCHED_ELIGIBILITY_H_
#define TIDE_SCHED_ELIGIBILITY_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "model/cluster.h"
#include "sched/snapshot.h"

namespace tide::sched {

// The pools whose nodes can hold one worker of `job`:
//   - a node must have at least gpus_per_worker GPUs;
//   - a slice job runs on MIG pools that offer its profile, or on pools
//     that do not slice (taking a whole GPU);
//   - spot capacity hosts only preemptible jobs that are not protected, so a
//     high-priority (non-preemptible) job never lands on spot (MISSION 6);
//   - a pool with a min_priority takes only jobs of that priority or above;
//   - a job that names GPU models (gpu_models) runs only on pools of one;
//   - a job limited to some pools (JobSpec::pools) runs only on those.
PoolMask EligiblePools(const model::ClusterSpec& spec, const model::JobSpec& job);

// EligiblePools for the many jobs of one pass, remembered by the fields the
// rule reads (GPUs per worker, priority class, slice size, preemptible,
// protected): a queue of thousands of jobs has a few shapes. A job that
// names GPU models is worked out each time. The spec must not change while
// the memo is in use.
class EligibilityMemo {
 public:
  explicit EligibilityMemo(const model::ClusterSpec& spec) : spec_(&spec) {}
  PoolMask operator()(const model::JobSpec& job) {
    return Of(job.gpus_per_worker, job.priority_class, job.slice_units, job.preemptible, job.is_protected,
              job.restricted(), job);
  }
  // The same from those fields of `job` (a driver's compact copy of them):
  // `job` itself is read only for a shape not seen yet or a restricted job
  // (JobSpec::restricted: GPU models or pools of its own).
  PoolMask Of(int gpus_per_worker, int priority_class, int slice_units, bool preemptible, bool is_protected,
              bool restricted, const model::JobSpec& job);

 private:
  const model::ClusterSpec* spec_;
  absl::flat_hash_map<uint64_t, PoolMask> masks_;
  uint64_t last_key_ = ~uint64_t{0};  // the last shape asked, answered without a hash
  PoolMask last_mask_ = 0;
};

// Workers of `gpus_per_worker` GPUs that the pools in `mask` hold with every
// pool at its max_nodes and every node empty.
int64_t WorkersAtMax(const model::ClusterSpec& spec, PoolMask mask, int gpus_per_worker);

// False when no policy could ever start `job` on `spec`: no pool may take
// it, or all it may use at their max_nodes cannot hold its smallest gang
// (what the autoscaler reports as unschedulable).
bool CouldEverRun(const model::ClusterSpec& spec, const model::JobSpec& job);

// The MIG pools among `mask`.
PoolMask MigPools(const model::ClusterSpec& spec, PoolMask mask);

// Places the slice job `job` (slice_units > 0) on `slices` and `capacity`:
// each worker on a MIG GPU if one has room, else on a whole GPU of a pool
// that does not slice. Appends one NodeShare per worker (gpu -1 for a GPU
// the caller picks). False, with nothing changed, if it does not fit.
class SliceSnapshot;
bool PlaceSliceJob(const model::ClusterSpec& spec, const model::JobSpec& job, SliceSnapshot* slices,
                   CapacitySnapshot* capacity, std::vector<model::NodeShare>* out);

// True when `job`, of priority value `priority`, may run on `pool` by the
// pool's own rules (size, slices, tier, min_priority, GPU model).
bool Eligible(const model::NodePool& pool, const model::JobSpec& job, int priority = INT32_MAX);
// The same for pool `pool` of `spec`, and within the job's own pools.
bool Eligible(const model::ClusterSpec& spec, int pool, const model::JobSpec& job, int priority = INT32_MAX);

// The job's eligible pools in the order placement should try them (MISSION
// 6: core work on the reserved base, interruptible work on spot):
//   preemptible jobs: spot, then reserved, then on-demand;
//   other jobs:       reserved, then on-demand.
// Within each tier, with `data_first`, pools in the job's data region come
// before the others (MISSION 9: data-heavy jobs stay near their data).
// Empty groups are left out. At most two groups per tier, so the list never
// allocates.
using PoolPreference = absl::InlinedVector<PoolMask, 2 * model::kNumTiers>;
PoolPreference PlacementPreference(const model::ClusterSpec& spec, const model::JobSpec& job, bool data_first = true);
// The same, given the job's eligible pools (EligiblePools, or a memo of it):
// what a pass that already has them asks, a few bit operations per tier.
PoolPreference PlacementPreference(const model::ClusterSpec& spec, const model::JobSpec& job, PoolMask eligible,
                                   bool data_first = true);

}  // namespace tide::sched

#endif  // TIDE_SCHED_ELIGIBILITY_H_
