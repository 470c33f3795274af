// Value types that describe a GPU cluster: what can be bought (pools of an
// instance type at a tier, region and price) and what exists now (nodes and
// jobs). ClusterState is the snapshot every decision is a pure function of.
#ifndef TIDE_MODEL_CLUSTER_H_
#define TIDE_MODEL_CLUSTER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"

#include "core/status.h"
#include "core/time.h"

namespace tide::model {

// How capacity is paid for. Reserved is paid for whether used or not; spot is
// cheapest but can be interrupted.
enum class Tier : uint8_t { kReserved = 0, kOnDemand = 1, kSpot = 2 };
inline constexpr int kNumTiers = 3;
std::string_view TierName(Tier tier);  // "reserved", "on-demand", "spot"
Result<Tier> ParseTier(std::string_view text);

struct InstanceType {
  std::string name;
  int gpus = 8;  // GPUs per node
  std::string gpu_model = "A100-80GB";
  int cpus = 96;
  int memory_gib = 1152;
};

// How long a bought node takes from the create call to joining the cluster.
// The mission's default: uniform between 2 and 5 minutes.
struct BootDelay {
  enum class Kind : uint8_t { kFixed, kUniform, kLogNormal };
  Kind kind = Kind::kUniform;
  Duration min = Minutes(2);  // kFixed uses min; kLogNormal clamps to [min, max]
  Duration max = Minutes(5);
  Duration median = Minutes(3);  // kLogNormal only
  double sigma = 0.3;            // kLogNormal only
  // The mean delay, for planning.
  Duration Expected() const;
  std::string Describe() const;
};

// GPU slicing (NVIDIA MIG) on a pool's GPUs: each GPU has
// `units_per_gpu` compute units (7 on A100 and H100) that slice profiles
// take whole numbers of (1g.10gb = 1, 2g.20gb = 2, 3g.40gb = 3, 7g.80gb = 7).
// Changing a GPU between whole use and slices takes `reconfigure`.
struct MigConfig {
  std::vector<std::string> profiles;  // empty: the pool does not slice
  int units_per_gpu = 7;
  Duration reconfigure = Minutes(2);
  bool enabled() const { return !profiles.empty(); }
  // True when the pool offers a profile of `units` compute units.
  bool Offers(int units) const;
};

// The compute units of a MIG profile name ("3g.40gb" -> 3), or 0 if it is
// not one.
int SliceUnits(std::string_view profile);

struct NodePool {
  std::string name;
  InstanceType type;
  Tier tier = Tier::kOnDemand;
  std::string region = "default";
  double price_per_hour = 0;  // per node, in ClusterSpec::currency
  int min_nodes = 0;
  int max_nodes = 50;
  BootDelay boot_delay;
  int priority = 0;  // the priority expander prefers pools with a higher value
  MigConfig mig;
  // Only jobs of at least this priority value run here (MISSION 8.2: a pool
  // for training that low-priority jobs cannot take). INT_MIN: any job.
  int min_priority = INT32_MIN;
};

// A named priority. Higher `value` is scheduled first. `preemptible` and
// `protect` are the defaults for jobs of the class; a trace may override them.
struct PriorityClass {
  std::string name;
  int value = 0;
  bool preemptible = false;
  bool protect = false;
};

struct JobSpec;

// A region and what moving data across its border costs (MISSION 9).
struct Region {
  std::string name;
  double egress_per_gb = 0;  // per GB leaving it, in ClusterSpec::currency
};

// Everything about the cluster that does not change while it runs.
struct ClusterSpec {
  std::string currency = "CNY";
  std::vector<NodePool> pools;
  std::vector<Region> regions;  // may be empty: no egress charges
  std::vector<PriorityClass> priority_classes;
  int default_priority_class = 0;

