// Slurm 22.05+ as its client tools show it: the replies of `squeue --json`
// and `sinfo --json` (the openapi v0.0.38 schema) in Slurm's own words, and
// SlurmCommands, which runs those tools and `scontrol` and `scancel`.
// SlurmBackend (slurm_backend.h) turns this into tide's terms; nothing else
// sees it. docs/live.md describes the node life cycle tide uses.
#ifndef TIDE_BACKENDS_SLURM_SLURM_H_
#define TIDE_BACKENDS_SLURM_SLURM_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/process.h"
#include "core/status.h"
#include "core/time.h"

namespace tide::backends {

// A node as sinfo reports it.
struct SlurmNode {
  std::string name;
  // Base state, lower case: "idle", "mixed", "allocated", "down", "drained",
  // "draining", "completing", "future", "unknown", ...
  std::string state;
  // Flags, upper case: "DRAIN", "CLOUD", "POWERED_DOWN", "POWERING_UP",
  // "POWERING_DOWN", "POWER_DOWN", "NOT_RESPONDING", "COMPLETING", ...
  std::vector<std::string> flags;
  int gpus = 0;        // configured GPUs (gres gpu count)
  int gpus_used = 0;   // GPUs allocated to jobs now
  std::string reason;  // the drain/down reason, "" if none
  std::vector<std::string> partitions;

  bool Has(std::string_view flag) const;
  // Drained or draining (the DRAIN flag, or base state drained/draining).
  bool Drained() const;
  bool PoweredDown() const;  // POWERED_DOWN (and not POWERING_UP)
  // slurmd has registered and answers: not down, not powered down or
  // powering up, not NOT_RESPONDING.
  bool Responding() const;
  // A job holds it (allocated, mixed or completing), whatever gres_used says.
  bool Allocated() const;
};

// A job as squeue reports it.
struct SlurmJob {
  int64_t id = 0;
  std::string name;
  // Upper case: "PENDING", "CONFIGURING", "RUNNING", "COMPLETING",
  // "COMPLETED", "FAILED", "CANCELLED", "PREEMPTED", "NODE_FAIL", ...
  std::string state;
  std::string partition;  // one, or several comma-separated
  std::string qos;
  std::string account;
  std::string comment;
  std::string user;
  std::vector<std::string> nodes;  // expanded host list; empty while pending
  int node_count = 1;
  int gpus_per_node = 0;  // from the gres request; 0 if it asks for none
  int gpus = 0;           // in total
  Timestamp submit{};
  Timestamp start{};           // 0 (epoch) if it has not started
  Duration time_limit{};       // 0: no limit
  int restarts = 0;            // restart_cnt
  std::string state_reason;    // why it pends ("Resources", "Priority", ...)
  bool requeue = true;         // may be requeued
};

// Both replies of one observation.
struct SlurmView {
  std::vector<SlurmNode> nodes;
  std::vector<SlurmJob> jobs;
};

// "gpu[1-3,7],cpu01" -> gpu1 gpu2 gpu3 gpu7 cpu01. Zero padding is kept
// ("n[08-10]" -> n08 n09 n10). InvalidArgument on an unbalanced bracket or
// a bad range.
Result<std::vector<std::string>> ExpandHostlist(std::string_view list);

// Parse the output of `squeue --json` / `sinfo --json`. InvalidArgument,
// naming the field (and job id or node name), on anything that does not
// have the expected shape; absent or null optional fields take the
// defaults of SlurmJob / SlurmNode. Unavailable when the reply's
// "errors" array is not empty (its data may be partial). Nodes listed once
// per partition are merged (their partitions united). A job's GPUs come
// from tres_per_node, else tres_per_job, else tres_per_task x tasks.
Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text);
Result<std::vector<SlurmNode>> ParseSinfoJson(std::string_view text);

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

// Runs Slurm's client tools: one command per call, argv only (a reason or
// name with spaces stays one argument; no shell sees it). Each call returns
// OK only if the command exited 0; Unavailable (with its stderr) otherwise;
// InvalidArgument, without running anything, for a name, reason, job id or
// signal the command line could not carry.
class SlurmCommands {
 public:
  // `runner` is not owned and must outlive this.
  SlurmCommands(SlurmOptions options, CommandRunner* runner) : options_(std::move(options)), runner_(runner) {}

  // squeue then sinfo. Unavailable when either fails or reports errors,
  // InvalidArgument (naming the command) when a reply does not parse.
  Result<SlurmView> Query();
  Status Drain(const std::string& node, const std::string& reason);
  Status Undrain(const std::string& node);
  Status PowerUp(const std::string& node);
  // POWER_DOWN; with `force`, POWER_DOWN_FORCE, which also stops a power-up
  // that is under way (and requeues what waits on the node).
  Status PowerDown(const std::string& node, bool force = false);
  // Puts a running job back in the queue (it is killed and restarts later).
  Status Requeue(int64_t job);
  Status Cancel(int64_t job);
  // Sends `signal` ("USR1") to the job's batch step: its checkpoint signal.
  Status Signal(int64_t job, const std::string& signal);

  const SlurmOptions& options() const { return options_; }

 private:
  // Runs one command; Unavailable (with its stderr) if it fails.
  Result<std::string> RunChecked(const std::vector<std::string>& argv);

  SlurmOptions options_;
  CommandRunner* runner_;
};

}  // namespace tide::backends

#endif  // TIDE_BACKENDS_SLURM_SLURM_H_
