#include "controller/snapshot.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/strings.h"

namespace tide::controller {

model::JobId Memory::JobIdOf(const std::string& key) {
  auto it = job_ids.find(key);
  if (it != job_ids.end()) return it->second;
  model::JobId id = 0;
  bool number = !key.empty() && key.size() <= 12 && key[0] != '0';
  for (char c : key) {
    number = number && std::isdigit(static_cast<unsigned char>(c));
    if (number) id = id * 10 + (c - '0');
  }
  if (!number) id = next_job_id++;
  job_ids.emplace(key, id);
  return id;
}

model::NodeId Memory::NodeIdOf(const std::string& name) {
  auto [it, fresh] = node_ids.emplace(name, static_cast<model::NodeId>(node_ids.size() + 1));
  return it->second;
}

int ClassOf(const config::Config& config, const backends::ObservedJob& job) {
  for (const auto& rule : config.live.jobs.classes) {
    bool match = !rule.match.empty();
    for (const auto& [name, value] : rule.match) {
      const auto it = std::find_if(job.attributes.begin(), job.attributes.end(),
                                   [&n = name](const auto& a) { return a.first == n; });
      match = match && it != job.attributes.end() && it->second == value;
    }
    if (match) return config.cluster.PriorityClassIndex(rule.priority_class);
  }
  const int classes = static_cast<int>(config.cluster.priority_classes.size());
  if (job.priority_class >= 0 && job.priority_class < classes) return job.priority_class;
  return config.cluster.default_priority_class;
}

bool IsProtected(const config::Config& config, const backends::ObservedJob& job) {
  return config.cluster.priority_classes[static_cast<size_t>(ClassOf(config, job))].protect || job.is_protected;
}

Status CheckClassRules(const config::Config& config, const backends::Capabilities& caps) {
  for (const auto& rule : config.live.jobs.classes) {
    for (const auto& [name, value] : rule.match) {
      if (std::find(caps.job_attributes.begin(), caps.job_attributes.end(), name) != caps.job_attributes.end()) {
        continue;
      }
      return absl::InvalidArgumentError(StrCat(rule.where, ": '", name, "' is not a job attribute the ", caps.name,
                                               " backend reports; it reports ", StrJoin(caps.job_attributes, ", ")));
    }
  }
  return OkStatus();
}

namespace {

model::JobState StateOf(backends::JobPhase phase, bool stopping) {
  switch (phase) {
    case backends::JobPhase::kWaiting: return model::JobState::kPending;
    case backends::JobPhase::kStarting: return model::JobState::kStarting;
    case backends::JobPhase::kRunning: return stopping ? model::JobState::kStopping : model::JobState::kRunning;
    case backends::JobPhase::kStopping: return model::JobState::kStopping;
    case backends::JobPhase::kHeld:
    case backends::JobPhase::kDone: break;
  }
  return model::JobState::kCompleted;
}

}  // namespace

void MatchJoinedNodes(const std::vector<backends::ObservedNode>& nodes, std::vector<providers::Instance>* instances,
                      std::vector<providers::Interruption>* interruptions) {
  std::set<std::string> claimed;
  for (const auto& i : *instances) claimed.insert(i.node);
  std::map<std::string, const backends::ObservedNode*> listed;
  for (const auto& n : nodes) listed[n.name] = &n;
  auto is_machine = [](const std::string& provider_id, const std::string& id) {
    if (id.empty() || provider_id.size() < id.size()) return false;
    if (provider_id == id) return true;
    return provider_id.size() > id.size() && provider_id.ends_with(id) &&
           provider_id[provider_id.size() - id.size() - 1] == '/';
  };
  std::map<std::string, std::string> renamed;  // instance id -> node
  for (auto& inst : *instances) {
    if (listed.count(inst.node) > 0) continue;
    for (const auto& n : nodes) {
      if (claimed.count(n.name) > 0 || !is_machine(n.provider_id, inst.id)) continue;
      claimed.insert(n.name);
      inst.node = n.name;
      renamed[inst.id] = n.name;
      break;
    }
  }
  for (auto& i : *interruptions) {
    if (auto it = renamed.find(i.instance_id); it != renamed.end()) i.node = it->second;
  }
}

Built BuildSnapshot(const config::Config& config, const backends::Observation& obs,
                    const std::vector<providers::Instance>& instances,
                    const std::vector<providers::Interruption>& interruptions, Memory* memory,
                    const model::MetricsView* metrics, Timestamp now) {
  Built b;
  model::ClusterState& s = b.state;
  s.spec = &config.cluster;
  s.metrics = metrics;
  const int pools = static_cast<int>(config.cluster.pools.size());
  b.free_names.assign(static_cast<size_t>(pools), 0);

  for (const auto& i : instances) b.instance_of[i.node] = &i;
  std::map<std::string, Timestamp> notice;
  for (const auto& i : interruptions) notice[i.node] = i.at;

  // Nodes that run something, from the job list (a node's own count can lag).
  std::set<std::string> holding;
  for (const auto& j : obs.jobs) {
    if (backends::HoldsNodes(j.phase)) holding.insert(j.nodes.begin(), j.nodes.end());
  }

  std::map<std::string, model::NodeId> id_of_node;
  std::set<std::string> listed;  // every node the manager lists
  for (const auto& on : obs.nodes) listed.insert(on.name);
  const backends::PoolSet configured = pools >= 64 ? ~backends::PoolSet{0} : (backends::PoolSet{1} << pools) - 1;
  for (const auto& on : obs.nodes) {
    if (on.pool < 0 || on.pool >= pools) continue;
    const auto& pool = config.cluster.pools[static_cast<size_t>(on.pool)];
    const bool busy = on.busy || on.gpus_used > 0 || holding.count(on.name) > 0;
    auto inst_it = b.instance_of.find(on.name);
    const providers::Instance* inst = inst_it == b.instance_of.end() ? nullptr : inst_it->second;
    const bool answers = on.Answering();
    const model::NodeId id = memory->NodeIdOf(on.name);  // every pool node, in the manager's order
    if (inst != nullptr && !answers && memory->held.count(on.name) > 0) continue;  // not tide's yet
    if (inst == nullptr && !answers) {
      // No machine behind it: capacity tide may buy (unless work still sits on it).
      if (!busy) ++b.free_names[static_cast<size_t>(on.pool)];
      memory->idle_since.erase(on.name);
      continue;
    }
    // (A node that answers without a machine tide bought is a static node:
    // capacity, shown ready, that the applier refuses to give back.)
    model::Node n;
    n.id = id;
    n.name = on.name;
    n.pool = on.pool;
    n.gpus = on.gpus > 0 ? on.gpus : pool.type.gpus;
    n.created = inst != nullptr ? inst->created : now;
    if (auto it = notice.find(on.name); it != notice.end()) n.interrupt_at = it->second;
    const bool not_opened = inst != nullptr && on.cordon == backends::Cause::kNotBought;
    if (!answers || not_opened) {
      n.state = model::NodeState::kProvisioning;
      // Expected to join one boot delay after it was bought; overdue boots
      // are expected a little later, never in the past.
      n.ready_at = std::max(n.created + pool.boot_delay.Expected(), answers ? now : now + Seconds(30));
      n.free_gpus = n.gpus;
      memory->idle_since.erase(on.name);
    } else {
      n.state = on.cordon != backends::Cause::kNone ? model::NodeState::kDraining : model::NodeState::kReady;
      n.ready_at = n.created;
      n.free_gpus = std::max(0, n.gpus - on.gpus_used);
      if (!busy) {
        auto [it, fresh] = memory->idle_since.emplace(on.name, now);
        n.idle_since = it->second;
        n.free_gpus = n.gpus;
      } else {
        memory->idle_since.erase(on.name);
        if (n.free_gpus == n.gpus) n.free_gpus = 0;  // work holds it without GPUs: not free
      }
    }
    id_of_node[on.name] = n.id;
    b.nodes[n.id] = &on;
    s.nodes.push_back(std::move(n));
  }

  // Machines tide bought whose node the manager does not list yet (a node
  // joins a Kubernetes cluster by itself once its machine boots): booting
  // nodes, so that nothing is bought twice while they come up.
  for (const auto& inst : instances) {
    if (id_of_node.count(inst.node) || listed.count(inst.node) || memory->held.count(inst.node) > 0) continue;
    const int pool = config.cluster.PoolIndex(inst.pool);
    if (pool < 0) continue;
    const auto& p = config.cluster.pools[static_cast<size_t>(pool)];
    model::Node n;
    n.id = memory->NodeIdOf(inst.node);
    n.name = inst.node;
    n.pool = pool;
    n.gpus = n.free_gpus = p.type.gpus;
    n.created = inst.created;
    n.state = model::NodeState::kProvisioning;
    n.ready_at = std::max(n.created + p.boot_delay.Expected(), now + Seconds(30));
    if (auto it = notice.find(inst.node); it != notice.end()) n.interrupt_at = it->second;
    id_of_node[inst.node] = n.id;
    memory->idle_since.erase(inst.node);
    s.nodes.push_back(std::move(n));
  }

  for (const auto& j : obs.jobs) {
    if (j.phase == backends::JobPhase::kHeld) {
      b.skipped.push_back(StrCat("job ", j.key, ": waits for ", j.waits_for.empty() ? "something" : j.waits_for,
                                 ", not for capacity"));
      continue;
    }
    model::Job job;
    job.state = StateOf(j.phase, memory->stopping.count(j.key) > 0);
    if (job.state == model::JobState::kCompleted) continue;  // finished
    if (j.gpus() <= 0 && j.slice.empty()) {
      b.skipped.push_back(StrCat("job ", j.key, ": asks for no GPU"));
      continue;
    }
    if (job.state == model::JobState::kPending && (j.pools & configured) == 0) {
      b.skipped.push_back(StrCat("job ", j.key, ": may use none of tide's pools"));
      continue;
    }
    // One entry per worker: a node named twice holds two of its workers
    // (Kubernetes places several pods of a gang on one node; Slurm one).
    for (const auto& name : j.nodes) {
      auto it = id_of_node.find(name);
      if (it == id_of_node.end()) continue;
      auto same = std::find_if(job.alloc.begin(), job.alloc.end(),
                               [&](const model::NodeShare& s) { return s.node == it->second; });
      if (same != job.alloc.end()) {
        ++same->workers;
        continue;
      }
      model::NodeShare share;
      share.node = it->second;
      share.workers = 1;
      job.alloc.push_back(share);
    }
    if (job.state != model::JobState::kPending && job.alloc.empty()) continue;  // runs outside tide's pools

    model::JobSpec& spec = job.spec;
    spec.name = j.key;
    spec.submit = j.submit;
    spec.workers = std::max(1, j.workers);
    spec.gpus_per_worker = std::max(1, j.gpus_per_worker);
    if (!j.slice.empty()) {
      spec.slice = j.slice;
      spec.slice_units = model::SliceUnits(j.slice);
      spec.gpus_per_worker = 1;
    }
    spec.runtime = j.time_limit > Duration{0} ? j.time_limit : Hours(24);
    spec.priority_class = ClassOf(config, j);
    const auto& cls = config.cluster.priority_classes[static_cast<size_t>(spec.priority_class)];
    spec.preemptible = j.preemptible.value_or(cls.preemptible);
    spec.is_protected = IsProtected(config, j);
    spec.team = j.team;
    spec.checkpoint = config.jobs.checkpoint;
    if (!j.checkpoints.value_or(true)) spec.checkpoint.interval = Duration{0};
    spec.phases = config.jobs.phases;
    spec.pools = j.pools;
    job.id = memory->JobIdOf(j.key);
    job.priority = cls.value;
    job.restarts = static_cast<uint16_t>(std::clamp(j.restarts, 0, int{UINT16_MAX}));
    job.reclaimed = memory->reclaims.count(j.key) > 0;
    job.bottleneck = memory->bottlenecks.count(j.key) > 0;
    job.workers = spec.workers;
    if (job.state != model::JobState::kPending) {
      job.started = j.start;
      job.expected_end = j.time_limit > Duration{0} ? j.start + j.time_limit : kInfiniteFuture;
      // tide cannot see the framework's checkpoints: everything since the
      // start counts as unsaved.
      job.progress = static_cast<double>(std::max<int64_t>(0, (now - j.start).count()));
      job.saved = 0;
    }
    b.jobs[job.id] = &j;
    b.job_of_key[j.key] = job.id;
    s.arrivals.push_back({j.submit, spec.gpus()});
    s.jobs.push_back(std::move(job));
  }
  std::sort(s.arrivals.begin(), s.arrivals.end(), [](const auto& a, const auto& c) { return a.at < c.at; });
  model::SetArrivalsBefore(&s.arrivals);

  s.pools.resize(config.cluster.pools.size());
  for (const auto& [pool, since] : memory->pool_unavailable) {
    if (pool >= 0 && pool < static_cast<int>(s.pools.size())) {
      s.pools[static_cast<size_t>(pool)].unavailable_since = since;
      s.pools[static_cast<size_t>(pool)].last_failure = since;
    }
  }
  s.recent_disruptions = memory->disruptions;
  return b;
}

}  // namespace tide::controller