  // Index of a pool or priority class by name, or -1.
  int PoolIndex(std::string_view name) const;
  int PriorityClassIndex(std::string_view name) const;
  int RegionIndex(std::string_view name) const;
  // What a run of `job` on `pool` costs in data transfer: its input read
  // from its home region and its output sent back, priced by the region
  // the data leaves. 0 when the pool is in the job's home region.
  double EgressCost(const JobSpec& job, int pool) const;
  // The largest GPUs-per-node of any pool (0 if there are none).
  int MaxGpusPerNode() const;
};

using NodeId = int64_t;
using JobId = int64_t;

// Provisioning -> Ready -> Draining -> Terminated. A node is billed from the
// moment it is requested (provisioning) until it is terminated.
enum class NodeState : uint8_t { kProvisioning, kReady, kDraining, kTerminated };
std::string_view NodeStateName(NodeState state);

struct Node {
  NodeId id = 0;
  std::string name;
  int pool = 0;  // index into ClusterSpec::pools
  NodeState state = NodeState::kProvisioning;
  Timestamp created{};
  Timestamp ready_at{};  // when it joined, or (provisioning) when it is expected to
  Timestamp idle_since = kInfiniteFuture;  // set while it is ready and runs nothing
  int gpus = 0;
  int free_gpus = 0;
  // The provider has given notice: it interrupts this (spot) node at this time.
  Timestamp interrupt_at = kInfiniteFuture;
  // MIG pools only: free compute units and layout (1 = sliced) of each GPU.
  // A GPU counts in free_gpus only while all its units are free.
  std::vector<uint8_t> slice_free;
  std::vector<uint8_t> sliced;

  bool idle() const { return free_gpus == gpus; }
};

// How a job uses its GPUs over its life (MISSION section 1): data loading
// and model initialisation after every (re)start, then training, then
// evaluation. Utilization levels are fractions in [0, 1].
struct JobPhases {
  Duration load = Minutes(5);  // after each start or restart
  double load_util = 0.05;
  double train_util = 0.85;
  double eval_share = 0.05;  // the last share of the work
  double eval_util = 0.3;
  double checkpoint_util = 0.05;
};

// Periodic checkpoints: every `interval` of working time the job pauses for
// `cost` to save its state. Interval 0: it never checkpoints.
struct CheckpointPolicy {
  Duration interval = Minutes(30);
  Duration cost = Seconds(60);
};

// One job as submitted: a gang of `workers`, each needing `gpus_per_worker`
// GPUs on one node. The gang starts whole or not at all.
struct JobSpec {
  // The fields every pass reads (size, class, elasticity) come first, on the
  // record's first cache lines; the names and lists after them.
  Timestamp submit{};
  int gpus_per_worker = 1;
  int workers = 1;
  Duration runtime{};  // at full allocation (`workers` workers), without checkpoints
  int priority_class = 0;
  bool preemptible = false;
  bool is_protected = false;  // never interrupted (e.g. a final evaluation)
  // Asynchronous work (hyper-parameter search, federated learning) may be
  // resized on utilization; synchronous gangs only through the queue.
  bool async = false;
  // Elastic jobs may run with min_workers..max_workers (0: fixed at `workers`).
  int min_workers = 0;
  int max_workers = 0;
  // Beyond this many workers the job's input pipeline cannot keep up: more
  // workers add no throughput and each GPU waits (0: no such limit).
  int io_bound_workers = 0;
  // A job that asks for a GPU slice per worker: its MIG profile (`slice`,
  // below) and compute units (gpus_per_worker is then 1). 0: whole GPUs.
  int slice_units = 0;
  // The pools the job may use, as bits of pool indices (a Slurm job: the
  // pools with a node in its partition); all ones: any pool.
  uint64_t pools = ~uint64_t{0};
  // GPU models the job may run on (InstanceType::gpu_model); empty: any.
  // The Alibaba openb trace's gpu_spec column.
  std::vector<std::string> gpu_models;
  JobPhases phases;
  CheckpointPolicy checkpoint;
  // Where the job's data lives (a region name; empty: anywhere, no egress),
  // what it reads per run and what it sends back (checkpoints, parameters).
  double data_gb = 0;
  double output_gb = 0;
  std::string data_region;
  std::string name;  // the trace's id
  std::string team;
  std::string slice;  // the MIG profile of a slice job ("1g.10gb"); empty: whole GPUs

