// Controller: `tide run`. Each loop it observes the workload manager (any
// backend: backends/workload.h) and the provider, reconciles the state
// store, builds the snapshot, moves nodes and stops along their life cycles,
// places waiting jobs with the simulator's Scheduler::Schedule when the
// manager does not schedule by itself, calls the same Autoscaler::RunOnce
// the simulator calls, and hands the plan to the same Applier. A failed or
// unparseable observation stops the loop before any decision: nothing is
// done on stale or missing information, and the error is in the log, in
// /status and in tide_loop_errors_total. Nor does a loop act when the state
// store refuses a write: nothing is done on the cloud that cannot be
// journaled. What is wrong now (the workload manager, the provider, the
// store) is a fault that /healthz reports until a later call succeeds
// (docs/live.md, "Faults").
#ifndef TIDE_CONTROLLER_CONTROLLER_H_
#define TIDE_CONTROLLER_CONTROLLER_H_

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "apply/applier.h"
#include "autoscale/autoscaler.h"
#include "backends/workload.h"
#include "config/config.h"
#include "controller/live_cluster.h"
#include "controller/live_report.h"
#include "controller/snapshot.h"
#include "controller/store.h"
#include "controller/apply_journal.h"
#include "controller/watched_provider.h"
#include "metrics/prometheus.h"
#include "metrics/util_history.h"
#include "providers/provider.h"
#include "sched/scheduler.h"

namespace tide::controller {

// The most workers (Kubernetes: pods) one loop binds; the rest are placed by
// the next loops (docs/live.md, "The loop").
inline constexpr int kMaxWorkersBoundPerLoop = 100;

struct ControllerOptions {
  bool dry_run = false;  // decide and print; change nothing, write no state
  std::string fault;     // LiveListener's fault injection (tests only; from $TIDE_FAULT)
  // How long the store keeps the live status page's samples and job starts.
  Duration history = kHistoryKept;
  // Leader election: whether this replica may still act, asked before each
  // create, delete and stop (StoreJournal::set_may_act). Unset: always.
  std::function<bool()> may_act;
};

// What one loop saw and did, for the log and /status.
struct LoopReport {
  Timestamp at{};
  bool ok = false;
  std::string error;  // why the loop stopped before deciding
  int pending_jobs = 0;
  int pending_gpus = 0;
  int placed = 0;  // jobs tide bound to nodes (a manager that does not schedule by itself)
  autoscale::ScalingPlan plan;
  apply::ApplyStats acted;
};

class Controller {
 public:
  // Every pointer is borrowed and must outlive the controller. `prometheus`
  // may be null (no utilization data: idle-job reclaim then never fires).
  Controller(const config::Config& config, autoscale::Autoscaler autoscaler, backends::WorkloadManager* manager,
             providers::CloudProvider* provider, Store* store, metrics::PrometheusSource* prometheus,
             ControllerOptions options, LogFn log);

  // One pass at `now`. Never throws; errors are in the report.
  LoopReport RunLoop(Timestamp now);

  // For the HTTP server's threads: thread-safe copies of the last loop's
  // view.
  std::string MetricsText() const;
  std::string StatusJson() const;
  // False, with one plain line per problem in `why`, while a fault is
  // current (the workload manager cannot be read, the provider does not
  // answer or times out, the state file cannot be written) or no loop has
  // succeeded for three loop intervals (at least 10 s); true once they clear.
  bool Healthy(Timestamp now, std::string* why) const;

  // Requests from the HTTP API, applied by the loop's thread.
  void Pause(bool paused) { paused_ = paused; }
  bool paused() const { return paused_; }

 private:
  void Observe(Timestamp now, LoopReport* r, backends::Observation* obs, std::vector<providers::Instance>* instances,
               std::vector<providers::Interruption>* interruptions);
  void FeedMetrics(const backends::Observation& obs, const Built& built, Timestamp now);
  void CountInterruptions(const backends::Observation& obs, Timestamp now);
  // Places waiting jobs (a manager that does not schedule by itself): the
  // simulator's scheduler on the snapshot, its placements bound through the
  // applier and marked in the snapshot, so that RunOnce sees them starting.
  void Place(Built* built, Timestamp now, LoopReport* r);
  // Tells the manager why each waiting job waits, when that changed.
  void Explain(const Built& built, const autoscale::ScalingPlan& plan, Timestamp now);
  void LogPlan(const autoscale::ScalingPlan& plan, const Built& built, Timestamp now);
  void Publish(const LoopReport& r, const Built* built, Timestamp now);
  // After a successful loop: the sample of the snapshot it decided on and
  // the job starts not yet recorded, for the live status page.
  void RecordHistory(const Built& built, const std::vector<providers::Instance>& instances, Timestamp now);
  void LoopError(LoopReport* r, const std::string& source, const Status& s);
  // A store call of this loop and how it went: a failure is the store's
  // fault until a later loop writes without one.
  void NoteStore(const Status& s);
  // The faults as this loop left them: a source it did not reach keeps what
  // it had.
  void UpdateFaults();

  const config::Config& config_;
  autoscale::Autoscaler autoscaler_;
  sched::Scheduler scheduler_;
  backends::WorkloadManager* manager_;
  WatchedProvider watched_;  // the provider, watched for its faults
  providers::CloudProvider* provider_;  // &watched_
  Store* store_;
  metrics::PrometheusSource* prometheus_;
  metrics::UtilHistory history_;
  ControllerOptions options_;
  LogFn log_;
  Memory memory_;
  StoreJournal journal_;
  LiveListener listener_;
  apply::Applier applier_;
  std::atomic<bool> paused_{false};
  std::map<std::string, int64_t> errors_by_source_;
  std::map<std::pair<std::string, std::string>, int64_t> decisions_;  // (kind, reason class) -> count
  std::map<std::string, int64_t> acted_;                                // action -> count
  std::set<std::string> last_plan_lines_;
  std::set<std::string> skipped_logged_;
  std::map<std::string, std::string> explained_;  // what each waiting job was last said to wait for, by key
  // (job key, submit) of the running jobs whose start is in the store.
  std::set<std::pair<std::string, int64_t>> starts_recorded_;
  int64_t loops_ = 0;
  // This loop's store calls: whether it wrote, and the first failure.
  bool store_written_ = false;
  Status store_error_;
  std::map<std::string, std::string> faults_;  // by source: one plain line each
  std::string last_pools_, last_nodes_;  // the last good loop's view, as JSON
  Timestamp last_ok_ = kInfinitePast;

  mutable std::mutex mu_;  // guards the published texts
  std::string metrics_text_;
  std::string status_json_;
  Timestamp published_ok_ = kInfinitePast;
  std::string last_error_;
  std::map<std::string, std::string> published_faults_;
  std::deque<std::string> recent_errors_;
};

// A reason's class for the decisions metric: digits and durations folded so
// that "3 pending jobs waited 30s" and "7 pending jobs waited 45s" count
// together, cut at the first ':' or '(' and at 60 characters.
std::string ReasonClass(std::string_view reason);

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_CONTROLLER_H_
