// Placement-only mode: pods arrive one after another and never leave; each
// is put on a node by a packing policy or fails. No time, queueing or
// autoscaling: the question is only how much of the cluster's GPU capacity a
// policy can hand out before fragmentation stops it (docs/design/placement.md).
//
// Everything here is pure: the caller builds the cluster and the arrival
// sequence (from the openb lists, say) and gets the per-arrival figures back.
#ifndef TIDE_PLACE_PACKER_H_
#define TIDE_PLACE_PACKER_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/status.h"

namespace tide::place {

inline constexpr int kMilliPerGpu = 1000;
inline constexpr int kMaxGpusPerNode = 16;
inline constexpr int kMaxModels = 32;

// A bit per GPU model (index into Cluster::models); 0 in a request: any model.
using ModelMask = uint32_t;

struct NodeSpec {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpus = 0;  // 1..kMaxGpusPerNode
  int model = 0;  // index into Cluster::models
};

struct Cluster {
  std::vector<std::string> models;
  std::vector<NodeSpec> nodes;
  int64_t TotalGpus() const;
};

// What one pod asks for. A fractional pod (num_gpu 1, gpu_milli < 1000)
// takes milli from one GPU; a pod of k whole GPUs takes k fully free GPUs of
// one node. num_gpu 0: CPU-only (the placement mode leaves these out).
struct PodRequest {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int gpu_milli = 0;  // per GPU; 1000 for whole GPUs
  ModelMask models = 0;
  int64_t TotalMilli() const { return int64_t{num_gpu} * gpu_milli; }
  bool operator==(const PodRequest&) const = default;
};
struct PodHash {
  size_t operator()(const PodRequest& p) const;
};

// The mask of the named models in `cluster` (0 for an empty list, meaning
// any). A list naming only models the cluster lacks gives a mask no node
// matches (kNoModel).
inline constexpr ModelMask kNoModel = ModelMask{1} << (kMaxModels - 1);
ModelMask MaskOf(const Cluster& cluster, const std::vector<std::string>& models);

// The workload's pod types and how often each occurs: what FGD measures
// fragmentation against (a node's free GPU is a fragment for a pod type that
// cannot use it).
struct Workload {
  struct Type {
    PodRequest pod;
    double weight = 0;  // popularity, summing to 1
  };
  std::vector<Type> types;
};
// The distinct GPU pods of `pods` weighted by count (CPU-only pods left out).
Workload WorkloadOf(const std::vector<PodRequest>& pods);

enum class Policy : uint8_t { kFirstFit, kBestFit, kWorstFit, kFgd };
std::string_view PolicyName(Policy policy);  // "first-fit", "best-fit", "worst-fit", "fgd"
Result<Policy> ParsePolicy(std::string_view name);
std::vector<Policy> AllPolicies();

// The free resources of one node.
struct NodeFree {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpus = 0;
  int model = 0;
  std::array<int16_t, kMaxGpusPerNode> gpu_milli{};  // free milli of each GPU
  int64_t FreeMilli() const;
  bool operator==(const NodeFree&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const NodeFree& n) {
    return H::combine(std::move(h), n.cpu_milli, n.memory_mib, n.gpus, n.model, n.gpu_milli);
  }
};

// FGD's fragmentation of a node for one pod type: the free GPU milli the pod
// cannot use. All of it when the pod cannot go on the node at all (model,
// CPU, memory, or fewer usable GPUs than it needs); otherwise, for a
// fractional pod, the free milli of GPUs with less free than it asks; for a
// whole-GPU pod, the free milli of partly used GPUs.
int64_t NodeFragment(const NodeFree& node, const PodRequest& pod);

// Where a pod went: node index and, per GPU of the node, the milli taken.
struct Placement {
  int node = -1;
  std::array<int16_t, kMaxGpusPerNode> taken{};
};

// The figures after one arrival. Ratios are over the whole cluster:
//   gpu_alloc    GPUs with any milli allocated / all GPUs
//   milli_alloc  allocated GPU milli / all GPU milli
//   frag         sum over nodes of the expected fragment (NodeFragment
//                weighted by the workload) / all GPU milli
//   arrived      requested GPU milli of the GPU pods so far (placed or not)
//                / all GPU milli
struct Step {
  int64_t arrival = 0;  // 1-based index among the GPU pods
  double arrived = 0;
  double gpu_alloc = 0;
  double milli_alloc = 0;
  double frag = 0;
  int64_t failed = 0;  // GPU pods that found no node, so far
  bool placed = false;
};

// Places pods one at a time under one policy. Not thread-safe; one per run.
class Packer {
 public:
  // `workload` is what FGD (and the frag figure) measures against.
  // InvalidArgument if a node has 0 or more than kMaxGpusPerNode GPUs or
  // names a model outside `cluster.models`.
  static Result<Packer> Create(const Cluster& cluster, Workload workload, Policy policy);

