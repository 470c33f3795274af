#include "controller/state_builder.h"

#include <algorithm>

#include "backends/slurm/slurm.h"
#include "core/strings.h"

namespace tide::controller {

bool IsTideReason(std::string_view reason) { return reason.rfind("tide:", 0) == 0; }

bool AwaitsOpening(const backends::ObservedNode& n) {
  return n.Drained() && (n.reason.empty() || n.reason.rfind(kReasonNotProvisioned, 0) == 0);
}

Result<std::vector<Slot>> MapSlots(const config::Config& config) {
  std::vector<Slot> slots;
  std::map<std::string, std::string> owner;
  for (const auto& [pool_name, list] : config.live.slurm.pool_nodes) {
    const int pool = config.cluster.PoolIndex(pool_name);
    const std::string where = StrCat(config.source, ": live.slurm.pools.", pool_name);
    auto names = backends::ExpandHostlist(list);
    if (!names.ok()) return absl::InvalidArgumentError(StrCat(where, ": ", Message(names.status())));
    int count = 0;
    for (const auto& n : *names) {
      auto [it, fresh] = owner.emplace(n, pool_name);
      if (!fresh) {
        return absl::InvalidArgumentError(
            StrCat(where, ": node '", n, "' is already in pool '", it->second, "'; a node belongs to one pool"));
      }
      slots.push_back({n, pool, static_cast<model::NodeId>(slots.size() + 1)});
      ++count;
    }
    const auto& p = config.cluster.pools[pool];
    if (count < p.max_nodes) {
      return absl::InvalidArgumentError(StrCat(where, ": the pool may grow to ", p.max_nodes, " nodes (max_nodes) but '",
                                               list, "' names ", count, "; list at least max_nodes Slurm nodes"));
    }
  }
  return slots;
}

int ClassOf(const config::Config& config, const backends::ObservedJob& job) {
  for (const auto& r : config.live.jobs.classes) {
    // Partition and QOS only for now; a rule naming another attribute never matches.
    const bool match = std::all_of(r.match.begin(), r.match.end(), [&](const auto& m) {
      return (m.first == "partition" && m.second == job.partition) || (m.first == "qos" && m.second == job.qos);
    });
    if (match) return config.cluster.PriorityClassIndex(r.priority_class);
  }
  return config.cluster.default_priority_class;
}

bool IsProtected(const config::Config& config, const backends::ObservedJob& job) {
  const auto& cls = config.cluster.priority_classes[ClassOf(config, job)];
  if (cls.protect) return true;
  const auto& tag = config.live.jobs.protect_marker;
  return !tag.empty() && job.comment.find(tag) != std::string::npos;
}

namespace {

// Pending reasons that mean the job is not waiting for capacity: buying
// nodes would not start it.
bool WaitsForCapacity(std::string_view reason) {
  static constexpr std::string_view kNot[] = {"JobHeldUser", "JobHeldAdmin", "Dependency", "DependencyNeverSatisfied",
                                              "BeginTime", "PartitionDown", "PartitionInactive", "Reservation",
                                              "InvalidAccount", "InvalidQOS", "QOSMaxJobsPerUserLimit",
                                              "AssocMaxJobsLimit", "PartitionTimeLimit", "PartitionNodeLimit"};
  return std::find(std::begin(kNot), std::end(kNot), reason) == std::end(kNot);
}

}  // namespace

Built BuildState(const config::Config& config, const std::vector<Slot>& slots, const backends::Observation& obs,
                 const std::vector<providers::Instance>& instances,
                 const std::vector<providers::Interruption>& interruptions, Memory* memory,
                 const model::MetricsView* metrics, Timestamp now) {
  Built b;
  model::ClusterState& s = b.state;
  s.spec = &config.cluster;
  s.metrics = metrics;
  b.free_slots.resize(config.cluster.pools.size());

  std::map<std::string, const backends::ObservedNode*> seen;
  for (const auto& n : obs.nodes) seen[n.name] = &n;
  std::map<std::string, const providers::Instance*> by_node;
  for (const auto& i : instances) by_node[i.node] = &i;
  std::map<std::string, Timestamp> notice;
  for (const auto& i : interruptions) notice[i.node] = i.at;
  std::map<std::string, size_t> slot_of;
  for (size_t k = 0; k < slots.size(); ++k) slot_of[slots[k].node] = k;

  // Nodes that run something, from the job list (gres_used can lag).
  std::set<std::string> busy;
  for (const auto& j : obs.jobs) {
    if (j.state == "RUNNING" || j.state == "CONFIGURING" || j.state == "COMPLETING" || j.state == "SUSPENDED") {
      for (const auto& n : j.nodes) busy.insert(n);
    }
  }

  std::set<std::string> partitions_with_slots;
  for (size_t k = 0; k < slots.size(); ++k) {
    const Slot& slot = slots[k];
    const auto& pool = config.cluster.pools[slot.pool];
    auto o = seen.find(slot.node);
    if (o != seen.end()) {
      for (const auto& p : o->second->partitions) partitions_with_slots.insert(p);
    }
    const providers::Instance* inst = by_node.count(slot.node) ? by_node[slot.node] : nullptr;
    const backends::ObservedNode* on = o == seen.end() ? nullptr : o->second;
    const bool answers = on != nullptr && on->Responding();
    if (inst == nullptr) {
      if (answers) {
        // A slurmd tide did not start (a static node): it is capacity, but
        // not tide's to release. Shown as ready; the actuator refuses to
        // release it.
      } else {
        if (on != nullptr && !busy.count(slot.node)) b.free_slots[slot.pool].push_back(k);
        memory->idle_since.erase(slot.node);
        continue;
      }
    }
    model::Node n;
    n.id = slot.id;
    n.name = slot.node;
    n.pool = slot.pool;
    n.gpus = on != nullptr && on->gpus > 0 ? on->gpus : pool.type.gpus;
    n.created = inst != nullptr ? inst->created : now;
    if (auto it = notice.find(slot.node); it != notice.end()) n.interrupt_at = it->second;
    const bool drained = on != nullptr && on->Drained();
    if (!answers || (inst != nullptr && AwaitsOpening(*on))) {
      n.state = model::NodeState::kProvisioning;
      // Expected to join one boot delay after it was bought; overdue boots
      // are expected a little later, never in the past.
      n.ready_at = std::max(n.created + pool.boot_delay.Expected(), answers ? now : now + Seconds(30));
      n.free_gpus = n.gpus;
      memory->idle_since.erase(slot.node);
    } else {
      n.state = drained ? model::NodeState::kDraining : model::NodeState::kReady;
      n.ready_at = n.created;
      n.free_gpus = std::max(0, n.gpus - on->gpus_used);
      const bool idle = on->gpus_used == 0 && !busy.count(slot.node);
      if (idle) {
        auto [it, fresh] = memory->idle_since.emplace(slot.node, now);
        n.idle_since = it->second;
        n.free_gpus = n.gpus;
      } else {
        memory->idle_since.erase(slot.node);
        if (n.free_gpus == n.gpus) n.free_gpus = 0;  // a job holds it without GPUs: not free
      }
    }
    b.nodes[n.id] = k;
    s.nodes.push_back(std::move(n));
  }

  const int max_gpus = std::max(1, config.cluster.MaxGpusPerNode());
  for (const auto& j : obs.jobs) {
    model::Job job;
    if (j.state == "PENDING") {
      job.state = model::JobState::kPending;
      if (!WaitsForCapacity(j.state_reason)) {
        b.skipped.push_back(StrCat("job ", j.id, ": pending for ", j.state_reason, ", not for capacity"));
        continue;
      }
    } else if (j.state == "CONFIGURING") {
      job.state = model::JobState::kStarting;
    } else if (j.state == "RUNNING" || j.state == "SUSPENDED") {
      job.state = memory->stopping.count(j.id) ? model::JobState::kStopping : model::JobState::kRunning;
    } else if (j.state == "COMPLETING") {
      job.state = model::JobState::kStopping;
    } else {
      continue;  // finished
    }
    if (j.gpus <= 0) {
      b.skipped.push_back(StrCat("job ", j.id, ": asks for no GPU"));
      continue;
    }
    if (job.state == model::JobState::kPending && !partitions_with_slots.count(j.partition)) {
      b.skipped.push_back(StrCat("job ", j.id, ": partition '", j.partition, "' has no node of any tide pool"));
      continue;
    }
    for (const auto& n : j.nodes) {
      auto it = slot_of.find(n);
      if (it == slot_of.end()) continue;
      model::NodeShare share;
      share.node = slots[it->second].id;
      share.workers = 1;
      job.alloc.push_back(share);
    }
    if (job.state != model::JobState::kPending && job.alloc.empty()) continue;  // runs outside tide's pools

    model::JobSpec& spec = job.spec;
    spec.name = StrCat(j.id);
    spec.submit = j.submit;
    spec.workers = std::max(1, j.node_count);
    spec.gpus_per_worker = j.gpus_per_node > 0 ? j.gpus_per_node : (j.gpus + spec.workers - 1) / spec.workers;
    if (spec.gpus_per_worker > max_gpus && spec.workers == 1) {
      // One "node" asking for more GPUs than any node has: Slurm could only
      // run it across nodes; count it in whole nodes.
      spec.workers = (spec.gpus_per_worker + max_gpus - 1) / max_gpus;
      spec.gpus_per_worker = max_gpus;
    }
    spec.runtime = j.time_limit > Duration{0} ? j.time_limit : Hours(24);
    spec.priority_class = ClassOf(config, j);
    const auto& cls = config.cluster.priority_classes[spec.priority_class];
    spec.preemptible = cls.preemptible;
    spec.is_protected = IsProtected(config, j);
    spec.team = j.user;
    spec.checkpoint = config.jobs.checkpoint;
    spec.phases = config.jobs.phases;
    job.id = j.id;
    job.priority = cls.value;
    job.restarts = j.restarts;
    job.workers = spec.workers;
    if (job.state != model::JobState::kPending) {
      job.started = j.start;
      job.expected_end = j.time_limit > Duration{0} ? j.start + j.time_limit : kInfiniteFuture;
      // tide cannot see the framework's checkpoints: everything since the
      // start counts as unsaved.
      job.progress = static_cast<double>(std::max<int64_t>(0, (now - j.start).count()));
      job.saved = 0;
    }
    b.jobs[j.id] = &j;
    s.arrivals.push_back({j.submit, j.gpus});
    s.jobs.push_back(std::move(job));
  }
  std::sort(s.arrivals.begin(), s.arrivals.end(), [](const auto& a, const auto& c) { return a.at < c.at; });
  model::SetArrivalsBefore(&s.arrivals);

  s.pools.resize(config.cluster.pools.size());
  for (const auto& [pool, since] : memory->pool_unavailable) {
    if (pool >= 0 && pool < static_cast<int>(s.pools.size())) {
      s.pools[pool].unavailable_since = since;
      s.pools[pool].last_failure = since;
    }
  }
  s.recent_disruptions = memory->disruptions;
  return b;
}

}  // namespace tide::controller
