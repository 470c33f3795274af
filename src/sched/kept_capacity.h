// KeptCapacity: the scheduler's capacity snapshot, kept between passes by a
// driver with a state index instead of made again for every pass.
//
// A pass reads the free GPUs of the ready nodes. Made afresh, that is a
// snapshot slot for each ready node with a GPU free, every pass; at 10,000
// GPUs that was the largest single cost of a simulated scheduler pass. Kept,
// it has one slot per node position, in position order (the index keeps
// node ids increasing with position, so best fit breaks ties as before),
// holding the node's free GPUs if it is ready and 0 otherwise. Before a pass
// it catches up with the index's node events (StateIndex::NodeEventsSince):
// only the nodes that changed are read. The pass places on it inside a fork
// and the fork is undone when the pass ends, so the snapshot always says
// what the state says.
//
// It belongs to one driver and follows one index; it is not thread-safe.
#ifndef TIDE_SCHED_KEPT_CAPACITY_H_
#define TIDE_SCHED_KEPT_CAPACITY_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/state_index.h"
#include "sched/eligibility.h"
#include "sched/snapshot.h"

namespace tide::sched {

class KeptCapacity {
 public:
  // Brings the snapshot up to date with `index` (synced with its state) and
  // returns it, with no fork open.
  CapacitySnapshot* Sync(const model::ClusterSpec& spec, const model::StateIndex& index);

  // The driver's memo of eligible pools by job shape, kept between passes:
  // a pass over a queue of a few shapes would otherwise work each out again.
  // Made anew when asked with another spec (the spec a driver hands in does
  // not change while it is in use, as EligibilityMemo requires).
  EligibilityMemo* Eligibility(const model::ClusterSpec& spec) {
    if (!memo_ || memo_spec_ != &spec) {
      memo_.emplace(spec);
      memo_spec_ = &spec;
    }
    return &*memo_;
  }

  // What a node's slot holds: its free GPUs if it is ready, else none.
  static int FreeOf(const model::StateIndex::NodeFacts& n) {
    return n.state == model::NodeState::kReady ? std::clamp(n.free, 0, n.gpus) : 0;
  }

  // Where the snapshot, as Sync left it, differs from one made afresh of the
  // nodes of `index`: in a slot's node or free GPUs, in a count of workers
  // that fit, or in the node best fit picks (empty: nowhere). For checks.
  std::string Diff(const model::StateIndex& index);

  // How often Sync read every node, and how often it caught up from events.
  int64_t rebuilds() const { return rebuilds_; }
  int64_t catch_ups() const { return catch_ups_; }

 private:
  void Rebuild(const model::ClusterSpec& spec, const model::StateIndex& index);

  const model::StateIndex* index_ = nullptr;
  uint64_t seq_ = 0;  // the index's next event, as of the last Sync
  std::optional<CapacitySnapshot> snap_;
  int num_pools_ = 0, max_gpus_ = 0;
  std::optional<EligibilityMemo> memo_;
  const model::ClusterSpec* memo_spec_ = nullptr;
  std::vector<int> changed_slots_;  // during a catch-up: slots to read again
  int64_t rebuilds_ = 0, catch_ups_ = 0;
};

}  // namespace tide::sched

#endif  // TIDE_SCHED_KEPT_CAPACITY_H_
