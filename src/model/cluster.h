// Value types that describe a GPU cluster: what can be bought (pools of an
// instance type at a tier, region and price) and what exists now (nodes and
// jobs). ClusterState is the snapshot every decision is a pure function of.
#ifndef TIDE_MODEL_CLUSTER_H_
#define TIDE_MODEL_CLUSTER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/time.h"

namespace tide::model {

// How capacity is paid for. Reserved is paid for whether used or not; spot is
// cheapest but can be reclaimed.
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
};

// A named priority. Higher `value` is scheduled first. `preemptible` and
// `protect` are the defaults for jobs of the class; a trace may override them.
struct PriorityClass {
  std::string name;
  int value = 0;
  bool preemptible = false;
  bool protect = false;
};

// Everything about the cluster that does not change while it runs.
struct ClusterSpec {
  std::string currency = "CNY";
  std::vector<NodePool> pools;
  std::vector<PriorityClass> priority_classes;
  int default_priority_class = 0;

  // Index of a pool or priority class by name, or -1.
  int PoolIndex(std::string_view name) const;
  int PriorityClassIndex(std::string_view name) const;
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

  bool idle() const { return free_gpus == gpus; }
};

// One job as submitted: a gang of `workers`, each needing `gpus_per_worker`
// GPUs on one node. The gang starts whole or not at all.
struct JobSpec {
  std::string name;  // the trace's id
  Timestamp submit{};
  int gpus_per_worker = 1;
  int workers = 1;
  Duration runtime{};  // at full allocation
  int priority_class = 0;
  bool preemptible = false;
  bool is_protected = false;  // never interrupted (e.g. a final evaluation)
  std::string team;

  int gpus() const { return gpus_per_worker * workers; }
};

enum class JobState : uint8_t { kPending, kStarting, kRunning, kCompleted };
std::string_view JobStateName(JobState state);

// `workers` workers of a job on one node.
struct NodeShare {
  NodeId node = 0;
  int workers = 0;
  bool operator==(const NodeShare&) const = default;
};

struct Job {
  JobId id = 0;
  JobSpec spec;
  int priority = 0;  // the value of spec.priority_class, copied for ordering
  JobState state = JobState::kPending;
  Timestamp started{};       // kStarting/kRunning: when it was allocated
  Timestamp expected_end{};  // kRunning: when it should finish (for backfill)
  std::vector<NodeShare> alloc;
};

// The snapshot a decision is made on. Nodes are the ones not yet terminated;
// jobs are those pending, starting or running. Order carries no meaning.
struct ClusterState {
  const ClusterSpec* spec = nullptr;
  std::vector<Node> nodes;
  std::vector<Job> jobs;
};

}  // namespace tide::model

#endif  // TIDE_MODEL_CLUSTER_H_
