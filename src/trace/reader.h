// TraceReader: a stream of jobs in submission order, from a file in one of
// several formats or from the synthetic generator.
//
// Formats (docs/traces.md):
//   native  tide's CSV: submit_time, runtime, gpus or gpus_per_worker+workers,
//           and optional job_id, priority, preemptible, protected, team.
//   itp     Microsoft ITP (ElasticFlow traces): job_id,submission_time,duration,num_gpu
//   philly  Microsoft Philly (Sia export): timestamp,duration,num_gpus,gpu_time,cluster
//   openb   Alibaba PAI 2023 pod list: name,cpu_milli,memory_mib,num_gpu,gpu_milli,
//           gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
//   swf     the Parallel Workloads Archive's Standard Workload Format
//   auto    chosen from the header row (SWF: from its ';' comments or its
//           18 whitespace-separated fields).
#ifndef TIDE_TRACE_READER_H_
#define TIDE_TRACE_READER_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/time.h"
#include "model/cluster.h"

namespace tide::trace {

// Bounds on times in a trace: a submission at most 100 years after time
// zero, a run time of at most 10 years. Anything larger is a malformed row.
inline constexpr int64_t kMaxSubmitSeconds = int64_t{100} * 365 * 86400;
inline constexpr int64_t kMaxRuntimeSeconds = int64_t{10} * 365 * 86400;
// At most 2^20 GPUs in one job: far past any cluster, and small enough that
// sums over a trace's jobs cannot overflow.
inline constexpr int64_t kMaxJobGpus = int64_t{1} << 20;

class TraceReader {
 public:
  virtual ~TraceReader() = default;
  // The next job, in non-decreasing submission order; std::nullopt at the end.
  // InvalidArgument on a malformed record, naming the file, line and field.
  virtual Result<std::optional<model::JobSpec>> Next() = 0;
  // The same, into `*job` (whatever it held is replaced): true with the next
  // job, false at the end. A reader that builds its jobs in place overrides
  // it, and a caller that reads a million jobs saves a move of each.
  virtual Result<bool> NextInto(model::JobSpec* job) {
    TIDE_ASSIGN_OR_RETURN(auto next, Next());
    if (!next) return false;
    *job = std::move(*next);
    return true;
  }
  // Time zero of the trace: the instant relative submission times count from.
  virtual Timestamp start() const = 0;
  // "itp:path/to/file.csv"
  virtual std::string Describe() const = 0;
  // What the reader left out of the stream so far, for `tide trace stats`
  // and `tide bound` ("skipped 12 CPU-only pods"); empty when it has kept
  // every record.
  virtual std::string Notes() const { return ""; }
};

struct TraceOptions {
  // Time zero for formats whose times are relative (native with seconds, ITP).
  Timestamp start = FromUnixSeconds(1767571200);  // 2026-01-05T00:00:00Z, a Monday
  // A job asking for more GPUs than this is split into workers of at most
  // this many GPUs each (one worker per node): 32 GPUs -> 4 workers x 8.
  int gpus_per_node = 8;
  // Priority classes, to resolve names and defaults. Required.
  const model::ClusterSpec* spec = nullptr;
  // Phases and checkpointing of jobs whose trace does not say.
  model::JobPhases phases;
  model::CheckpointPolicy checkpoint;
  // SWF only: processors per GPU. A job of P processors asks for
  // ceil(P / swf_procs_per_gpu) GPUs. Values below 1 count as 1.
  int swf_procs_per_gpu = 1;
};

// A JobSpec with the options' defaults for phases and checkpoints.
model::JobSpec NewJob(const TraceOptions& options);
// Gives `job` the default priority class and its preemptible and protected
// flags (for formats that carry no priority: ITP, SWF).
void UseDefaultClass(const TraceOptions& options, model::JobSpec* job);

// The formats OpenTrace accepts.
std::vector<std::string> TraceFormats();

// Opens `path` as `format` ("auto" detects it from the header).
Result<std::unique_ptr<TraceReader>> OpenTrace(const std::string& path, std::string_view format,
                                               const TraceOptions& options);

// Splits a job of `gpus` GPUs into a gang on nodes of `gpus_per_node`:
// workers = ceil(gpus / gpus_per_node), gpus_per_worker = ceil(gpus / workers).
// 12 GPUs on 8-GPU nodes -> 2 x 6; 4 -> 1 x 4. Requires gpus >= 1.
void SplitGang(int gpus, int gpus_per_node, int* workers, int* gpus_per_worker);

// Reads a whole trace into memory (tests and small tools).
Result<std::vector<model::JobSpec>> ReadAll(TraceReader& reader);

}  // namespace tide::trace

#endif  // TIDE_TRACE_READER_H_
