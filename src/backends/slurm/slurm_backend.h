// SlurmBackend: Slurm as a WorkloadManager (backends/workload.h).
//
// Each tide pool is a list of Slurm CLOUD nodes (live.slurm.pools, host
// lists): tide buys machines under those names and keeps every node it
// holds no machine for drained ("tide: not provisioned") so that Slurm never
// starts work on it by itself. Slurm schedules its own jobs; tide stops one
// by sending its checkpoint signal to the batch step and requeueing it after
// the grace. docs/live.md has the node life cycle.
//
// What it reports, in tide's terms:
//   node condition  POWERING_UP, future, unknown: booting; powered down, down
//                   or not responding: gone; otherwise ready, or (drained)
//                   cordoned or draining by whether a job holds it
//   cordon          the drain reason: "tide: not provisioned" (or none:
//                   slurmd's registration with -b clears it) is not-bought,
//                   "tide: releasing..." release, any other "tide:" reason a
//                   drain, anyone else's other
//   job phase       PENDING for capacity: waiting; PENDING for anything else
//                   (held, a dependency, a begin time, a limit): held;
//                   CONFIGURING: starting; RUNNING, SUSPENDED: running;
//                   COMPLETING: stopping; the rest: done
//   job shape       nodes x GPUs per node from the gres request; one "node"
//                   asking for more GPUs than any node has is counted in
//                   whole nodes
//   pools           the pools with a node in one of the job's partitions
//   attributes      partition, qos, account, user
//   protected       its comment contains the protect marker
#ifndef TIDE_BACKENDS_SLURM_SLURM_BACKEND_H_
#define TIDE_BACKENDS_SLURM_SLURM_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "backends/slurm/slurm.h"
#include "backends/workload.h"
#include "config/config.h"
#include "core/process.h"

namespace tide::backends {

struct SlurmBackendOptions {
  SlurmOptions commands;
  // Each pool's Slurm nodes, by pool index, in host-list order; names by
  // pool index too (for messages).
  std::vector<std::vector<std::string>> pool_hosts;
  std::vector<std::string> pool_names;
  // A job whose comment contains this is protected; "" : none is.
  std::string protect_marker = "tide:protected";
  std::string checkpoint_signal = "USR1";
  // The largest GPUs per node of any pool (a job asking for more on one
  // node is counted in whole nodes).
  int max_gpus_per_node = 8;
};

// The options for `config`'s live section: tools in live.slurm.bin_dir,
// SLURM_CONF from live.slurm.conf, pools from live.slurm.pools.
// InvalidArgument, naming the file and field, if a host list is malformed,
// a node is in two pools, a pool has fewer nodes than its max_nodes, or a
// pool has no host list.
Result<SlurmBackendOptions> SlurmBackendOptionsFor(const config::Config& config);
// The environment Slurm's tools need for `config` (SLURM_CONF), for the
// CommandRunner.
std::vector<std::string> SlurmEnvironment(const config::Config& config);

// Slurm's words for a tide cordon, and back.
std::string SlurmDrainReason(const Reason& why);
Cause CauseOfDrainReason(std::string_view reason);

// One observation in tide's terms (the header comment says how).
Observation Translate(const SlurmView& view, const SlurmBackendOptions& options);

class SlurmBackend final : public WorkloadManager {
 public:
  // `runner` is not owned and must outlive the backend.
  SlurmBackend(SlurmBackendOptions options, CommandRunner* runner);

  const Capabilities& capabilities() const override { return caps_; }
  Result<Observation> Observe() override;
  Status Cordon(const std::string& node, const Reason& why) override;
  Status Uncordon(const std::string& node) override;
  Status Evict(const std::string& job, Duration grace, const Reason& why) override;
  Status Checkpoint(const std::string& job) override;
  Status Requeue(const std::string& job) override;
  Status Cancel(const std::string& job, Duration grace, const Reason& why) override;
  Status Bind(const std::string& job, const std::vector<NodeWorkers>& where, const Reason& why) override;
  Status Resize(const std::string& job, const ResizeOrder& order, const Reason& why) override;
  // The first node of the pool's host list, in order, that is not taken,
  // that Slurm lists, that no slurmd answers for and that runs nothing, on
  // the last observation.
  Result<std::string> RegisterNode(int pool, const std::vector<std::string>& taken) override;
  // Powers the node down in Slurm (it is drained "not provisioned" again
  // once powered down).
  Status RemoveNode(const std::string& node) override;
  // Every verb on a node or job takes a name the last observation lists:
  // NotFound, running nothing, for any other (InvalidArgument for a job key
  // that is not a Slurm job id).

 private:
  Status KnownNode(std::string_view verb, const std::string& node) const;
  Result<int64_t> KnownJob(std::string_view verb, const std::string& key) const;
  SlurmBackendOptions options_;
  SlurmCommands commands_;
  Capabilities caps_;
  Observation last_;  // the last observation: RegisterNode's free names, the verbs' known names
};

}  // namespace tide::backends

#endif  // TIDE_BACKENDS_SLURM_SLURM_BACKEND_H_
