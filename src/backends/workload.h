// WorkloadManager: the seam between tide and a workload manager (Slurm,
// Kubernetes, the simulator's own). A backend observes the manager's jobs
// and nodes and hands them over in tide's own terms, and carries out the
// verbs tide's applier (apply/applier.h) asks for. Nothing outside a
// backend's folder sees the manager's words: Slurm's states, partitions and
// host lists stay in backends/slurm/, Kubernetes' objects in
// backends/kubernetes/. docs/design/backends.md says how to add one.
#ifndef TIDE_BACKENDS_WORKLOAD_H_
#define TIDE_BACKENDS_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/time.h"

namespace tide::backends {

// Where a job is in its life.
enum class JobPhase : uint8_t {
  kWaiting,   // not started, waiting for capacity: it is demand
  kHeld,      // not started, waiting for something capacity cannot give (held,
              // a dependency, a start time): not demand
  kStarting,  // given its nodes, not running yet
  kRunning,   // running (a suspended job counts as running: it holds its nodes)
  kStopping,  // ending, still holding its nodes
  kDone,      // ended; some managers list a job for a while after it ends
};
std::string_view JobPhaseName(JobPhase phase);  // "waiting", "held", ...
// Starting, running or stopping: the job occupies its nodes.
inline bool HoldsNodes(JobPhase p) {
  return p == JobPhase::kStarting || p == JobPhase::kRunning || p == JobPhase::kStopping;
}

// What a node can do now.
enum class NodeCondition : uint8_t {
  kBooting,   // expected, not answering yet (its agent has not registered)
  kReady,     // answers and takes work
  kCordoned,  // answers, takes no new work, runs nothing
  kDraining,  // answers, takes no new work, still runs work
  kGone,      // no machine answers for it (powered down, down, deleted)
};
std::string_view NodeConditionName(NodeCondition c);
// Answers: ready, cordoned or draining.
inline bool Answers(NodeCondition c) {
  return c == NodeCondition::kReady || c == NodeCondition::kCordoned || c == NodeCondition::kDraining;
}

// Why tide asks for a verb. Backends record it where the manager keeps such
// things (Slurm: the drain reason; Kubernetes: a taint, an annotation, an
// Event's reason), and an observed cordon reports it back.
enum class Cause : uint8_t {
  kNone,
  kScaleUp,           // a node bought for waiting work
  kForecast,          // a node bought ahead of forecast demand
  kNotBought,         // a node the manager knows that tide holds no machine for
  kRelease,           // an idle node given back
  kDrain,             // a node given back once its work is gone
  kPreemption,        // a job stopped for a higher-priority one
  kIdleReclaim,       // an idle job stopped
  kSpotInterruption,  // a job on a spot node the provider is taking back
  kConsolidation,     // a job moved so that its node can be given back
  kPlaced,            // a job placed by tide's scheduler
  kBackfilled,        // the same, ahead of its turn (backfill)
  kResize,            // an elastic job resized
  kOther,             // not tide's doing (a cordon by an administrator)
};
std::string_view CauseName(Cause c);  // "release", "preemption", ... (one word-ish, for logs and events)
// Tide cordoned the node to give it back (release or drain).
inline bool IsReleaseCordon(Cause c) { return c == Cause::kRelease || c == Cause::kDrain; }

struct Reason {
  Cause cause = Cause::kNone;
  std::string text;  // for people: the plan's reason
};

// A set of tide's pools, as bits of pool indices (config order; at most 64).
using PoolSet = uint64_t;
inline constexpr PoolSet kAnyPool = ~PoolSet{0};

// A node as the manager reports it.
struct ObservedNode {
  std::string name;
  int pool = -1;  // the tide pool it belongs to (index), -1: none of tide's
  NodeCondition condition = NodeCondition::kGone;
  // Who cordoned it and why, while it is cordoned or draining: one of tide's
  // causes, or kOther for anyone else's cordon (tide leaves those alone).
  Cause cordon = Cause::kNone;
  std::string cordon_text;  // the manager's own words for it
  int gpus = 0;             // GPU capacity; 0: not known (the pool's instance type)
  int gpus_used = 0;        // GPUs given to work now
  bool busy = false;        // the manager says work runs on it (even if gpus_used lags)
  std::string provider_id;  // the cloud's id of its machine, "" if the manager does not say

