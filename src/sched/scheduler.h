// Scheduler: which pending jobs start now, and on which nodes.
//
// The rule (docs/design/scheduler.md):
//   1. Jobs are taken in queue order (priority, then submission time).
//   2. A job is a gang: all its workers are placed at once or none is. Each
//      worker goes to the eligible node with the fewest free GPUs that still
//      holds it (best fit), which keeps whole nodes free for large gangs.
//   3. The first job that does not fit becomes the head. Its start time is
//      reserved: the earliest time at which running jobs end and booting nodes
//      join so that it fits ("shadow time"). Later jobs may start now
//      (backfill) only if they end before the shadow time or leave enough
//      room at the shadow time for the head. The head is never delayed.
//      A job that cannot fit even on everything running and booting does not
//      hold a reservation; it waits for the autoscaler.
//
// Schedule() is a pure function of its inputs.
#ifndef TIDE_SCHED_SCHEDULER_H_
#define TIDE_SCHED_SCHEDULER_H_

#include <vector>

#include "core/time.h"
#include "core/spare.h"
#include "model/cluster.h"

namespace tide::sched {

struct SchedulerOptions {
  // EASY backfill behind the head of the queue.
  bool backfill = true;
  // Allocate jobs onto nodes that are still booting; the job starts once they
  // have joined. This is how Slurm treats powered-down cloud nodes.
  bool place_on_provisioning = false;
  // Place jobs in their data's region first (MISSION 9).
  bool egress_aware = true;
};

struct Placement {
  model::JobId job = 0;
  std::vector<model::NodeShare> shares;
  bool backfilled = false;  // started ahead of a blocked, higher-ranked job
};

struct SchedulerOutput {
  std::vector<Placement> placements;
  // The blocked job holding the reservation, and its shadow time, if a
  // reservation was needed: it is worked out only when a later job could
  // start now and is checked against it (always, without backfill).
  model::JobId head = -1;
  Timestamp shadow_time = kInfiniteFuture;
};

class KeptCapacity;

// A reservation's GPUs per slot (scheduler.cc), kept between passes with
// every entry 0.
struct SlotGpusMemory {
  std::vector<int> gpus;
  std::vector<uint32_t> written;  // the entries a pass wrote, to zero after it
};

// The lists a pass fills, kept between passes for their memory (as
// free_at_ is): the pending jobs in queue order, and the releases a
// reservation reads in time order.
struct ScheduleScratch {
  // GPUs returning to a slot at a time: a running job ending, or a booting
  // node joining.
  struct Release {
    Timestamp time;
    int slot;
    int gpus;
  };
  std::vector<const model::Job*> pending;
  std::vector<Release> releases;
};

class Scheduler {
 public:
  explicit Scheduler(SchedulerOptions options) : options_(options) {}
  const SchedulerOptions& options() const { return options_; }

  // Decides which pending jobs of `state` start at `now`. Pure; thread-safe.
  //
  // A driver whose state has an index (model/state_index.h) may also pass
  // the capacity snapshot it keeps between passes (sched/kept_capacity.h):
  // the pass places on it and leaves it as it found it, instead of making
  // its own. The decisions are the same either way.
  SchedulerOutput Schedule(const model::ClusterState& state, Timestamp now, KeptCapacity* kept = nullptr) const;

 private:
  SchedulerOptions options_;
  // The per-slot array a reservation fills, kept between passes with every
  // entry 0 (a pass zeroes only those it wrote): a cache of memory, not of
  // decisions.
  mutable Spare<SlotGpusMemory> free_at_;
  mutable Spare<ScheduleScratch> scratch_;
};

}  // namespace tide::sched

#endif  // TIDE_SCHED_SCHEDULER_H_