  // Places `pod` (a GPU pod: num_gpu >= 1) and returns the figures after it.
  Step Add(const PodRequest& pod);
  // Where the last Add put its pod (node -1 if it failed).
  const Placement& last() const { return last_; }
  const NodeFree& node(int i) const { return free_[i]; }
  int64_t allocated_milli() const { return allocated_milli_; }

 private:
  Packer(Workload workload, Policy policy);
  struct Choice {
    double delta = 0;  // fgd: the change in the node's expected fragment
    int level = 0;     // fractional pods: the free milli of the GPU to take from
  };
  bool Fits(const NodeFree& n, const PodRequest& pod) const;
  // The policy's choice of GPU on node `i`, which must fit the pod; `type`
  // is the pod's index in the workload (-1 if it is not one of its types).
  Choice ChooseOnNode(int i, const PodRequest& pod, int type) const;
  Choice FgdChoice(int i, const PodRequest& pod) const;
  void Take(int i, const PodRequest& pod, const Choice& c);
  // The workload-weighted fragment of a node state. Memoised on the state
  // reduced to what the fragment depends on: GPUs in canonical order, and
  // CPU and memory rounded down to the nearest demand of a workload type
  // (the fragment only compares them with those demands).
  double ExpectedFragment(const NodeFree& n) const;
  Step Figures(bool placed) const;

  Workload workload_;
  Policy policy_;
  absl::flat_hash_map<PodRequest, int, PodHash> type_of_;
  std::vector<int64_t> cpu_demands_, memory_demands_;  // the types' distinct demands, ascending
  std::vector<NodeFree> free_;
  std::vector<double> frag_;      // ExpectedFragment of each node now
  std::vector<uint32_t> version_;  // bumped when a node changes
  // fgd: the choice for (type, node), valid while the node's version matches.
  struct Cached {
    uint32_t version = 0;  // 0: none
    Choice choice;
  };
  mutable std::vector<std::vector<Cached>> choice_cache_;
  mutable absl::flat_hash_map<NodeFree, double> frag_memo_;
  int64_t total_gpus_ = 0;
  int64_t total_milli_ = 0;
  int64_t allocated_milli_ = 0;
  int64_t used_gpus_ = 0;  // GPUs with any milli allocated
  double frag_sum_ = 0;
  int64_t arrivals_ = 0;
  int64_t arrived_milli_ = 0;
  int64_t failed_ = 0;
  Placement last_;
};

// The arrival sequence at `target` times the cluster's GPU capacity, the
// way the FGD paper inflates a trace: the pods in their order, then pods
// drawn uniformly (with replacement, from all of `pods`, CPU-only ones
// included) until the GPU pods' request reaches the target. If the pods
// alone reach it, the sequence stops at the pod that does. Returns indices
// into `pods`. Deterministic for a seed.
std::vector<int> InflateArrivals(const std::vector<PodRequest>& pods, int64_t capacity_milli, double target,
                                 uint64_t seed);

// Runs `arrivals` (indices into `pods`) under `policy`: one Step per GPU
// pod; CPU-only pods are skipped and counted in `cpu_only`.
struct Run {
  Policy policy = Policy::kBestFit;
  std::vector<Step> steps;
  int64_t cpu_only = 0;
};
Result<Run> Replay(const Cluster& cluster, const std::vector<PodRequest>& pods, const std::vector<int>& arrivals,
                   const Workload& workload, Policy policy);

// The step at which the arrivals first reach `share` of capacity (the last
// step if they never do). Requires a non-empty run.
const Step& StepAtShare(const Run& run, double share);

}  // namespace tide::place

#endif  // TIDE_PLACE_PACKER_H_
