// Simulator: replays a workload against one policy, in simulated time.
//
// A discrete-event loop over integer time. At each instant it applies every
// event due (arrivals, nodes joining, jobs ending or exiting, spot notices),
// then asks the same decision core the live controller uses:
// Scheduler::Schedule for what starts, and on the autoscaler's ticks
// Autoscaler::RunOnce for what to buy, release, drain, preempt, reclaim and
// resize. The simulator applies the plans, standing in for Slurm, the cloud
// and the training framework:
//   - jobs run in segments (sim/job_run.h): a load phase, work with periodic
//     checkpoints, evaluation; utilization follows, readable through
//     SimMetrics (the MetricsView);
//   - a job told to stop checkpoints (its checkpoint cost) and exits, then is
//     requeued or cancelled; a job killed first loses the work since its
//     last checkpoint;
//   - bought nodes join after a boot delay (SimProvider), then load from
//     shared storage if configured; spot nodes are reclaimed with notice
//     (hazard or availability trace);
//   - every node is billed per second from request to release.
//
// Runs are deterministic: the same inputs and seed give the same bytes.
#ifndef TIDE_SIM_SIMULATOR_H_
#define TIDE_SIM_SIMULATOR_H_

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "autoscale/autoscaler.h"
#include "autoscale/plan.h"
#include "autoscale/policy.h"
#include "core/rng.h"
#include "core/status.h"
#include "cost/ledger.h"
#include "model/cluster.h"
#include "model/state_index.h"
#include "model/timeline.h"
#include "sched/kept_capacity.h"
#include "sched/scheduler.h"
#include "sim/event_queue.h"
#include "sim/result.h"
#include "sim/sim_metrics.h"
#include "sim/sim_provider.h"
#include "sim/storage_model.h"
#include "sim/world.h"
#include "trace/reader.h"

namespace tide::sim {

// How far a running simulation has got, for a progress display on another
// thread. The simulator only stores into it (relaxed); it reads no clock.
struct SimProgress {
  std::atomic<int64_t> now{0};         // simulated time, unix seconds
  std::atomic<int64_t> jobs_done{0};   // jobs completed or cancelled
  std::atomic<int64_t> events{0};
  std::atomic<bool> finished{false};
};

struct SimOptions {
  uint64_t seed = 1;
  // Keep the decision log (scale-ups, releases, reports, job starts).
  bool record_decisions = false;
  bool log_job_starts = true;
  // Run the autoscaler on every tick of its grid, even when nothing changed
  // and no timer is due. Slower; the results are the same (a test checks).
  bool every_tick = false;
  // Check the state index (model/state_index.h) against a fresh one before
  // every decision, and fail the run if they differ. Slow; for tests.
  bool check_index = false;  // and the scheduler's kept capacity (sched/kept_capacity.h)
  WorldOptions world;
  // Record the timeline of the HTML report: buckets of `timeline_step`,
  // doubling to stay within `timeline_max_buckets`.
  bool record_timeline = false;
  Duration timeline_step{60};
  int64_t timeline_max_buckets = 2048;
  SimProgress* progress = nullptr;  // not owned; may be shared by several simulators
};

// Hooks for tests that check invariants while a simulation runs.
class SimObserver {
 public:
  virtual ~SimObserver() = default;
  // After the scheduler's placements were applied.
  virtual void AfterSchedule(const model::ClusterState& state, const sched::SchedulerOutput& out, Timestamp now) {}
  // With the state RunOnce saw, before the plan is applied.
  virtual void OnPlan(const model::ClusterState& state, const autoscale::ScalingPlan& plan, Timestamp now) {}
  // After every event of one instant and the decisions they caused.
  virtual void AfterStep(const model::ClusterState& state, Timestamp now) {}
  // A job was interrupted (stopped or killed) by `cause`; `lost` seconds of
  // work since its last checkpoint were lost.
  virtual void OnInterrupt(const model::Job& job, std::string_view cause, double lost, Timestamp now) {}
};

struct SimOutput {
  PolicyResult result;
  std::vector<std::string> decisions;  // when SimOptions::record_decisions
  // When SimOptions::record_timeline: the timeline, and the wait
  // distribution as the 0th..100th percentiles (101 values, seconds) of
  // jobs that started, first over all jobs ("all"), then by class.
  std::optional<model::Timeline> timeline;
  std::vector<std::pair<std::string, std::vector<int64_t>>> wait_quantiles;
};

class Simulator {
 public:
  // `spec` is the cluster this policy runs on (PolicyProfile::ApplyTo) and
  // must outlive the simulator, as must `trace` and `observer`.
  Simulator(const model::ClusterSpec* spec, autoscale::PolicyProfile policy, SimOptions options,
            trace::TraceReader* trace, SimObserver* observer = nullptr);

