// Consolidation: empty a partly used node by moving its jobs, through a
// checkpoint, onto the free GPUs of other running nodes, and release it.
// Karpenter's consolidation, but for training jobs that must checkpoint to
// move. See docs/design/consolidation.md.
//
// Rule, per pass, only while no schedulable job is pending (their claims
// would compete for the same free GPUs):
//   - a source is a ready, non-reserved node that runs something, whose pool
//     stays at or above its minimum, and all of whose jobs are movable;
//   - a job is movable when it runs (not starting or stopping), is not
//     protected, checkpoints (checkpoint.interval > 0), uses whole GPUs, has
//     every worker on the source, has run at least `min_run` in its current
//     run and, with `max_unsaved`, has at most that much work since its last
//     checkpoint;
//   - every worker must fit *now* on the free GPUs of other ready nodes that
//     run something and are not leaving (a what-if on a copy, by best fit
//     as the scheduler places them, then the longest remaining life);
//   - the saving, the source's price over its expected remaining life plus
//     the idle tail it would have had, less the price of any destination
//     whose life the moved job extends, must be at least `min_ratio` times
//     the cost, the moved GPUs' price over checkpoint + restart (load) time;
//   - each source uses one node of the disruption budget, and its pool must
//     have bought no node within `quiet_for` (a growing pool would buy the
//     emptied node back);
//   - with `headroom_gpus` / `headroom_window`, the ready nodes that stay
//     must keep that many GPUs free for arrivals.
// With `gangs`, a first pass also moves a gang spread over several nodes,
// each of which it has to itself, onto idle reserved nodes (see
// consolidation_gangs.cc): a job across nodes is never a source above.
// A job's remaining life is estimated from what the snapshot knows: by
// default its age (work done so far, the median remaining life of a
// heavy-tailed run time), or with `remaining: expected-end` from
// Job::expected_end (the Slurm time limit live; the trace's true end in the
// simulator, an oracle).
#ifndef TIDE_AUTOSCALE_SCALEDOWN_CONSOLIDATION_H_
#define TIDE_AUTOSCALE_SCALEDOWN_CONSOLIDATION_H_

#include "autoscale/context.h"
#include "core/time.h"

namespace tide::autoscale {

struct ConsolidationOptions {
  bool enabled = false;
  // A job is moved only after this long in its current run: past its load
  // phase, and never straight back after a move.
  Duration min_run = Minutes(30);
  // The saving must be at least this multiple of the cost.
  double min_ratio = 2.0;
  // Move only jobs with at most this much work since their last checkpoint
  // (0: any; a stopped job checkpoints on the way out).
  Duration max_unsaved{0};
  // Keep at least this many GPUs free on the running nodes that stay, for
  // arrivals to start on without a boot (0: none kept).
  int headroom_gpus = 0;
  // ... and at least as many as were submitted in this window just past:
  // recent arrivals are the best guess at the next ones (0: not used).
  // Needs ClusterState::arrivals.
  Duration headroom_window{0};
  // Consolidate a pool only when none of its nodes was bought within this
  // long: a pool that is growing would buy the emptied node back (0: off).
  Duration quiet_for = Hours(1);
  enum class Remaining : uint8_t { kAge, kExpectedEnd };
  Remaining remaining = Remaining::kAge;
  // Also move a gang of two or more workers, each alone on a node idle
  // release would give back, onto idle reserved nodes (consolidation_gangs.cc).
  bool gangs = false;
};

class Consolidation {
 public:
  // `idle_after` is idle release's: how long an emptied node would have
  // lingered had it been left to empty by itself.
  Consolidation(const ConsolidationOptions& o, Duration idle_after, bool release_reserved)
      : o_(o), idle_after_(idle_after), release_reserved_(release_reserved) {}

  // Appends, per node it empties, a kDrain of the node and a kConsolidate of
  // its jobs; marks them in ctx->leaving and ctx->touched; spends
  // ctx->disruption_allowance. Lowers plan->next_wakeup to when a job
  // becomes movable.
  void Evaluate(PassContext* ctx, ScalingPlan* plan) const;

  // The expected remaining run time of `job` at `now`, by the configured estimate.
  Duration Remaining(const model::ClusterState& state, const model::Job& job, Timestamp now) const;

 private:
  // With `gangs`: the pass that moves whole gangs onto idle reserved nodes
  // (consolidation_gangs.cc). Runs before the node-by-node pass, under the
  // same "nothing schedulable waits" rule.
  void MoveGangs(PassContext* ctx, ScalingPlan* plan) const;

  const ConsolidationOptions& o_;
  Duration idle_after_;
  bool release_reserved_;
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_SCALEDOWN_CONSOLIDATION_H_