  int gpus() const { return gpus_per_worker * workers; }
  // GPUs' worth of demand: a slice counts its share of a GPU.
  double GpuEquivalents(int units_per_gpu = 7) const {
    return slice_units > 0 ? static_cast<double>(slice_units) * workers / units_per_gpu : gpus();
  }
  bool elastic() const { return max_workers > min_workers && min_workers > 0; }
  // It names GPU models or is limited to some pools: its eligible pools are
  // worked out for it alone rather than by its shape.
  bool restricted() const { return !gpu_models.empty() || pools != ~uint64_t{0}; }
  bool MayUsePool(int pool) const { return pool >= 0 && pool < 64 && (pools >> pool & 1) != 0; }
  int MinWorkers() const { return elastic() ? min_workers : workers; }
  int MaxWorkers() const { return elastic() ? max_workers : workers; }
};

// kStopping: told to checkpoint and exit (preempted, reclaimed or on a spot
// node under notice); it still holds its GPUs until it exits.
enum class JobState : uint8_t { kPending, kStarting, kRunning, kStopping, kCompleted };
std::string_view JobStateName(JobState state);

// `workers` workers of a job on one node.
struct NodeShare {
  NodeId node = 0;
  int workers = 0;
  // Slice jobs: one share per worker, on GPU `gpu` of the node, `units` units
  // (a node has at most 64 GPUs, a GPU a few units: 24 bytes in all).
  int16_t gpu = -1;
  int16_t units = 0;
  // Whole GPUs on a MIG node: which ones (bit g = GPU g). Set by the driver.
  uint64_t gpu_mask = 0;
  bool operator==(const NodeShare&) const = default;
};

struct alignas(64) Job {
  // What the decision passes read of a job they look at comes first, on the
  // record's first cache line, and the spec's sizes and class on the second
  // (a record starts on a line of its own); the names and lists follow.
  JobId id = 0;
  int priority = 0;  // the value of spec.priority_class, copied for ordering
  JobState state = JobState::kPending;
  // Two flags in one byte, and the restart count in the two after it, fill
  // the line's padding: a record stays six cache lines (a seventh, for all
  // the jobs, cost about 3% of a simulation's time in misses).
  bool bottleneck : 1 = false;  // utilization stayed low after a scale-up: not grown again
  bool reclaimed : 1 = false;   // idle reclaim stopped it before: the next time cancels it
  // Times it was interrupted and requeued; stops at 65,535 (Slurm's own
  // restart_cnt is 16 bits too). Add with AddRestart.
  uint16_t restarts = 0;
  Timestamp started{};       // kStarting/kRunning: when this run was allocated
  Timestamp expected_end{};  // kRunning: when it should finish (for backfill)
  // Most jobs run on one node: its share is kept in the record itself, on
  // the first two lines, without a heap block to follow.
  absl::InlinedVector<NodeShare, 1> alloc;
  int workers = 0;  // workers of the current run (elastic jobs change it)
  int workers_before_resize = 0;  // the size before the last resize
  Timestamp last_resize = kInfinitePast;
  JobSpec spec;

  // Progress in seconds of work at full allocation, and the part of it saved
  // by the last completed checkpoint (what a restart resumes from).
  double progress = 0;
  double saved = 0;

