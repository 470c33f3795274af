#include "sim/sim_workload.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

#include "core/strings.h"

namespace tide::sim {

using backends::Cause;

SimWorkload::SimWorkload(SimState* sim, SimCluster* cluster, SimCloud* cloud)
    : sim_(sim), cluster_(cluster), cloud_(cloud) {
  caps_.name = "simulator";
  caps_.schedules_itself = false;
  caps_.bind = true;
  caps_.cordon = true;
  caps_.evict = true;
  caps_.checkpoint = false;
  caps_.requeue = false;
  caps_.cancel = true;
  caps_.resize = true;
  caps_.fixed_node_names = false;
  caps_.job_attributes = {"team"};
}

Result<model::JobId> SimWorkload::JobOf(std::string_view verb, const std::string& key) const {
  model::JobId id = 0;
  bool digits = !key.empty() && key.size() <= 18;
  for (char c : key) {
    digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (digits) id = id * 10 + (c - '0');
  }
  if (!digits) return absl::InvalidArgumentError(StrCat(verb, ": '", key, "' is not a simulator job id"));
  if (sim_->PeekJob(id) == nullptr) return absl::NotFoundError(StrCat(verb, ": no job ", key));
  return id;
}

Result<model::NodeId> SimWorkload::NodeOf(std::string_view verb, const std::string& name) const {
  const model::NodeId id = cloud_->NodeNamed(name);
  if (id == 0) return absl::NotFoundError(StrCat(verb, ": no node '", name, "'"));
  return id;
}

Result<backends::Observation> SimWorkload::Observe() {
  backends::Observation obs;
  for (const model::Node& n : sim_->state.nodes) {
    backends::ObservedNode o;
    o.name = n.name;
    o.pool = n.pool;
    o.gpus = n.gpus;
    o.gpus_used = n.gpus - n.free_gpus;
    o.busy = !n.idle();
    switch (n.state) {
      case model::NodeState::kProvisioning:
        o.condition = backends::NodeCondition::kBooting;
        break;
      case model::NodeState::kReady:
        o.condition = backends::NodeCondition::kReady;
        break;
      case model::NodeState::kDraining:
        o.condition = n.idle() ? backends::NodeCondition::kCordoned : backends::NodeCondition::kDraining;
        o.cordon = cloud_->CordonOf(n.id);
        break;
      case model::NodeState::kTerminated:
        o.condition = backends::NodeCondition::kGone;
        break;
    }
    obs.nodes.push_back(std::move(o));
  }
  for (const model::Job& j : sim_->state.jobs) {
    backends::ObservedJob o;
    o.key = StrCat(j.id);
    o.name = j.spec.name;
    switch (j.state) {
      case model::JobState::kPending: o.phase = backends::JobPhase::kWaiting; break;
      case model::JobState::kStarting: o.phase = backends::JobPhase::kStarting; break;
      case model::JobState::kRunning: o.phase = backends::JobPhase::kRunning; break;
      case model::JobState::kStopping: o.phase = backends::JobPhase::kStopping; break;
      case model::JobState::kCompleted: o.phase = backends::JobPhase::kDone; break;
    }
    o.workers = j.Workers();
    o.gpus_per_worker = j.spec.gpus_per_worker;
    o.slice = j.spec.slice;
    o.priority_class = j.spec.priority_class;
    o.attributes = {{"team", j.spec.team}};
    o.preemptible = j.spec.preemptible;
    o.is_protected = j.spec.is_protected;
    o.checkpoints = j.spec.checkpoint.interval.count() > 0;
    o.pools = j.spec.pools;
    for (const auto& sh : j.alloc) {
      if (const model::Node* n = sim_->PeekNode(sh.node)) o.nodes.push_back(n->name);
    }
    o.team = j.spec.team;
    o.submit = j.spec.submit;
    o.start = j.state == model::JobState::kPending ? Timestamp{} : j.started;
    o.time_limit = j.spec.runtime;
    o.restarts = j.restarts;
    obs.jobs.push_back(std::move(o));
  }
  return obs;
}

Status SimWorkload::Cordon(const std::string& node, const backends::Reason& why) {
  TIDE_ASSIGN_OR_RETURN(const model::NodeId id, NodeOf("cordon", node));
  model::Node* n = sim_->FindNode(id);
  n->state = model::NodeState::kDraining;
  cloud_->Cordoned(id, why.cause);
  return OkStatus();
}

Status SimWorkload::Uncordon(const std::string& node) {
  TIDE_ASSIGN_OR_RETURN(const model::NodeId id, NodeOf("uncordon", node));
  model::Node* n = sim_->FindNode(id);
  if (n->state == model::NodeState::kDraining) n->state = model::NodeState::kReady;
  cloud_->Uncordoned(id);
  return OkStatus();
}

Status SimWorkload::Stop(const std::string& key, const backends::Reason& why, bool cancel) {
  TIDE_ASSIGN_OR_RETURN(const model::JobId id, JobOf(cancel ? "cancel" : "evict", key));
  std::string_view cause = "stopped";
  int64_t* counter = nullptr;
  PolicyResult& r = sim_->result;
  switch (why.cause) {
    case Cause::kPreemption:
      cause = "preempted";
      counter = &r.preemptions;
      break;
    case Cause::kSpotInterruption:
      cause = "spot";
      counter = &r.spot_interruptions;
      break;
    case Cause::kConsolidation:
      cause = "consolidated";
      counter = &r.consolidations;
      break;
    case Cause::kIdleReclaim:
      cause = "reclaimed";
      counter = &r.reclaims;
      break;
    default:
      break;
  }
  TIDE_RETURN_IF_ERROR(cluster_->Stop(id, now_, cause, cancel));
  if (why.cause == Cause::kIdleReclaim) sim_->FindJob(id)->reclaimed = true;
  if (counter != nullptr) ++*counter;
  return OkStatus();
}

Status SimWorkload::Evict(const std::string& job, Duration grace, const backends::Reason& why) {
  return Stop(job, why, /*cancel=*/false);
}

Status SimWorkload::Cancel(const std::string& job, Duration grace, const backends::Reason& why) {
  return Stop(job, why, /*cancel=*/true);
}

Status SimWorkload::Checkpoint(const std::string& job) {
  return absl::UnimplementedError(StrCat("checkpoint job ", job, ": the simulator evicts with a grace instead"));
}

Status SimWorkload::Requeue(const std::string& job) {
  return absl::UnimplementedError(StrCat("requeue job ", job, ": the simulator evicts with a grace instead"));
}

Status SimWorkload::Bind(const std::string& job, const std::vector<backends::NodeWorkers>& where,
                         const backends::Reason& why) {
  TIDE_ASSIGN_OR_RETURN(const model::JobId id, JobOf("bind", job));
  const model::Job* j = sim_->PeekJob(id);
  if (j->state != model::JobState::kPending) {
    return absl::FailedPreconditionError(StrCat("bind: job ", job, " is not waiting"));
  }
  // The gang is bound whole or not at all: SimCluster::Place takes each
  // node's GPUs as it goes and fails on a placement the scheduler would
  // never make, so such a placement is refused here, before anything is
  // taken. (A slice job's slices on a MIG node are left to Place.)
  sched::Placement p;
  p.job = id;
  p.backfilled = why.cause == Cause::kBackfilled;
  int workers = 0;
  std::vector<std::pair<const model::Node*, int>> gpus;  // whole GPUs asked of each node
  for (const auto& w : where) {
    TIDE_ASSIGN_OR_RETURN(const model::NodeId node, NodeOf("bind", w.node));
    const model::Node* n = sim_->PeekNode(node);
    if (n == nullptr || n->state == model::NodeState::kDraining || n->state == model::NodeState::kTerminated) {
      return absl::FailedPreconditionError(StrCat("bind: node '", w.node, "' takes no work"));
    }
    if (w.workers <= 0) return absl::InvalidArgumentError(StrCat("bind: ", w.workers, " workers on node '", w.node, "'"));
    workers += w.workers;
    if (j->spec.slice_units == 0 || n->slice_free.empty()) {
      auto it = std::find_if(gpus.begin(), gpus.end(), [&](const auto& g) { return g.first == n; });
      if (it == gpus.end()) it = gpus.insert(gpus.end(), {n, 0});
      it->second += w.workers * j->spec.gpus_per_worker;
    }
  }
  if (workers < j->spec.MinWorkers() || workers > j->spec.MaxWorkers()) {
    return absl::InvalidArgumentError(StrCat("bind: ", workers, " workers for job ", job, ", which takes ",
                                             j->spec.MinWorkers(), "..", j->spec.MaxWorkers()));
  }
  for (const auto& [n, want] : gpus) {
    if (n->free_gpus < want) {
      return absl::FailedPreconditionError(
          StrCat("bind: job ", job, " needs ", want, " GPUs on node '", n->name, "', which has ", n->free_gpus, " free"));
    }
  }
  for (const auto& w : where) {
    const model::NodeId node = cloud_->NodeNamed(w.node);
    model::NodeShare sh;
    sh.node = node;
    sh.workers = w.workers;
    // A slice job's workers take one slice each on a node that slices.
    if (j->spec.slice_units > 0) sh.units = static_cast<int16_t>(j->spec.slice_units);
    p.shares.push_back(sh);
  }
  return cluster_->Place(p, now_);
}

Status SimWorkload::Resize(const std::string& job, const backends::ResizeOrder& order, const backends::Reason& why) {
  TIDE_ASSIGN_OR_RETURN(const model::JobId id, JobOf("resize", job));
  autoscale::ResizeInfo r;
  r.workers = order.workers;
  r.global_batch = order.global_batch;
  r.learning_rate = order.learning_rate;
  for (const auto& [from, to] : {std::pair{&order.add, &r.add}, {&order.remove, &r.remove}}) {
    for (const auto& w : *from) {
      TIDE_ASSIGN_OR_RETURN(const model::NodeId node, NodeOf("resize", w.node));
      to->push_back({node, w.workers});
    }
  }
  return cluster_->Resize(id, r, now_);
}

Result<std::string> SimWorkload::RegisterNode(int pool, const std::vector<std::string>& taken) {
  if (pool < 0 || pool >= static_cast<int>(sim_->spec->pools.size())) {
    return absl::InvalidArgumentError(StrCat("register a node: no pool ", pool));
  }
  std::string name = cloud_->NextName(pool);
  if (std::find(taken.begin(), taken.end(), name) != taken.end()) {
    return absl::FailedPreconditionError(StrCat("register a node of pool ", sim_->spec->pools[static_cast<size_t>(pool)].name,
                                                ": the simulator names a node when its machine is created, and ", name,
                                                " is not created yet"));
  }
  return name;
}

Status SimWorkload::RemoveNode(const std::string& node) {
  // The simulated cluster forgets a node when the cloud deletes its machine.
  return NodeOf("remove", node).status();
}

}  // namespace tide::sim
