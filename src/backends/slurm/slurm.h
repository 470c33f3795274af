// The Slurm 22.05+ backend: observes through `squeue --json` and
// `sinfo --json` (the openapi v0.0.38 schema), acts through `scontrol` and
// `scancel`. docs/slurm.md describes the node life cycle tide uses.
#ifndef TIDE_BACKENDS_SLURM_SLURM_H_
#define TIDE_BACKENDS_SLURM_SLURM_H_

#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.h"
#include "core/process.h"

namespace tide::backends {

// "gpu[1-3,7],cpu01" -> gpu1 gpu2 gpu3 gpu7 cpu01. Zero padding is kept
// ("n[08-10]" -> n08 n09 n10). InvalidArgument on an unbalanced bracket or
// a bad range.
Result<std::vector<std::string>> ExpandHostlist(std::string_view list);

// Parse the output of `squeue --json` / `sinfo --json`. InvalidArgument,
// naming the field (and job id or node name), on anything that does not
// have the expected shape; absent or null optional fields take the
// defaults of ObservedJob / ObservedNode. Unavailable when the reply's
// "errors" array is not empty (its data may be partial). Nodes listed once
// per partition are merged (their partitions united). A job's GPUs come
// from tres_per_node, else tres_per_job, else tres_per_task x tasks.
Result<std::vector<ObservedJob>> ParseSqueueJson(std::string_view text);
Result<std::vector<ObservedNode>> ParseSinfoJson(std::string_view text);

// GPUs in a gres/tres string: "gres:gpu:8", "gres:gpu:a100:8",
// "gres/gpu=4", "gpu:a100:8(IDX:0-7)", "gres:gpu:a100:2,gres:foo:1". 0 if
// it names no GPU.
int GpusInGres(std::string_view text);

struct SlurmOptions {
  std::string squeue = "squeue";
  std::string sinfo = "sinfo";
  std::string scontrol = "scontrol";
  std::string scancel = "scancel";
  Duration timeout = Seconds(30);  // per command
  // Only these partitions are observed (empty: all).
  std::vector<std::string> partitions;
};

class SlurmBackend final : public ClusterBackend {
 public:
  // `runner` is not owned and must outlive the backend.
  SlurmBackend(SlurmOptions options, CommandRunner* runner)
      : options_(std::move(options)), runner_(runner) {}

  Result<Observation> Observe() override;
  Status Drain(const std::string& node, const std::string& reason) override;
  Status Undrain(const std::string& node) override;
  Status PowerUp(const std::string& node) override;
  Status PowerDown(const std::string& node) override;
  Status Requeue(int64_t job) override;
  Status Cancel(int64_t job) override;
  Status Signal(int64_t job, const std::string& signal) override;

 private:
  // Runs one command; Unavailable (with its stderr) if it fails.
  Result<std::string> RunChecked(const std::vector<std::string>& argv);

  SlurmOptions options_;
  CommandRunner* runner_;
};

}  // namespace tide::backends

#endif  // TIDE_BACKENDS_SLURM_SLURM_H_
