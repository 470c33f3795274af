#include "backends/slurm/slurm_backend.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/strings.h"

namespace tide::backends {
namespace {

constexpr std::string_view kNotProvisioned = "tide: not provisioned";
constexpr std::string_view kReleasing = "tide: releasing";

// Pending reasons that mean the job is not waiting for capacity: buying
// nodes would not start it.
bool WaitsForCapacity(std::string_view reason) {
  static constexpr std::string_view kNot[] = {"JobHeldUser", "JobHeldAdmin", "Dependency", "DependencyNeverSatisfied",
                                              "BeginTime", "PartitionDown", "PartitionInactive", "Reservation",
                                              "InvalidAccount", "InvalidQOS", "QOSMaxJobsPerUserLimit",
                                              "AssocMaxJobsLimit", "PartitionTimeLimit", "PartitionNodeLimit"};
  return std::find(std::begin(kNot), std::end(kNot), reason) == std::end(kNot);
}

JobPhase PhaseOf(const SlurmJob& j) {
  if (j.state == "PENDING") return WaitsForCapacity(j.state_reason) ? JobPhase::kWaiting : JobPhase::kHeld;
  if (j.state == "CONFIGURING") return JobPhase::kStarting;
  if (j.state == "RUNNING" || j.state == "SUSPENDED") return JobPhase::kRunning;
  if (j.state == "COMPLETING") return JobPhase::kStopping;
  return JobPhase::kDone;
}

NodeCondition ConditionOf(const SlurmNode& n, bool holds_work) {
  if (!n.Responding()) {
    const bool coming = n.Has("POWERING_UP") || n.state == "future" || n.state == "unknown";
    return coming ? NodeCondition::kBooting : NodeCondition::kGone;
  }
  if (!n.Drained()) return NodeCondition::kReady;
  return holds_work ? NodeCondition::kDraining : NodeCondition::kCordoned;
}

// A Slurm reason is one line; keep it short enough to read in sinfo.
std::string OneLine(std::string_view prefix, std::string_view why) {
  std::string r = StrCat(prefix, why.empty() ? "" : ": ", why);
  for (char& c : r) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (r.size() > 120) r = r.substr(0, 117) + "...";
  return r;
}

Result<int64_t> JobId(std::string_view verb, const std::string& key) {
  int64_t id = 0;
  bool digits = !key.empty() && key.size() <= 18;
  for (char c : key) {
    digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (digits) id = id * 10 + (c - '0');
  }
  if (!digits || id <= 0) {
    return absl::InvalidArgumentError(StrCat(verb, ": '", key, "' is not a Slurm job id"));
  }
  return id;
}

}  // namespace

std::string SlurmDrainReason(const Reason& why) {
  switch (why.cause) {
    case Cause::kNotBought: return std::string(kNotProvisioned);
    case Cause::kRelease:
    case Cause::kDrain: return OneLine(kReleasing, why.text);
    default: return OneLine(StrCat("tide: ", CauseName(why.cause)), why.text);
  }
}

Cause CauseOfDrainReason(std::string_view reason) {
  // slurmd's registration with -b clears the reason and keeps the drain;
  // scontrol refuses a drain without a reason, so an empty one is tide's.
  if (reason.empty() || reason.rfind(kNotProvisioned, 0) == 0) return Cause::kNotBought;
  if (reason.rfind(kReleasing, 0) == 0) return Cause::kRelease;
  if (reason.rfind("tide:", 0) == 0) return Cause::kDrain;
  return Cause::kOther;
}

Observation Translate(const SlurmView& view, const SlurmBackendOptions& options) {
  Observation obs;
  // Nodes: the pools' nodes first, in pool and host-list order (the order
  // tide buys them in), then the others.
  std::map<std::string, int, std::less<>> pool_of;
  for (size_t p = 0; p < options.pool_hosts.size(); ++p) {
    for (const auto& h : options.pool_hosts[p]) pool_of.emplace(h, static_cast<int>(p));
  }
  // Nodes that run something, from the job list (gres_used can lag).
  std::set<std::string, std::less<>> holding;
  for (const auto& j : view.jobs) {
    if (HoldsNodes(PhaseOf(j))) holding.insert(j.nodes.begin(), j.nodes.end());
  }
  std::map<std::string, PoolSet, std::less<>> pools_of_partition;
  std::map<std::string, const SlurmNode*, std::less<>> by_name;
  for (const auto& n : view.nodes) {
    by_name.emplace(n.name, &n);
    auto it = pool_of.find(n.name);
    if (it == pool_of.end()) continue;
    for (const auto& part : n.partitions) pools_of_partition[part] |= PoolSet{1} << it->second;
  }
  auto add = [&](const SlurmNode& n, int pool) {
    ObservedNode o;
    o.name = n.name;
    o.pool = pool;
    const bool busy = n.Allocated() || holding.count(n.name) > 0;
    o.condition = ConditionOf(n, busy || n.gpus_used > 0);
    if (n.Drained()) {
      o.cordon = CauseOfDrainReason(n.reason);
      o.cordon_text = n.reason;
    }
    o.gpus = n.gpus;
    o.gpus_used = n.gpus_used;
    o.busy = busy;
    obs.nodes.push_back(std::move(o));
  };
  for (size_t p = 0; p < options.pool_hosts.size(); ++p) {
    for (const auto& h : options.pool_hosts[p]) {
      if (auto it = by_name.find(h); it != by_name.end()) add(*it->second, static_cast<int>(p));
    }
  }
  for (const auto& n : view.nodes) {
    if (!pool_of.count(n.name)) add(n, -1);
  }

  const int max_gpus = std::max(1, options.max_gpus_per_node);
  for (const auto& j : view.jobs) {
    ObservedJob o;
    o.key = StrCat(j.id);
    o.name = j.name;
    o.phase = PhaseOf(j);
    if (o.phase == JobPhase::kHeld) o.waits_for = j.state_reason;
    o.workers = std::max(1, j.node_count);
    o.gpus_per_worker = j.gpus_per_node > 0 ? j.gpus_per_node : (j.gpus + o.workers - 1) / o.workers;
    if (o.gpus_per_worker > max_gpus && o.workers == 1) {
      // One "node" asking for more GPUs than any node has: Slurm could only
      // run it across nodes; count it in whole nodes.
      o.workers = (o.gpus_per_worker + max_gpus - 1) / max_gpus;
      o.gpus_per_worker = max_gpus;
    }
    if (j.gpus <= 0) o.gpus_per_worker = 0;
    o.attributes = {{"partition", j.partition}, {"qos", j.qos}, {"account", j.account}, {"user", j.user}};
    o.is_protected = !options.protect_marker.empty() && j.comment.find(options.protect_marker) != std::string::npos;
    o.requeueable = j.requeue;
    o.pools = 0;
    for (std::string_view part : Split(j.partition, ',')) {
      if (auto it = pools_of_partition.find(StripWhitespace(part)); it != pools_of_partition.end()) {
        o.pools |= it->second;
      }
    }
    o.nodes = j.nodes;
    o.team = j.user;
    o.submit = j.submit;
    o.start = j.start;
    o.time_limit = j.time_limit;
    o.restarts = j.restarts;
    obs.jobs.push_back(std::move(o));
  }
  return obs;
}

SlurmBackend::SlurmBackend(SlurmBackendOptions options, CommandRunner* runner)
    : options_(std::move(options)), commands_(options_.commands, runner) {
  caps_.name = "slurm";
  caps_.schedules_itself = true;
  caps_.bind = false;
  caps_.cordon = true;
  caps_.evict = false;
  caps_.checkpoint = true;
  caps_.checkpoint_signal = options_.checkpoint_signal;
  caps_.requeue = true;
  caps_.cancel = true;
  caps_.resize = false;
  caps_.fixed_node_names = true;
  caps_.job_attributes = {"partition", "qos", "account", "user"};
}

Result<Observation> SlurmBackend::Observe() {
  TIDE_ASSIGN_OR_RETURN(SlurmView view, commands_.Query());
  last_ = Translate(view, options_);
  return last_;
}

// Slurm's tools fail on a name or id slurmctld does not have with an error
// that reads like any other ("try again later"); the contract wants
// NotFound, without running anything. The last observation says what
// Slurm has (Observe comes first).
Status SlurmBackend::KnownNode(std::string_view verb, const std::string& node) const {
  for (const auto& n : last_.nodes) {
    if (n.name == node) return OkStatus();
  }
  return absl::NotFoundError(StrCat(verb, ": Slurm does not list node '", node, "'"));
}

Result<int64_t> SlurmBackend::KnownJob(std::string_view verb, const std::string& key) const {
  TIDE_ASSIGN_OR_RETURN(const int64_t id, JobId(verb, key));
  for (const auto& j : last_.jobs) {
    if (j.key == key) return id;
  }
  return absl::NotFoundError(StrCat(verb, ": Slurm does not list job ", key));
}

Status SlurmBackend::Cordon(const std::string& node, const Reason& why) {
  TIDE_RETURN_IF_ERROR(KnownNode("drain", node));
  return commands_.Drain(node, SlurmDrainReason(why));
}

Status SlurmBackend::Uncordon(const std::string& node) {
  TIDE_RETURN_IF_ERROR(KnownNode("undrain", node));
  return commands_.Undrain(node);
}

Status SlurmBackend::Evict(const std::string& job, Duration grace, const Reason& why) {
  return absl::UnimplementedError(
      StrCat("evict job ", job, ": Slurm has no eviction with a grace; tide sends the checkpoint signal and requeues"));
}

Status SlurmBackend::Checkpoint(const std::string& job) {
  TIDE_ASSIGN_OR_RETURN(const int64_t id, KnownJob("signal", job));
  return commands_.Signal(id, options_.checkpoint_signal);
}

Status SlurmBackend::Requeue(const std::string& job) {
  TIDE_ASSIGN_OR_RETURN(const int64_t id, KnownJob("requeue", job));
  return commands_.Requeue(id);
}

Status SlurmBackend::Cancel(const std::string& job, Duration grace, const Reason& why) {
  // Slurm gives its own grace (KillWait); tide's came with the signal.
  TIDE_ASSIGN_OR_RETURN(const int64_t id, KnownJob("cancel", job));
  return commands_.Cancel(id);
}

Status SlurmBackend::Bind(const std::string& job, const std::vector<NodeWorkers>& where, const Reason& why) {
  return absl::UnimplementedError(StrCat("bind job ", job, ": Slurm schedules its own jobs"));
}

Status SlurmBackend::Resize(const std::string& job, const ResizeOrder& order, const Reason& why) {
  return absl::UnimplementedError(StrCat("resize job ", job, ": Slurm cannot resize a running job in place"));
}

Result<std::string> SlurmBackend::RegisterNode(int pool, const std::vector<std::string>& taken) {
  if (pool < 0 || pool >= static_cast<int>(options_.pool_hosts.size())) {
    return absl::InvalidArgumentError(StrCat("register a node: no pool ", pool));
  }
  const std::set<std::string, std::less<>> used(taken.begin(), taken.end());
  std::map<std::string_view, const ObservedNode*> seen;
  for (const auto& n : last_.nodes) seen.emplace(n.name, &n);
  for (const auto& h : options_.pool_hosts[static_cast<size_t>(pool)]) {
    if (used.count(h)) continue;
    auto it = seen.find(h);
    // Slurm must list it, no slurmd may answer for it (a static node is not
    // tide's to buy) and nothing may run on it.
    // Nor may Slurm be powering it up by itself: it is free once tide has
    // powered it down again (Advance, in the controller).
    if (it == seen.end() || it->second->Answering() || it->second->busy ||
        it->second->condition == NodeCondition::kBooting) {
      continue;
    }
    return h;
  }
  const std::string& name = options_.pool_names.at(static_cast<size_t>(pool));
  return absl::ResourceExhaustedError(StrCat("every one of the ", options_.pool_hosts[static_cast<size_t>(pool)].size(),
                                             " Slurm nodes of live.slurm.pools.", name, " is in use"));
}

Status SlurmBackend::RemoveNode(const std::string& node) {
  TIDE_RETURN_IF_ERROR(KnownNode("power down", node));
  // A node Slurm is powering up (its power saving picked it for a job) is
  // powered down only after ResumeTimeout by POWER_DOWN, and meanwhile comes
  // up again on its own; POWER_DOWN_FORCE stops the power-up now. Found by
  // the crash soak (docs/reliability.md).
  bool coming = false;
  for (const auto& n : last_.nodes) coming = coming || (n.name == node && n.condition == NodeCondition::kBooting);
  return commands_.PowerDown(node, coming);
}

}  // namespace tide::backends
