// The Alibaba PAI GPU-sharing trace of 2023 ("openb", alibaba/clusterdata
// cluster-trace-gpu-v2023): a pod list and a node list (docs/traces.md).
//
//   pods:  name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
//          creation_time,deletion_time,scheduled_time
//   nodes: sn,cpu_milli,memory_mib,gpu,model
//
// OpenbPodReader reads the pod rows as they are (the placement mode uses
// them); OpenTrace's format `openb` turns them into JobSpecs for the
// simulator (OpenOpenb in trace/formats.h). The node list becomes per-model
// node groups and a cluster configuration.
#ifndef TIDE_TRACE_OPENB_H_
#define TIDE_TRACE_OPENB_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/csv.h"
#include "core/status.h"
#include "model/cluster.h"

namespace tide::trace {

// The trace's quality-of-service classes, a priority analogue.
enum class OpenbQos : uint8_t { kLatencySensitive, kGuaranteed, kBurstable, kBestEffort };
// "LS", "Guaranteed", "Burstable", "BE"; an empty value reads as Burstable
// (the default class). InvalidArgument otherwise.
Result<OpenbQos> ParseOpenbQos(std::string_view text);

// The priority class a QoS maps to, by the classes' values rather than their
// names (so any configuration works): LS and Guaranteed take the highest
// value, Burstable the default class, BE the lowest. BE pods are always
// preemptible (they are best effort); the others take their class's default.
struct QosClass {
  int priority_class = 0;
  bool preemptible = false;
};
QosClass MapOpenbQos(OpenbQos qos, const model::ClusterSpec& spec);

// One pod row. Times are seconds from the start of the trace; nullopt when
// the column is missing or the field empty (pods never scheduled have no
// scheduled_time; the multigpu20 list has no time columns at all).
struct OpenbPod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int gpu_milli = 0;  // per GPU: 1..1000 for a 1-GPU pod, 1000 for more; 0 when num_gpu is 0
  std::vector<std::string> gpu_models;  // gpu_spec split on '|', duplicates dropped; empty: any
  OpenbQos qos = OpenbQos::kBurstable;
  std::optional<int64_t> creation;
  std::optional<int64_t> deletion;
  std::optional<int64_t> scheduled;

  // The pod's whole GPU request in milli-GPUs (num_gpu x gpu_milli).
  int64_t TotalGpuMilli() const { return int64_t{num_gpu} * gpu_milli; }
};

// A streaming reader of the pod list: one row in memory at a time.
class OpenbPodReader {
 public:
  // Opens `path` and reads its header. NotFound if it cannot be opened;
  // InvalidArgument if a required column (name, cpu_milli, memory_mib,
  // num_gpu, gpu_milli) is missing.
  static Result<std::unique_ptr<OpenbPodReader>> Open(const std::string& path);
  // Over a CsvReader whose header has been read.
  static Result<std::unique_ptr<OpenbPodReader>> FromCsv(std::unique_ptr<CsvReader> csv);

  // The next pod, std::nullopt at the end. InvalidArgument on a malformed
  // field, naming the file, line and field.
  Result<std::optional<OpenbPod>> Next();

  // True when the list has the creation, deletion and scheduled columns.
  bool has_times() const { return creation_ >= 0 && deletion_ >= 0 && scheduled_ >= 0; }
  const CsvReader& csv() const { return *csv_; }

 private:
  explicit OpenbPodReader(std::unique_ptr<CsvReader> csv);
  Result<std::optional<int64_t>> Time(std::string_view field, int column,
                                      const std::vector<std::string_view>& row) const;

  std::unique_ptr<CsvReader> csv_;
  int name_, cpu_, memory_, num_gpu_, gpu_milli_, spec_, qos_, creation_, deletion_, scheduled_;
};

// Reads the whole pod list (the placement mode samples from it).
Result<std::vector<OpenbPod>> ReadOpenbPods(const std::string& path);

// The slice a fractional pod asks for on GPUs sliced as `mig`: its milli
// rounded up to whole compute units, so it never gets less than it asked
// for (460 milli of 7 units -> 4), then, when `mig` lists profiles, up to
// the smallest profile that large (and `units_per_gpu` if none is). `profile`
// (if given) gets that profile's name, or "<units>g" without profiles. 0 for
// a whole-GPU request.
int OpenbSliceUnits(int gpu_milli, const model::MigConfig& mig, std::string* profile = nullptr);

// One node row.
struct OpenbNode {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpus = 0;
  std::string model;  // empty on CPU-only nodes
};

// Reads the node list. InvalidArgument on a malformed row (file, line, field).
Result<std::vector<OpenbNode>> ReadOpenbNodes(const std::string& path);
Result<std::vector<OpenbNode>> ReadOpenbNodes(CsvReader* csv);

// Nodes of one shape: the same GPU model, GPUs per node, CPU and memory.
struct OpenbNodeGroup {
  std::string model;
  int gpus = 0;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int count = 0;
  std::string pool;  // a pool name: "<model>x<gpus>", plus "-<cpus>c<GiB>g" when a model and size has several shapes
};

// The GPU nodes grouped by shape, ordered by model, GPUs, CPU and memory.
// CPU-only nodes (gpu 0) are left out; `cpu_only` (if given) counts them.
std::vector<OpenbNodeGroup> GroupOpenbNodes(const std::vector<OpenbNode>& nodes, int* cpu_only = nullptr);

// The reserved price this tool assumes for one GPU of `model` an hour, in
// CNY (examples/openb/README.md says where the figures come from).
double OpenbGpuPricePerHour(std::string_view model);

// A tide configuration with one reserved pool per group (min = max =
// count), priority classes for the trace's QoS, and `source` named in the
// header comment.
std::string OpenbClusterYaml(const std::vector<OpenbNodeGroup>& groups, std::string_view source);

}  // namespace tide::trace

#endif  // TIDE_TRACE_OPENB_H_