  bool Answering() const { return Answers(condition); }
  bool Cordoned() const { return condition == NodeCondition::kCordoned || condition == NodeCondition::kDraining; }
};

// A job as the manager reports it: a gang of `workers`, each needing
// `gpus_per_worker` GPUs (or one MIG slice of `slice`) on one node.
struct ObservedJob {
  std::string key;   // the manager's id: a Slurm job id, "namespace/group" on Kubernetes
  std::string name;  // for people
  JobPhase phase = JobPhase::kWaiting;
  std::string waits_for;  // kHeld: what it waits for, in the manager's words
  int workers = 1;        // gang size
  int gpus_per_worker = 0;
  std::string slice;       // a MIG profile ("1g.10gb") per worker; "" for whole GPUs
  int priority_class = -1;  // tide's class index, -1: decided by live.jobs.classes or the default
  // Job attributes the class rules (live.jobs.classes) match on, in the
  // manager's words ({"partition", "gpu"}, {"namespace", "ml"}); the
  // backend's capabilities list the names it reports.
  std::vector<std::pair<std::string, std::string>> attributes;
  std::optional<bool> preemptible;  // unset: the class decides
  bool is_protected = false;        // the manager's own marker says never interrupt it
  std::optional<bool> checkpoints;  // unset: the configured job default decides
  bool requeueable = true;          // it may be put back in the queue
  PoolSet pools = kAnyPool;         // the pools whose nodes it may use
  std::vector<std::string> nodes;   // where it runs, one entry per worker (a node twice: two workers there); empty while it waits
  // The names utilization metrics give its running parts, when they name
  // them rather than the job ("namespace/pod" on Kubernetes, from the DCGM
  // exporter's pod and namespace labels); empty: they name the job by key.
  std::vector<std::string> members;
  std::string team;                 // a user, account or namespace
  Timestamp submit{};
  Timestamp start{};      // when this run started (0: not started)
  Duration time_limit{};  // 0: none
  int restarts = 0;       // times it went back to the queue
  int gpus() const { return workers * gpus_per_worker; }
};

struct Observation {
  std::vector<ObservedNode> nodes;
  std::vector<ObservedJob> jobs;
};

// Where one placement puts a job's workers: `workers` of them on `node`.
struct NodeWorkers {
  std::string node;
  int workers = 0;
  bool operator==(const NodeWorkers&) const = default;
};

// A resize of an elastic job: the new world size, what to add and remove,
// and what the framework is told.
struct ResizeOrder {
  int workers = 0;
  std::vector<NodeWorkers> add, remove;
  int64_t global_batch = 0;
  double learning_rate = 0;
};

// What a backend can do. A verb it cannot do returns Unimplemented.
struct Capabilities {
  std::string name;              // "slurm", "kubernetes", "simulator": in logs and metrics
  bool schedules_itself = true;  // it places its jobs; tide never calls Bind
  bool bind = false;
  bool cordon = true;
  bool evict = false;       // Evict: stop with a grace, back to the queue
  bool checkpoint = false;  // Checkpoint: a signal tide sends ahead of a stop
  std::string checkpoint_signal;  // its name, for the log ("USR1")
  bool requeue = false;
  bool cancel = false;
  bool resize = false;
  // Explain: it shows people why a waiting job waits (Kubernetes: the pods'
  // PodScheduled condition).
  bool explain = false;
  // Node names come from a fixed list the manager was configured with (a
  // Slurm pool's CLOUD nodes): tide must buy under those names.
  bool fixed_node_names = false;
  // The attribute names its jobs carry (ObservedJob::attributes).
  std::vector<std::string> job_attributes;
};

// Status helpers for a refusal: the manager declined a verb because of a
// budget of its own (a PodDisruptionBudget). Not an error: it is logged,
// counted and tried again later, and never worked around.
Status Refused(std::string_view message);
bool IsRefused(const Status& s);

// Contract for every implementation (tests/contract/workload_contract.h
// checks it for each one):
// - Observe returns Unavailable when the manager does not answer and
//   InvalidArgument when its reply does not parse (naming the command or
//   object and what was wrong). The caller then acts on nothing.
// - A verb returns OK only once the manager accepted it; Unavailable when
//   the manager did not answer (retry later), InvalidArgument for a key or
//   name the manager cannot take, NotFound for a job or node it does not
//   have, Refused (above) for a refusal, Unimplemented for a verb its
//   capabilities lack.
// - Verbs may act on the last observation's view (which node names are
//   free); call Observe first.
// - Not thread-safe: the controller calls from one thread.
class WorkloadManager {
 public:
  virtual ~WorkloadManager() = default;
  virtual const Capabilities& capabilities() const = 0;
  virtual Result<Observation> Observe() = 0;

  // No new work lands on `node` until Uncordon; its running work goes on.
  virtual Status Cordon(const std::string& node, const Reason& why) = 0;
  virtual Status Uncordon(const std::string& node) = 0;
  // Stops the job's workers, giving them `grace` to save and exit, and puts
  // the job back in the queue. May be Refused.
  virtual Status Evict(const std::string& job, Duration grace, const Reason& why) = 0;
  // Tells the job to checkpoint now (a signal ahead of a stop).
  virtual Status Checkpoint(const std::string& job) = 0;
  // Puts a running job back in the queue now.
  virtual Status Requeue(const std::string& job) = 0;
  // Ends the job for good, giving its workers `grace` to save and exit.
  virtual Status Cancel(const std::string& job, Duration grace, const Reason& why) = 0;
  // Starts a waiting job on `where` (every worker, or none: a gang is bound
  // whole). For managers that do not schedule by themselves.
  virtual Status Bind(const std::string& job, const std::vector<NodeWorkers>& where, const Reason& why) = 0;
  // Resizes a running elastic job in place.
  virtual Status Resize(const std::string& job, const ResizeOrder& order, const Reason& why) = 0;
  // Shows why the waiting job waits, where people look (tide's decision in a
  // sentence). Only a manager whose capabilities say `explain` does.
  virtual Status Explain(const std::string& job, const std::string& why) {
    return absl::UnimplementedError(capabilities().name + ": cannot show why job " + job + " waits");
  }

  // The name a node tide is about to buy for `pool` will join as, never one
  // of `taken` (nodes tide already holds a machine for, or picked earlier in
  // the same plan). ResourceExhausted when a fixed list has no name left.
  virtual Result<std::string> RegisterNode(int pool, const std::vector<std::string>& taken) = 0;
  // The machine behind `node` is being given back: the manager forgets it
  // (or keeps its name, cordoned, for the next machine).
  virtual Status RemoveNode(const std::string& node) = 0;

  // A number that moves whenever what Observe would return may have changed
  // (a watch event), so that the loop can run on a change instead of waiting
  // out its interval; 0 when the manager cannot tell (it is polled).
  // Thread-safe; cheap enough to call every few milliseconds.
  virtual uint64_t ChangeGeneration() const { return 0; }
};

}  // namespace tide::backends

#endif  // TIDE_BACKENDS_WORKLOAD_H_
