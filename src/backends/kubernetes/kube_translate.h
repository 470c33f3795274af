// Kubernetes objects in tide's terms: the pure translation the Kubernetes
// backend's Observe is made of (docs/design/backends.md, "Worked example:
// Kubernetes"). Pods become gangs (ObservedJob), Node objects become
// ObservedNodes. It reads no clock, file or network, so a test feeds it
// recorded objects.
//
// - A gang is the pods of one scheduler-plugins PodGroup (pod label
//   scheduling.x-k8s.io/pod-group; its minMember the size), of one Volcano
//   PodGroup (pod annotation scheduling.k8s.io/group-name; its minMember),
//   or of one Kueue plain-pod group (label kueue.x-k8s.io/pod-group-name,
//   annotation kueue.x-k8s.io/pod-group-total-count), or one pod alone. Its
//   key is "namespace/group" ("namespace/pod" for a pod alone).
// - Only pods that name tide's scheduler are jobs (in autoscale-only mode:
//   the pods asking for GPUs, whatever their scheduler); every bound pod
//   counts towards its node's GPUs in use and keeps it busy (DaemonSet and
//   mirror pods aside, as cluster-autoscaler counts them).
// - A gang tide cannot run as asked (pods asking for different GPUs, more
//   than one MIG slice per pod) is held, with the reason in waits_for, not an
//   error: one bad job does not blind tide to the rest.
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_TRANSLATE_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_TRANSLATE_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "backends/kubernetes/kube_objects.h"
#include "backends/workload.h"

namespace tide::backends::kube {

// Well-known names tide reads.
inline constexpr std::string_view kPodGroupLabel = "scheduling.x-k8s.io/pod-group";
inline constexpr std::string_view kVolcanoGroupAnnotation = "scheduling.k8s.io/group-name";
inline constexpr std::string_view kKueueGroupLabel = "kueue.x-k8s.io/pod-group-name";
inline constexpr std::string_view kKueueCountAnnotation = "kueue.x-k8s.io/pod-group-total-count";
inline constexpr std::string_view kKueueQueueLabel = "kueue.x-k8s.io/queue-name";
inline constexpr std::string_view kSafeToEvict = "cluster-autoscaler.kubernetes.io/safe-to-evict";
inline constexpr std::string_view kDoNotDisrupt = "karpenter.sh/do-not-disrupt";
inline constexpr std::string_view kCapacityTypeLabel = "karpenter.sh/capacity-type";
inline constexpr std::string_view kMirrorAnnotation = "kubernetes.io/config.mirror";

// tide's own labels, annotations and taints, under live.kubernetes.label_prefix.
struct TideNames {
  explicit TideNames(std::string_view prefix);
  std::string pool;          // node label: the tide pool
  std::string cordon;        // node annotation: why tide cordoned it (a Cause name)
  std::string interruption;  // node taint: tide's own spot notice (the kwok provider's)
  std::string protect;       // pod annotation "true": never interrupt
  std::string preemptible;   // pod annotation "true"/"false"
  std::string checkpoints;   // pod annotation "true"/"false": it saves its work on SIGTERM
};

// What a pool's new nodes will look like, to match pods' node selectors,
// required node affinity and tolerations against.
struct PoolShape {
  std::string name;
  std::map<std::string, std::string> labels;  // at least the pool label and the capacity type
  std::vector<Taint> taints;
};

struct TranslateOptions {
  std::string scheduler_name = "tide";
  std::string label_prefix = "tide.dev";
  std::vector<PoolShape> pools;  // tide's pools, in configuration order (index = pool)
  std::vector<std::string> namespaces;  // whose pods are jobs; empty: every namespace
  std::vector<std::string> notice_taints;  // besides tide's own
  // tide's priority classes' values, in configuration order: a pod's
  // spec.priority picks the class with the greatest value not above it
  // (none: the configured default class).
  std::vector<int> class_values;
  // Autoscale-only mode (live.kubernetes.mode: autoscale): another scheduler
  // places every pod. Jobs are then the GPU pods of any scheduler, and a
  // gang waits (is demand) only when every unbound pod of it is marked
  // PodScheduled=False, reason Unschedulable, by its scheduler; its workers
  // are those pods (its bound pods keep their nodes busy), so tide buys for
  // all of them or none.
  bool autoscale_only = false;
};

// The objects one observation is made from (the watch caches' contents).
struct ClusterObjects {
  std::vector<Pod> pods;
  std::vector<Node> nodes;
  std::vector<PodGroup> pod_groups;
  std::vector<VolcanoPodGroup> volcano_groups;
};

// The shape a tide pool's nodes get: the pool label and the capacity type
// (reserved, on-demand or spot).
PoolShape ShapeOfPool(const TideNames& names, std::string_view pool, std::string_view capacity_type);

Observation Translate(const ClusterObjects& objects, const TranslateOptions& options);

// The gang key of a pod ("namespace/group"), and its size when the pod says
// (0: from the PodGroup object, or unknown).
struct GangOf {
  std::string key;
  std::string group;  // the PodGroup or Kueue group name; empty for a pod alone
  int size = 1;
  bool from_pod_group = false;  // size from a scheduler-plugins PodGroup
  bool from_volcano = false;    // size from a Volcano PodGroup
};
GangOf GangOfPod(const Pod& pod);

// A pod that still counts: not ended, and not an unbound pod being deleted.
bool LivePod(const Pod& pod);

// Whether `pod` is one of tide's jobs' pods under `options` (its scheduler,
// or in autoscale-only mode a GPU pod of any scheduler; in its namespaces).
bool JobPod(const Pod& pod, const TranslateOptions& options);

// Whether the pod's scheduler has marked it PodScheduled=False, reason
// Unschedulable: it found no node with room.
bool MarkedUnschedulable(const Pod& pod);

// Whether a pod may run on a node of `pool`: its node selector and required
// node affinity match the pool's labels, and it tolerates the pool's taints.
bool PodFitsPool(const Pod& pod, const PoolShape& pool);

// Nodes that carry a spot-interruption notice taint, by name.
std::vector<std::string> NoticedNodes(const std::vector<Node>& nodes, const TranslateOptions& options);

}  // namespace tide::backends::kube

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_TRANSLATE_H_