  // Runs to the end of the workload. InvalidArgument on bad trace input;
  // Internal if a decision was inconsistent with the state (a bug).
  Result<SimOutput> Run();

 private:
  // What the simulator knows of a job beyond the snapshot.
  struct SimJob {
    // The current run's segments, and what SimMetrics has found out about
    // them. SimMetrics sees the run while the job is running: from its start
    // until it stops, is killed or is requeued.
    RunRecord run;
    uint64_t epoch = 0;    // bumps when the run changes; older events are stale
    double work = 0;       // total work, seconds at full allocation
    bool started_once = false;
    // While stopping: progress when told, the checkpoint it falls back to
    // if killed first, and what happens on exit.
    double stop_progress = 0;
    double stop_fallback = 0;
    bool stop_cancel = false;
    std::string stop_cause;
    int reclaims = 0;
  };

  Status Init();
  Status ReadNextJob();
  Status HandleEvent(const Event& e, bool* changed, bool* tick);
  void RefreshJobs(Timestamp now);
  Status RunScheduler(Timestamp now);
  Status ApplyPlacement(const sched::Placement& p, Timestamp now);
  // Takes GPUs for `share` of `job` on MIG node `n`, choosing them as the
  // what-if did; sets *reconfigure if a GPU must change layout first.
  Status TakeMigGpus(const model::Job& job, model::Node& n, model::NodeShare* share, bool* reconfigure);
  void ReturnGpus(const model::Job& job, model::Node& n, const model::NodeShare& share);
  double Rate(const model::Job& job, int workers) const;
  model::JobPhases PhasesFor(const model::Job& job, int workers) const;
  void StartRun(model::Job& job, Timestamp now);
  void NewSegment(model::Job& job, Timestamp now, double progress0, Duration startup);
  void MaybeStartAfterBoot(Timestamp now);
  Status CompleteJob(model::JobId id, Timestamp now);
  void StopJob(model::Job& job, Timestamp now, std::string_view cause, bool cancel);
  Status ExitJob(model::JobId id, Timestamp now);
  void KillJob(model::Job& job, Timestamp now, std::string_view cause);
  void FreeAllocation(model::Job& job, Timestamp now);
  void Requeue(model::Job& job, Timestamp now);
  void CloseSegments(const model::Job& job, Timestamp now);
  // Charges `job` for the GPUs it held from `from` to `to`.
  void Attribute(const model::Job& job, Timestamp from, Timestamp to);
  Status RunAutoscaler(Timestamp now);
  Status ApplyResize(const autoscale::Action& a, Timestamp now);
  void CreateNode(int pool, Timestamp now, bool forecast);
  void NodeJoined(model::Node& n, Timestamp now);
  void NodeUsable(model::Node& n, Timestamp now);
  Status ReleaseNode(model::NodeId id, Timestamp now);
  void TerminateNode(model::NodeId id, Timestamp now, bool interrupted);
  void DrainNode(model::Node& n, Timestamp now);
  void MaybeFinishDrain(model::NodeId id, Timestamp now);
  void SpotNotice(model::NodeId id, Timestamp now, Timestamp kill, std::string_view why);
  void SpotKill(model::NodeId id, Timestamp now);
  int SpotSupply(Timestamp now) const;
  void SpotSupplyChanged(Timestamp now);
  void ScheduleStorage();
  void RecordDisruption(Timestamp now);
  void ScheduleTick(Timestamp now);
  void RemoveJob(model::JobId id);
  void RemoveNode(model::NodeId id);
  model::Node* FindNode(model::NodeId id);
  model::Job* FindJob(model::JobId id);
  // Tells the index that a job reached other than through FindJob changed.
  void TouchJob(const model::Job& job);
  // Brings the index up to date before a decision.
  Status SyncIndex();
  void Log(Timestamp now, std::string_view kind, std::string_view text);
  PolicyResult Finish();
  // The timeline's levels and totals as they stand after the instant `now`.
  void RecordTimeline(Timestamp now);
  void HoldTimeline(Timestamp now);
  void UpdateProgress(Timestamp now);

  const model::ClusterSpec* spec_;
  autoscale::PolicyProfile policy_;
  SimOptions options_;
  trace::TraceReader* trace_;
  SimObserver* observer_;

  sched::Scheduler scheduler_;
  // The scheduler's capacity snapshot, kept between passes beside index_.
  sched::KeptCapacity kept_capacity_;
  std::optional<autoscale::Autoscaler> autoscaler_;
  SimProvider provider_;
  Rng spot_rng_;
  StorageModel storage_;
  cost::Ledger ledger_;
  EventQueue queue_;

