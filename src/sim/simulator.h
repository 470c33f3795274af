// Simulator: replays a workload against one policy, in simulated time.
//
// A discrete-event loop over integer time. At each instant it applies every
// event due (arrivals, nodes joining, jobs ending or exiting, spot notices),
// then asks the same decision core the live controller uses:
// Scheduler::Schedule for what starts, and on the autoscaler's ticks
// Autoscaler::RunOnce for what to buy, release, drain, preempt, reclaim and
// resize. Its plans are carried out by the same Applier the live controller
// uses (apply/applier.h), on the simulator's own workload manager and cloud:
//   - SimCluster (sim_cluster.h): jobs and allocations, standing in for the
//     workload manager and the training framework;
//   - SimCloud (sim_cloud.h): nodes that boot, load from shared storage,
//     are billed, and (spot) are interrupted with notice;
//   - SimWorkload (sim_workload.h): the two as a WorkloadManager;
//   - SimView and SimListener (sim_apply.h): the applier's view and hooks;
//   - Recorder (recorder.h): the figures, the decision log, the timeline.
//
// Runs are deterministic: the same inputs and seed give the same bytes.
#ifndef TIDE_SIM_SIMULATOR_H_
#define TIDE_SIM_SIMULATOR_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apply/applier.h"
#include "autoscale/autoscaler.h"
#include "autoscale/plan.h"
#include "autoscale/policy.h"
#include "core/status.h"
#include "model/cluster.h"
#include "model/timeline.h"
#include "sched/kept_capacity.h"
#include "sched/scheduler.h"
#include "sim/event_queue.h"
#include "sim/recorder.h"
#include "sim/result.h"
#include "sim/sim_apply.h"
#include "sim/sim_cloud.h"
#include "sim/sim_cluster.h"
#include "sim/sim_state.h"
#include "sim/sim_workload.h"
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

  // The simulated workload manager and cloud (for contract tests: they
  // implement backends::WorkloadManager and providers::CloudProvider).
  SimWorkload* workload() { return &workload_; }
  SimCloud* cloud() { return &cloud_; }
  // The simulated cluster, for contract tests to submit and place jobs
  // without running the event loop.
  SimCluster* cluster() { return &cluster_; }
  // Sets up the initial fleet and reads the first job, as Run does first.
  Status Init();

 private:
  Status ReadNextJob();
  Status HandleEvent(const Event& e, bool* changed, bool* tick);
  Status RunScheduler(Timestamp now);
  Status RunAutoscaler(Timestamp now);
  void ScheduleTick(Timestamp now);
  // Brings the index up to date before a decision.
  Status SyncIndex();

  autoscale::PolicyProfile policy_;
  SimOptions options_;
  trace::TraceReader* trace_;

  SimState sim_;
  Recorder recorder_;
  SimCloud cloud_;
  SimCluster cluster_;
  SimWorkload workload_;
  SimView view_;
  SimListener listener_;
  apply::Applier applier_;
  apply::ApplyStats stats_;
  Status deferred_;  // an error from a node given back while a job left (a bug)

  sched::Scheduler scheduler_;
  // The scheduler's capacity snapshot, kept between passes beside the index.
  sched::KeptCapacity kept_capacity_;
  std::optional<autoscale::Autoscaler> autoscaler_;

  std::optional<model::JobSpec> next_job_;
  bool keep_arrivals_ = false;  // the forecast or consolidation's headroom reads them

  // Autoscaler loop bookkeeping.
  Timestamp tick_at_ = kInfiniteFuture;
  Timestamp wakeup_ = kInfiniteFuture;
  bool as_dirty_ = true;
  bool initialized_ = false;
};

}  // namespace tide::sim

#endif  // TIDE_SIM_SIMULATOR_H_
