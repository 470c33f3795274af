// SimState: what the parts of a simulation share. The simulated cluster
// (jobs and allocations, sim_cluster.h), the simulated cloud (nodes, boots,
// spot, sim_cloud.h), the recorder and the event loop all read and change
// the one snapshot the decision core decides on, and keep its index in step
// with every change they make: FindNode/FindJob hand out a record the
// caller may change, and tell the index to read it again at its next Sync.
#ifndef TIDE_SIM_SIM_STATE_H_
#define TIDE_SIM_SIM_STATE_H_

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <string_view>
#include <vector>

#include "autoscale/plan.h"
#include "autoscale/policy.h"
#include "model/cluster.h"
#include "model/state_index.h"
#include "sim/event_queue.h"
#include "sched/scheduler.h"
#include "sim/result.h"
#include "sim/world.h"

namespace tide::sim {

// Hooks for tests that check invariants while a simulation runs.
class SimObserver {
 public:
  virtual ~SimObserver() = default;
  // After the scheduler's placements were applied.
  virtual void AfterSchedule(const model::ClusterState& state, const sched::SchedulerOutput& out, Timestamp now) {}
  // With the state RunOnce saw, before the plan is applied.
  virtual void OnPlan(const model::ClusterState& state, const autoscale::ScalingPlan& plan, Timestamp now) {}
  // After every event of one instant and the decisions they caused.
  virtual void AfterStep(const model::ClusterState& state, Timestamp now) {}
  // A job was interrupted (stopped or killed) by `cause`; `lost` seconds of
  // work since its last checkpoint were lost.
  virtual void OnInterrupt(const model::Job& job, std::string_view cause, double lost, Timestamp now) {}
};

// Positions in the state by id. The simulator numbers jobs and nodes from 1
// in order, so a table, not a hash map: a node erased moves every later one
// down a position, and each is written again.
class Positions {
 public:
  // The position of `id`, or -1.
  int64_t Find(int64_t id) const {
    return id >= 0 && static_cast<size_t>(id) < pos_.size() ? pos_[static_cast<size_t>(id)] : -1;
  }
  size_t At(int64_t id) const {
    const int64_t p = Find(id);
    assert(p >= 0);
    return static_cast<size_t>(p);
  }
  void Set(int64_t id, size_t pos) {
    if (static_cast<size_t>(id) >= pos_.size()) pos_.resize(std::max(pos_.size() * 2, static_cast<size_t>(id) + 1), -1);
    pos_[static_cast<size_t>(id)] = static_cast<int32_t>(pos);
  }
  void Erase(int64_t id) { pos_[static_cast<size_t>(id)] = -1; }

 private:
  std::vector<int32_t> pos_;
};

struct SimState {
  SimState(const model::ClusterSpec* spec, const autoscale::PolicyProfile* policy, const WorldOptions* world)
      : spec(spec), policy(policy), world(world) {}

  const model::ClusterSpec* spec;
  const autoscale::PolicyProfile* policy;
  const WorldOptions* world;
  Timestamp t0{};

  model::ClusterState state;
  model::StateIndex index;  // of state: what the decision core would otherwise scan for
  Positions job_pos;
  Positions node_pos;
  EventQueue queue;
  PolicyResult result;
  SimObserver* observer = nullptr;  // not owned; may be null

  // A node or job found here may be changed by the caller: the index reads
  // it again at its next Sync.
  model::Node* FindNode(model::NodeId id) {
    const int64_t pos = node_pos.Find(id);
    if (pos < 0) return nullptr;
    index.TouchNode(static_cast<size_t>(pos));
    return &state.nodes[static_cast<size_t>(pos)];
  }
  model::Job* FindJob(model::JobId id) {
    const int64_t pos = job_pos.Find(id);
    if (pos < 0) return nullptr;
    index.TouchJob(static_cast<size_t>(pos));
    return &state.jobs[static_cast<size_t>(pos)];
  }
  // The same, to read only: the index is not told.
  const model::Node* PeekNode(model::NodeId id) const {
    const int64_t pos = node_pos.Find(id);
    return pos < 0 ? nullptr : &state.nodes[static_cast<size_t>(pos)];
  }
  const model::Job* PeekJob(model::JobId id) const {
    const int64_t pos = job_pos.Find(id);
    return pos < 0 ? nullptr : &state.jobs[static_cast<size_t>(pos)];
  }
  // Tells the index that a job reached other than through FindJob changed.
  void TouchJob(const model::Job& job) { index.TouchJob(static_cast<size_t>(&job - state.jobs.data())); }

  // Nodes stay in id order (creation order), which the decision core's
  // passes find already sorted.
  void RemoveNode(model::NodeId id) {
    const size_t i = node_pos.At(id);
    index.RemoveNode(i);
    node_pos.Erase(id);
    state.nodes.erase(state.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    for (size_t k = i; k < state.nodes.size(); ++k) node_pos.Set(state.nodes[k].id, k);
  }
};

}  // namespace tide::sim

#endif  // TIDE_SIM_SIM_STATE_H_
