// JobRun: how one uninterrupted stretch of a job advances.
//
// A segment starts at `start` with `progress0` work done (saved: a segment
// always starts from a checkpoint or a clean resize). It spends `startup`
// loading (data, model, checkpoint) with no progress, then works at `rate`
// (work per second; 1.0 at the job's requested size). Every `ckpt_interval`
// of working time it pauses `ckpt_cost` to write a checkpoint; no checkpoint
// is written at the very end. Progress is in seconds of work at full
// allocation; the job is done when it reaches `work`.
//
// Utilization at a time follows the activity: startup (load_util), a
// checkpoint (checkpoint_util), or work, whose phase is set by progress:
// training until the last `eval_share` of the work, then evaluation.
//
// All of it is closed-form: no events are needed between segment changes.
#ifndef TIDE_SIM_JOB_RUN_H_
#define TIDE_SIM_JOB_RUN_H_

#include <algorithm>
#include <cstdint>

#include "core/time.h"
#include "model/cluster.h"

namespace tide::sim {

class JobRun {
 public:
  JobRun(Timestamp start, double progress0, double work, double rate, Duration startup,
         const model::CheckpointPolicy& ckpt, const model::JobPhases& phases);

  Timestamp start() const { return start_; }
  // When the start-up (data loading, a resize's pause) is over.
  Timestamp StartupEnd() const;
  double progress0() const { return p0_; }
  double rate() const { return rate_; }

  // Work done by `t` (clamped to [progress0, work]).
  double ProgressAt(Timestamp t) const;
  // Progress of the last checkpoint completed by `t` (progress0 if none).
  double SavedAt(Timestamp t) const;
  // When the work is done (the first whole second at or after it).
  Timestamp EndTime() const { return end_; }
  // Utilization at `t` (t in [start, end)).
  double UtilAt(Timestamp t) const;
  // The first time after `t` at which UtilAt may change (EndTime at most).
  Timestamp NextChange(Timestamp t) const;
  // The last time at or before `t` at which UtilAt changed (start at least).
  Timestamp PrevChange(Timestamp t) const;
  // Calls f(util, seconds) for each piece of constant utilization in
  // [from, to) (from >= start, to <= EndTime), in order: the pieces that a
  // walk by NextChange and UtilAt makes, with the same values. Between
  // checkpoints, before evaluation starts, the next piece is counted on
  // from the last, rather than worked out from the start again.
  template <typename F>
  void ForEachPiece(Timestamp from, Timestamp to, F&& f) const {
    Timestamp t = from;
    while (t < to) {
      const Timestamp next = std::min(to, PieceEnd(t));
      f(UtilAt(t), (next - t).count());
      t = next;
    }
  }
  // False when, from a time at which `holds` is false of the utilization, no
  // stretch on which it is true can last longer than `span`: the phases it
  // is true of are only checkpoint pauses, shorter than the span. (Loading
  // comes first, so it is never after such a time.) True when it may.
  template <typename Pred>
  bool MayHoldLongerThan(Pred holds, Duration span) const {
    if (p0_ < eval_from_ && holds(phases_.train_util)) return true;
    if (eval_from_ < work_ && holds(phases_.eval_util)) return true;
    // A pause is `cost_` long; its ends fall on whole seconds, so allow two more.
    return interval_ > 0 && holds(phases_.checkpoint_util) && static_cast<double>(span.count()) < cost_ + 2;
  }

 private:
  enum class Activity { kStartup, kWork, kCheckpoint };
  Activity ActivityAt(Timestamp t, double* work_time) const;
  // Wall time (from start) at which working time `w` is reached.
  double WallForWork(double w) const;
  // NextChange(t), found from the checkpoint cycle alone where nothing
  // else can end the piece sooner.
  Timestamp PieceEnd(Timestamp t) const;

  Timestamp start_;
  double p0_, work_, rate_;
  double startup_, interval_, cost_;
  double work_time_;  // working seconds needed
  Timestamp end_;
  model::JobPhases phases_;
  double eval_from_;  // progress at which evaluation starts
  // Wall time (from start) at which evaluation starts; minus infinity if
  // the segment starts in it.
  double eval_at_;
};

// The work (seconds at full allocation) of a job whose uninterrupted run at
// full allocation takes `runtime` wall time, including its load phase and
// periodic checkpoints: a job that is never interrupted ends exactly
// `runtime` after it starts, as the trace recorded.
double WorkFor(Duration runtime, const model::JobPhases& phases, const model::CheckpointPolicy& ckpt);

// The load time a run of this job starts with (its load phase, at most its runtime).
Duration StartupFor(const model::JobSpec& spec);

}  // namespace tide::sim

#endif  // TIDE_SIM_JOB_RUN_H_
