// BuildState: the live controller's snapshot. It turns what Slurm, the
// provider and tide's own records say into the model::ClusterState the
// decision core reads, the same type the simulator builds. Pure: every
// input is passed in, so a test can give it any reply it likes.
//
// A pool's Slurm nodes are slots. A slot with no instance is capacity tide
// may buy; it is not in the snapshot. A slot with an instance is a node:
//   provisioning  the instance exists and its slurmd has not joined, or has
//                 joined but tide has not yet opened it (drained "tide: ...")
//   ready         it answers and is not drained
//   draining      tide (or an admin) drained it; released once empty
// docs/live.md has the whole life cycle.
#ifndef TIDE_CONTROLLER_STATE_BUILDER_H_
#define TIDE_CONTROLLER_STATE_BUILDER_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "config/config.h"
#include "model/cluster.h"
#include "providers/provider.h"

namespace tide::controller {

// The drain reasons tide writes. A node drained with any other reason was
// drained by someone else, and tide leaves it alone.
inline constexpr std::string_view kReasonNotProvisioned = "tide: not provisioned";
inline constexpr std::string_view kReasonReleasing = "tide: releasing";
inline constexpr std::string_view kReasonInterruption = "tide: spot interruption notice";
bool IsTideReason(std::string_view reason);
// A node tide bought that has joined but is not open yet: drained with
// tide's "not provisioned" reason, or with none (slurmd's registration with
// -b clears the reason and keeps the drain).
bool AwaitsOpening(const backends::ObservedNode& n);

// One Slurm node that belongs to a pool.
struct Slot {
  std::string node;
  int pool = 0;
  model::NodeId id = 0;  // stable: 1 + position in the pool list
};

// Pools -> Slurm nodes, from live.slurm.pools. InvalidArgument (naming the
// file and field) if a host list is malformed, a node is in two pools, or a
// pool has fewer nodes than its max_nodes.
Result<std::vector<Slot>> MapSlots(const config::Config& config);

// What the controller remembers between loops (and rebuilds after a
// restart; everything here may start empty).
struct Memory {
  std::map<std::string, Timestamp> idle_since;  // by node
  std::map<int64_t, Timestamp> stopping;        // jobs told to checkpoint, when
  std::vector<Timestamp> disruptions;           // nodes disrupted recently
  std::map<int, Timestamp> pool_unavailable;    // pools whose creates failed, since
  // The last run of each job seen running, to count work lost when a job
  // is interrupted by something other than tide (a node failure).
  struct RunSeen {
    int restarts = 0;
    Timestamp start{};
    Timestamp last_seen{};
    int gpus = 0;
  };
  std::map<int64_t, RunSeen> runs;
  std::set<int64_t> requeued_by_tide;  // until their restart count moves
};

struct Built {
  model::ClusterState state;
  // Slurm job id -> observed job, for the jobs in the snapshot.
  std::map<int64_t, const backends::ObservedJob*> jobs;
  // Node id -> slot index, for the nodes in the snapshot.
  std::map<model::NodeId, size_t> nodes;
  // Slots tide may buy, by pool: no instance, no slurmd answering.
  std::vector<std::vector<size_t>> free_slots;
  // Jobs left out, and why (a job that asks for no GPU, a partition with no
  // pool node, a held job): for the log, once per job.
  std::vector<std::string> skipped;
};

// `idle_since` in `memory` is updated (nodes that became idle get `now`).
// The returned state points at config.cluster and `metrics`.
Built BuildState(const config::Config& config, const std::vector<Slot>& slots, const backends::Observation& obs,
                 const std::vector<providers::Instance>& instances,
                 const std::vector<providers::Interruption>& interruptions, Memory* memory,
                 const model::MetricsView* metrics, Timestamp now);

// The priority class index of a job by the configured rules (or the
// default class).
int ClassOf(const config::Config& config, const backends::ObservedJob& job);
// True if tide must never interrupt `job`.
bool IsProtected(const config::Config& config, const backends::ObservedJob& job);

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_STATE_BUILDER_H_