  void AddRestart() { restarts = restarts == UINT16_MAX ? restarts : static_cast<uint16_t>(restarts + 1); }
  int Workers() const { return workers > 0 ? workers : spec.workers; }
  // Fewer workers than it may have: an elastic job that could grow.
  bool BelowMaxWorkers() const { return Workers() < spec.MaxWorkers(); }
  double UnsavedWork() const { return progress - saved; }
};
static_assert(sizeof(Job) <= 384, "a job's record grew past six cache lines: see the note on its flags");

// GPU utilization of running jobs, as the driver measured it (Prometheus
// live, the job model in simulation). Missing data is never read as idle:
// every query answers "unknown" (nullopt) rather than 0.
class MetricsView {
 public:
  virtual ~MetricsView() = default;
  // Utilization of the job's GPUs at `t`, in [0, 1].
  virtual std::optional<double> UtilAt(JobId job, Timestamp t) const = 0;
  // The start of the interval ending at `t` throughout which the job's
  // utilization stayed below `threshold` (or, for AboveSince, above it);
  // nullopt if at `t` it is not, or data is missing.
  virtual std::optional<Timestamp> BelowSince(JobId job, double threshold, Timestamp t) const = 0;
  virtual std::optional<Timestamp> AboveSince(JobId job, double threshold, Timestamp t) const = 0;
  // The next time after `t` at which the job's utilization may change
  // (kInfiniteFuture if not known). Lets a loop sleep until then.
  virtual Timestamp NextUtilChange(JobId job, Timestamp t) const = 0;
  // The earliest time u >= t at which the job's utilization will have been
  // below `threshold` (AboveFor: above) throughout [u - span, u]: `t` itself
  // if that holds already. kInfiniteFuture if it is known never to happen
  // in the current run; a driver that cannot see ahead answers with the
  // next time it will know more.
  virtual Timestamp NextBelowFor(JobId job, double threshold, Duration span, Timestamp t) const = 0;
  virtual Timestamp NextAboveFor(JobId job, double threshold, Duration span, Timestamp t) const = 0;
  // Calls visit(job, due) for every job the view has a run of, in increasing
  // order of `due` = NextBelowFor(job, threshold, span, t) (NextAboveFor if
  // not `below`), until visit returns false or only jobs that are never due
  // are left. A view that keeps these answers in order (the simulator's)
  // spares a pass asking every running job; one that does not returns false
  // at once, and the caller asks each job.
  virtual bool VisitByDue(bool below, double threshold, Duration span, Timestamp t,
                          const std::function<bool(JobId, Timestamp)>& visit) const {
    return false;
  }
};

// How far running jobs have got, for a driver that works it out when asked
// (the simulator, from its job model) rather than keeping Job::progress and
// Job::saved current in every snapshot.
class ProgressView {
 public:
  virtual ~ProgressView() = default;
  // The job's progress and the part of it its last completed checkpoint
  // saved, at `t` (seconds of work at full allocation). `job` is in the
  // snapshot the view belongs to.
  virtual void ProgressAt(const Job& job, Timestamp t, double* progress, double* saved) const = 0;
};

// What the driver knows of each pool beyond its nodes.
struct PoolStatus {
  // The provider has refused to create nodes since this time (a spot
  // stock-out); kInfiniteFuture while it creates them. `last_failure` is the
  // latest refusal.
  Timestamp unavailable_since = kInfiniteFuture;
  Timestamp last_failure = kInfinitePast;
};

class StateIndex;  // model/state_index.h

// The snapshot a decision is made on. Nodes are the ones not yet terminated;
// jobs are those pending, starting, running or stopping. Order carries no
// meaning. The pointers are optional and owned by the driver.
struct ClusterState {
  const ClusterSpec* spec = nullptr;
  std::vector<Node> nodes;
  std::vector<Job> jobs;
  std::vector<PoolStatus> pools;                 // by pool index; may be empty
  std::vector<Timestamp> recent_disruptions;     // one entry per node disrupted
  // Submissions of the recent past (for forecasting), oldest first.
  struct Arrival {
    Timestamp at;
    int gpus;
    // The GPUs of every arrival before this one that the driver logged, or
    // -1 if it does not count them (then no entry has it): the GPUs of a
    // run of entries are then two reads, not a walk (SetArrivalsBefore below).
    int64_t before = -1;
  };
  std::vector<Arrival> arrivals;
  const MetricsView* metrics = nullptr;
  // Where Job::progress and Job::saved of running jobs are read instead of
  // the fields (nullptr: the fields are current).
  const ProgressView* progress = nullptr;
  // A driver's index of this state (model/state_index.h), read only while it
  // is synced with it; nullptr: the decision core scans.
  const StateIndex* index = nullptr;
};

// A job's progress, and the work it would lose if stopped now (progress since
// its last checkpoint), at `t`: through state.progress when the driver has one.
double ProgressOf(const ClusterState& state, const Job& job, Timestamp t);
double UnsavedWorkOf(const ClusterState& state, const Job& job, Timestamp t);

// Sets `before` of every arrival (oldest first) to the GPUs of those before it.
inline void SetArrivalsBefore(std::vector<ClusterState::Arrival>* arrivals) {
  int64_t before = 0;
  for (auto& a : *arrivals) {
    a.before = before;
    before += a.gpus;
  }
}

}  // namespace tide::model

#endif  // TIDE_MODEL_CLUSTER_H_
