// Simulator: replays a workload against one policy, in simulated time.
//
// A discrete-event loop over integer time. At each instant it applies every
// event due (arrivals, nodes joining, jobs ending), then asks the same
// decision core the live controller uses: Scheduler::Schedule for what
// starts, and on the autoscaler's ticks Autoscaler::RunOnce for what to buy
// and release. Plans are applied by the simulator, standing in for Slurm and
// the cloud: bought nodes join after a boot delay drawn by SimProvider, and
// every node is billed per second from request to release.
//
// Runs are deterministic: the same inputs and seed give the same bytes.
#ifndef TIDE_SIM_SIMULATOR_H_
#define TIDE_SIM_SIMULATOR_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "autoscale/autoscaler.h"
#include "autoscale/plan.h"
#include "autoscale/policy.h"
#include "core/status.h"
#include "cost/ledger.h"
#include "model/cluster.h"
#include "sched/scheduler.h"
#include "sim/event_queue.h"
#include "sim/result.h"
#include "sim/sim_provider.h"
#include "trace/reader.h"

namespace tide::sim {

struct SimOptions {
  uint64_t seed = 1;
  // Keep the decision log (scale-ups, releases, reports, job starts).
  bool record_decisions = false;
  bool log_job_starts = true;
  // Run the autoscaler on every tick of its grid, even when nothing changed
  // and no timer is due. Slower; the results are the same (a test checks).
  bool every_tick = false;
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
};

struct SimOutput {
  PolicyResult result;
  std::vector<std::string> decisions;  // when SimOptions::record_decisions
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
  Status Init();
  Status ReadNextJob();
  Status HandleEvent(const Event& e, bool* changed, bool* tick);
  Status RunScheduler(Timestamp now);
  Status ApplyPlacement(const sched::Placement& p, Timestamp now);
  void StartRunning(model::Job& job, Timestamp now);
  void MaybeStartAfterBoot(Timestamp now);
  Status CompleteJob(model::JobId id, Timestamp now);
  Status RunAutoscaler(Timestamp now);
  void CreateNode(int pool, Timestamp now);
  Status ReleaseNode(model::NodeId id, Timestamp now);
  void ScheduleTick(Timestamp now);
  void RemoveJob(model::JobId id);
  void RemoveNode(model::NodeId id);
  model::Node* FindNode(model::NodeId id);
  model::Job* FindJob(model::JobId id);
  void Log(Timestamp now, std::string_view kind, std::string_view text);
  PolicyResult Finish();

  const model::ClusterSpec* spec_;
  autoscale::PolicyProfile policy_;
  SimOptions options_;
  trace::TraceReader* trace_;
  SimObserver* observer_;

  sched::Scheduler scheduler_;
  std::optional<autoscale::Autoscaler> autoscaler_;
  SimProvider provider_;
  cost::Ledger ledger_;
  EventQueue queue_;

  model::ClusterState state_;
  absl::flat_hash_map<model::JobId, size_t> job_index_;
  absl::flat_hash_map<model::NodeId, size_t> node_index_;
  absl::flat_hash_map<model::NodeId, size_t> bill_;  // node -> ledger handle
  std::vector<int> pool_seq_;

  std::optional<model::JobSpec> next_job_;
  model::JobId next_job_id_ = 1;
  model::NodeId next_node_id_ = 1;
  Timestamp t0_{};
  Timestamp last_arrival_ = kInfinitePast;
  Timestamp last_completion_ = kInfinitePast;

  // Autoscaler loop bookkeeping.
  Timestamp tick_at_ = kInfiniteFuture;
  Timestamp wakeup_ = kInfiniteFuture;
  bool as_dirty_ = true;

  // Figures.
  std::vector<int64_t> waits_, jcts_;
  std::vector<std::vector<int64_t>> waits_by_class_, jcts_by_class_;
  int64_t busy_gpu_seconds_ = 0;
  PolicyResult result_;
  int live_nodes_ = 0;
  absl::flat_hash_map<model::JobId, autoscale::ActionKind> noted_;
  absl::flat_hash_set<model::JobId> unschedulable_;
  std::vector<std::string> decisions_;
};

}  // namespace tide::sim

#endif  // TIDE_SIM_SIMULATOR_H_