  // Progress of running jobs, worked out from their current segment (in
  // sim_jobs_, at the job's position) when a decision asks: refreshing every
  // running job's before each pass would cost more than the passes that
  // read it.
  class Progress final : public model::ProgressView {
   public:
    explicit Progress(const Simulator* sim) : sim_(sim) {}
    void ProgressAt(const model::Job& job, Timestamp t, double* progress, double* saved) const override;

   private:
    const Simulator* sim_;
  };

  model::ClusterState state_;
  Progress progress_{this};
  model::StateIndex index_;  // of state_: what the decision core would otherwise scan for
  // Positions in the state by id. The simulator numbers jobs and nodes from
  // 1 in order, so a table, not a hash map: a node erased moves every later
  // one down a position, and each is written again.
  class Positions {
   public:
    // The position of `id`, or -1.
    int64_t Find(int64_t id) const {
      return id >= 0 && static_cast<size_t>(id) < pos_.size() ? pos_[static_cast<size_t>(id)] : -1;
    }
    size_t At(int64_t id) const {
      const int64_t p = Find(id);
      assert(p >= 0);
      return static_cast<size_t>(p);
    }
    void Set(int64_t id, size_t pos) {
      if (static_cast<size_t>(id) >= pos_.size()) pos_.resize(std::max(pos_.size() * 2, static_cast<size_t>(id) + 1), -1);
      pos_[static_cast<size_t>(id)] = static_cast<int32_t>(pos);
    }
    void Erase(int64_t id) { pos_[static_cast<size_t>(id)] = -1; }

   private:
    std::vector<int32_t> pos_;
  };
  Positions job_index_;
  Positions node_index_;
  absl::flat_hash_map<model::NodeId, size_t> bill_;  // node -> ledger handle
  // What the simulator keeps of each job in state_.jobs, at the same index.
  std::vector<SimJob> sim_jobs_;
  // Jobs placed on nodes still booting (kStarting), by id, in no order; may
  // name jobs that have left that state since (MaybeStartAfterBoot drops them).
  std::vector<model::JobId> starting_;
  SimJob& Sim(model::JobId id) { return sim_jobs_[job_index_.At(id)]; }
  // What SimMetrics reads: the runs of running jobs in sim_jobs_, found by position.
  class Runs final : public RunSource {
   public:
    explicit Runs(const Simulator* sim) : sim_(sim) {}
    const RunRecord* Find(model::JobId job) const override;
    void ForEachRun(absl::FunctionRef<void(model::JobId)> f) const override;

   private:
    const Simulator* sim_;
  };
  Runs runs_{this};
  SimMetrics metrics_;
  absl::flat_hash_set<model::NodeId> loading_;       // joined, loading from storage
  absl::flat_hash_map<model::NodeId, Timestamp> joined_at_;
  absl::flat_hash_set<model::NodeId> forecast_nodes_;  // bought ahead of demand, unused so far
  std::vector<int> pool_seq_;

  std::optional<model::JobSpec> next_job_;
  model::JobId next_job_id_ = 1;
  model::NodeId next_node_id_ = 1;
  Timestamp t0_{};
  Timestamp last_arrival_ = kInfinitePast;
  size_t arrivals_expired_ = 0;  // leading entries of state_.arrivals known to be past what is kept
  Timestamp last_completion_ = kInfinitePast;
  Duration supply_period_{0};
  bool initializing_ = false;  // creating the initial fleet

  // Autoscaler loop bookkeeping.
  Timestamp tick_at_ = kInfiniteFuture;
  Timestamp wakeup_ = kInfiniteFuture;
  bool as_dirty_ = true;

  // Figures.
  std::vector<int64_t> waits_, jcts_;
  std::vector<std::vector<int64_t>> waits_by_class_, jcts_by_class_;
  double busy_gpu_seconds_ = 0;
  std::vector<double> cost_by_class_;
  std::map<std::string, double> cost_by_team_;
  double util_gpu_seconds_ = 0;
  PolicyResult result_;
  int live_nodes_ = 0;
  absl::flat_hash_set<std::pair<model::JobId, autoscale::ActionKind>> noted_;
  absl::flat_hash_set<model::JobId> unschedulable_;
  std::vector<std::string> decisions_;

  // The timeline (SimOptions::record_timeline).
  std::optional<model::TimelineRecorder> timeline_;
  Timestamp timeline_at_{};
  std::vector<double> levels_, totals_;
};

}  // namespace tide::sim

#endif  // TIDE_SIM_SIMULATOR_H_
