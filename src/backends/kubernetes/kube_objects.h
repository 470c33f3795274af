// Typed reading of the Kubernetes objects tide needs, into plain structs
// holding only what tide uses. Missing optional fields get the defaults
// below; a field of the wrong type is InvalidArgument naming the object and
// the field ("pod default/p1: spec.priority: expected an integer, got
// string"). GPU quantities must be whole numbers ("0.5", "500m" are errors).
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_OBJECTS_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_OBJECTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/time.h"
#include "nlohmann/json_fwd.hpp"

namespace tide::backends::kube {

inline constexpr std::string_view kGpuResource = "nvidia.com/gpu";
inline constexpr std::string_view kMigResourcePrefix = "nvidia.com/mig-";

struct OwnerReference {
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
};

struct ObjectMeta {
  std::string namespace_name;  // empty for cluster-scoped objects
  std::string name;
  std::string uid;
  std::string resource_version;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<OwnerReference> owners;
  Timestamp created = kInfinitePast;
  std::optional<Timestamp> deleted;  // deletionTimestamp: the object is going away
};

// "namespace/name", or "name" for a cluster-scoped object: the watch
// caches' key.
std::string Key(const ObjectMeta& meta);

// GPUs of a pod's requests or a node's capacity: whole GPUs, and MIG slices
// by profile ("1g.5gb" for nvidia.com/mig-1g.5gb).
struct GpuResources {
  int64_t gpus = 0;
  std::map<std::string, int64_t> mig;
  bool operator==(const GpuResources&) const = default;
};

struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
};

struct Toleration {
  std::string key;
  std::string op = "Equal";  // Equal or Exists
  std::string value;
  std::string effect;  // empty: every effect
  std::optional<int64_t> toleration_seconds;
};

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
};

// One requirement of a node selector term.
struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
  bool on_field = false;  // from matchFields (metadata.name) rather than matchExpressions
};
// A node must satisfy every requirement of at least one term.
using NodeSelectorTerm = std::vector<NodeSelectorRequirement>;

struct Pod {
  ObjectMeta meta;
  std::string scheduler_name = "default-scheduler";
  std::string node_name;  // empty: not bound
  std::string phase = "Pending";  // Pending, Running, Succeeded, Failed, Unknown
  int32_t priority = 0;
  std::string priority_class_name;
  // Requests, summed over containers (and the largest init container's,
  // when larger, as the scheduler counts them). Limits stand in for
  // missing requests, as the API server defaults them.
  GpuResources requests;
  std::vector<Condition> conditions;
  std::optional<Timestamp> started;  // status.startTime
  std::vector<Toleration> tolerations;
  std::map<std::string, std::string> node_selector;
  std::vector<NodeSelectorTerm> required_affinity;  // requiredDuringSchedulingIgnoredDuringExecution
  std::vector<std::string> scheduling_gates;

  // The condition of this type, or nullptr.
  const Condition* FindCondition(std::string_view type) const;
  // The controlling owner (a Job, a ReplicaSet), or nullptr.
  const OwnerReference* Controller() const;
};

struct Node {
  ObjectMeta meta;
  std::string provider_id;
  bool unschedulable = false;
  std::vector<Taint> taints;
  // The Ready condition; status "Unknown" when the node reports none.
  Condition ready{"Ready", "Unknown", "", ""};
  GpuResources capacity;
  GpuResources allocatable;

  bool IsReady() const { return ready.status == "True"; }
};

struct PodDisruptionBudget {
  ObjectMeta meta;
  std::map<std::string, std::string> match_labels;  // spec.selector.matchLabels
  bool has_match_expressions = false;  // tide reads only matchLabels; say when there is more
  int32_t disruptions_allowed = 0;
  int32_t current_healthy = 0;
  int32_t desired_healthy = 0;
};

struct PriorityClass {
  ObjectMeta meta;
  int32_t value = 0;
  std::string preemption_policy = "PreemptLowerPriority";  // or Never
  bool global_default = false;
};

// scheduler-plugins' PodGroup (scheduling.x-k8s.io/v1alpha1).
struct PodGroup {
  ObjectMeta meta;
  int32_t min_member = 0;
};

// A Volcano PodGroup (scheduling.volcano.sh/v1beta1): the same two fields,
// its own resource. Its pods name it in the annotation
// scheduling.k8s.io/group-name.
struct VolcanoPodGroup : PodGroup {};

// Parse from an already parsed JSON object (as in a list or a watch event).
Result<Pod> ParsePod(const nlohmann::json& object);
Result<Node> ParseNode(const nlohmann::json& object);
Result<PodDisruptionBudget> ParsePodDisruptionBudget(const nlohmann::json& object);
Result<PriorityClass> ParsePriorityClass(const nlohmann::json& object);
Result<PodGroup> ParsePodGroup(const nlohmann::json& object);

// Parse from text (one object, as GET returns it). InvalidArgument when it
// is not JSON.
Result<Pod> ParsePodText(std::string_view text);
Result<Node> ParseNodeText(std::string_view text);

// A Kubernetes quantity that must be a whole count (GPUs, MIG slices):
// "8", 8, "2k" (decimal suffixes k, M, G). InvalidArgument, naming `what`,
// for fractions ("0.5", "500m"), negatives and anything else.
Result<int64_t> ParseCount(const nlohmann::json& quantity, std::string_view what);

}  // namespace tide::backends::kube

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_OBJECTS_H_
