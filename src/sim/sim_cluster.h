// SimCluster: the simulated cluster's jobs and allocations, standing in for
// the workload manager and the training framework:
//   - a placed job takes its GPUs (MIG slices as the what-if chose them) and
//     runs in segments (sim/job_run.h): a load phase, work with periodic
//     checkpoints, evaluation; utilization follows, readable through
//     SimMetrics (the MetricsView);
//   - a job told to stop checkpoints (its checkpoint cost) and exits, then
//     is requeued or cancelled; a job whose node is taken first loses the
//     work since its last checkpoint;
//   - an elastic job resized re-rendezvouses (a pause) from its live state;
//   - a node cordoned for release is handed back once its last job leaves.
// Every change goes through SimState, which keeps the index in step.
#ifndef TIDE_SIM_SIM_CLUSTER_H_
#define TIDE_SIM_SIM_CLUSTER_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "autoscale/plan.h"
#include "core/status.h"
#include "model/cluster.h"
#include "sched/scheduler.h"
#include "sim/recorder.h"
#include "sim/sim_metrics.h"
#include "sim/sim_state.h"

namespace tide::sim {

class SimCloud;

class SimCluster {
 public:
  // Borrowed, outliving the cluster: `sim`, `recorder`, `cloud`.
  // `start_tick`: jobs on nodes that just joined start on this grid.
  SimCluster(SimState* sim, Recorder* recorder, SimCloud* cloud, Duration start_tick, bool log_job_starts);

  // A node cordoned for release emptied: give it back (the simulator wires
  // this to the applier's GiveBack).
  void set_on_drained(std::function<void(model::NodeId, Timestamp)> f) { on_drained_ = std::move(f); }

  // A job arrives. InvalidArgument for an unknown priority class.
  Status Submit(model::JobSpec* spec, Timestamp now, bool keep_arrivals, int forecast_days);
  // Starts a job the scheduler placed (Internal if the placement does not
  // fit: a bug).
  Status Place(const sched::Placement& p, Timestamp now);
  // The job's events: its run ended (`epoch` of the run), it exited after a
  // stop, its start tick came. Stale events are ignored.
  Status RunEnded(model::JobId id, uint64_t epoch, Timestamp now, bool* changed);
  Status Exited(model::JobId id, uint64_t epoch, Timestamp now, bool* changed);
  void StartDue(model::JobId id, Timestamp now, bool* changed);
  // Jobs placed on nodes that were booting start once every node is ready.
  void MaybeStartAfterBoot(Timestamp now);

  // Tells a running job to checkpoint and exit (`cause`, for the figures:
  // "preempted", "spot", "consolidated", "reclaimed"); it keeps its GPUs
  // until then. FailedPrecondition if it is not running.
  Status Stop(model::JobId id, Timestamp now, std::string_view cause, bool cancel);
  // Resizes a running elastic job (Internal if the order does not fit).
  Status Resize(model::JobId id, const autoscale::ResizeInfo& r, Timestamp now);
  // The node is taken: its jobs are killed (losing the work since their last
  // checkpoint) or, if they had not started, go back to waiting.
  void NodeLost(model::NodeId id, Timestamp now);

  // The run of each running job, as SimMetrics reads it.
  const SimMetrics& metrics() const { return metrics_; }
  const model::ProgressView* progress() const { return &progress_; }
  // Writes every running job's progress into its record (for observers).
  void RefreshJobs(Timestamp now);
  // The epoch of a job's current run (for its events).
  uint64_t Epoch(model::JobId id) const { return sim_jobs_[sim_->job_pos.At(id)].epoch; }

 private:
  // What the cluster knows of a job beyond the snapshot, at the job's
  // position in the state.
  struct SimJob {
    // The current run's segments, and what SimMetrics has found out about
    // them. SimMetrics sees the run while the job is running: from its start
    // until it stops, is killed or is requeued.
    RunRecord run;
    uint64_t epoch = 0;  // bumps when the run changes; older events are stale
    double work = 0;     // total work, seconds at full allocation
    bool started_once = false;
    // While stopping: progress when told, the checkpoint it falls back to
    // if killed first, and what happens on exit.
    double stop_progress = 0;
    double stop_fallback = 0;
    bool stop_cancel = false;
    std::string stop_cause;
  };
  SimJob& Sim(model::JobId id) { return sim_jobs_[sim_->job_pos.At(id)]; }

  // Takes GPUs for `share` of `job` on MIG node `n`, choosing them as the
  // what-if did; sets *reconfigure if a GPU must change layout first.
  Status TakeMigGpus(const model::Job& job, model::Node& n, model::NodeShare* share, bool* reconfigure);
  void ReturnGpus(const model::Job& job, model::Node& n, const model::NodeShare& share);
  double Rate(const model::Job& job, int workers) const;
  model::JobPhases PhasesFor(const model::Job& job, int workers) const;
  void StartRun(model::Job& job, Timestamp now);
  void NewSegment(model::Job& job, Timestamp now, double progress0, Duration startup);
  Status CompleteJob(model::JobId id, Timestamp now);
  Status ExitJob(model::JobId id, Timestamp now);
  void KillJob(model::Job& job, Timestamp now, std::string_view cause);
  void FreeAllocation(model::Job& job, Timestamp now);
  void Requeue(model::Job& job, Timestamp now);
  void CloseSegments(const model::Job& job, Timestamp now);
  // Charges `job` for the GPUs it held from `from` to `to`.
  void Attribute(const model::Job& job, Timestamp from, Timestamp to);
  void MaybeFinishDrain(model::NodeId id, Timestamp now);
  void RemoveJob(model::JobId id);

  // Progress of running jobs, worked out from their current segment when a
  // decision asks: refreshing every running job's before each pass would
  // cost more than the passes that read it.
  class Progress final : public model::ProgressView {
   public:
    explicit Progress(const SimCluster* c) : c_(c) {}
    void ProgressAt(const model::Job& job, Timestamp t, double* progress, double* saved) const override;

   private:
    const SimCluster* c_;
  };
  // What SimMetrics reads: the runs of running jobs, found by position.
  class Runs final : public RunSource {
   public:
    explicit Runs(const SimCluster* c) : c_(c) {}
    const RunRecord* Find(model::JobId job) const override;
    void ForEachRun(absl::FunctionRef<void(model::JobId)> f) const override;

   private:
    const SimCluster* c_;
  };

  SimState* sim_;
  Recorder* recorder_;
  SimCloud* cloud_;
  Duration start_tick_;
  bool log_job_starts_;
  std::function<void(model::NodeId, Timestamp)> on_drained_;
  std::vector<SimJob> sim_jobs_;  // at the positions of sim_->state.jobs
  // Jobs placed on nodes still booting (kStarting), by id, in no order; may
  // name jobs that have left that state since (MaybeStartAfterBoot drops them).
  std::vector<model::JobId> starting_;
  model::JobId next_job_id_ = 1;
  size_t arrivals_expired_ = 0;  // leading entries of state.arrivals known to be past what is kept
  Progress progress_{this};
  Runs runs_{this};
  SimMetrics metrics_;
};

}  // namespace tide::sim

#endif  // TIDE_SIM_SIM_CLUSTER_H_
