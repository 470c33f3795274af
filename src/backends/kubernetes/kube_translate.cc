#include "backends/kubernetes/kube_translate.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>

#include "core/strings.h"

namespace tide::backends::kube {
namespace {

bool Terminal(const Pod& p) { return p.phase == "Succeeded" || p.phase == "Failed"; }

}  // namespace

bool LivePod(const Pod& p) { return !Terminal(p) && !(p.meta.deleted && p.node_name.empty()); }

namespace {

// Pods that do not make a node busy: a DaemonSet's run on every node, a
// mirror pod is the kubelet's own (cluster-autoscaler ignores both too).
bool NodeDaemon(const Pod& p) {
  const OwnerReference* c = p.Controller();
  return (c != nullptr && c->kind == "DaemonSet") || p.meta.annotations.count(std::string(kMirrorAnnotation)) > 0;
}

std::string_view Annotation(const Pod& p, std::string_view key) {
  auto it = p.meta.annotations.find(std::string(key));
  return it == p.meta.annotations.end() ? std::string_view() : std::string_view(it->second);
}

std::string_view Label(const ObjectMeta& m, std::string_view key) {
  auto it = m.labels.find(std::string(key));
  return it == m.labels.end() ? std::string_view() : std::string_view(it->second);
}

Cause CauseNamed(std::string_view name) {
  for (int c = 0; c <= static_cast<int>(Cause::kOther); ++c) {
    if (CauseName(static_cast<Cause>(c)) == name) return static_cast<Cause>(c);
  }
  return Cause::kOther;
}

bool Requirement(const NodeSelectorRequirement& r, const std::map<std::string, std::string>& labels) {
  // A requirement on the node's name (matchFields) pins the pod to existing
  // nodes: a node tide buys never satisfies it.
  if (r.on_field) return false;
  auto it = labels.find(r.key);
  const bool has = it != labels.end();
  const auto in = [&] { return has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end(); };
  const auto number = [](std::string_view s, int64_t* v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return ec == std::errc() && p == s.data() + s.size();
  };
  if (r.op == "In") return in();
  if (r.op == "NotIn") return !in();
  if (r.op == "Exists") return has;
  if (r.op == "DoesNotExist") return !has;
  if ((r.op == "Gt" || r.op == "Lt") && has && r.values.size() == 1) {
    int64_t have = 0, want = 0;
    if (!number(it->second, &have) || !number(r.values[0], &want)) return false;
    return r.op == "Gt" ? have > want : have < want;
  }
  return false;
}

bool Tolerates(const std::vector<Toleration>& tolerations, const Taint& t) {
  if (t.effect == "PreferNoSchedule") return true;  // a preference, not a rule
  for (const Toleration& tol : tolerations) {
    if (!tol.effect.empty() && tol.effect != t.effect) continue;
    if (tol.key.empty() && tol.op == "Exists") return true;  // tolerates everything
    if (tol.key == t.key && (tol.op == "Exists" || tol.value == t.value)) return true;
  }
  return false;
}

// The tide class of a pod priority: the class with the greatest value not
// above it; -1 (the configured default) when every class is above it.
int ClassOfPriority(int32_t priority, const std::vector<int>& class_values) {
  int best = -1;
  for (size_t c = 0; c < class_values.size(); ++c) {
    if (class_values[c] > priority) continue;
    if (best < 0 || class_values[c] > class_values[static_cast<size_t>(best)]) best = static_cast<int>(c);
  }
  return best;
}

ObservedNode TranslateNode(const Node& n, const TideNames& names, const std::map<std::string, int, std::less<>>& pools,
                           const std::map<std::string, std::pair<int, bool>>& use) {
  ObservedNode o;
  o.name = n.meta.name;
  o.provider_id = n.provider_id;
  if (auto it = pools.find(Label(n.meta, names.pool)); it != pools.end()) o.pool = it->second;
  o.gpus = static_cast<int>(n.allocatable.gpus > 0 ? n.allocatable.gpus : n.capacity.gpus);
  if (auto it = use.find(n.meta.name); it != use.end()) {
    o.gpus_used = it->second.first;
    o.busy = it->second.second;
  }
  // A tide node counts as booting until its GPU plugin has registered the
  // GPUs: buying again while it starts is a known cluster-autoscaler failure.
  const bool gpus_up = o.pool < 0 || n.allocatable.gpus > 0 || !n.allocatable.mig.empty();
  if (n.meta.deleted) {
    o.condition = NodeCondition::kGone;
  } else if (!n.IsReady() || !gpus_up) {
    o.condition = NodeCondition::kBooting;
  } else if (n.unschedulable) {
    o.condition = o.busy ? NodeCondition::kDraining : NodeCondition::kCordoned;
  } else {
    o.condition = NodeCondition::kReady;
  }
  if (n.unschedulable) {
    auto it = n.meta.annotations.find(names.cordon);
    o.cordon = it == n.meta.annotations.end() ? Cause::kOther : CauseNamed(it->second);
    o.cordon_text = it == n.meta.annotations.end() ? "cordoned, not by tide" : it->second;
  }
  return o;
}

// A gang's shape from its pods' requests, or why tide cannot run it.
std::string ShapeOf(const std::vector<const Pod*>& pods, ObservedJob* j) {
  const GpuResources& r = pods.front()->requests;
  for (const Pod* p : pods) {
    if (!(p->requests == r)) {
      return StrCat("its pods ask for different GPUs (", pods.front()->meta.name, " and ", p->meta.name,
                    "); tide places gangs of equal pods");
    }
  }
  if (r.mig.empty()) {
    j->gpus_per_worker = static_cast<int>(r.gpus);
    return "";
  }
  if (r.gpus > 0) return "its pods ask for whole GPUs and MIG slices at once";
  if (r.mig.size() > 1 || r.mig.begin()->second != 1) {
    return "its pods ask for more than one MIG slice each; tide places one slice per pod";
  }
  j->slice = r.mig.begin()->first;
  j->gpus_per_worker = 0;
  return "";
}

// The minMember of each PodGroup, by key: scheduler-plugins' and Volcano's.
struct GroupSizes {
  std::map<std::string, int> plugins, volcano;
};

ObservedJob TranslateGang(const GangOf& gang, const std::vector<const Pod*>& pods, const TranslateOptions& options,
                          const TideNames& names, const GroupSizes& group_sizes,
                          const std::vector<int>& class_values) {
  ObservedJob j;
  j.key = gang.key;
  const Pod& first = *pods.front();
  j.name = gang.group.empty() ? first.meta.name : gang.group;
  j.team = first.meta.namespace_name;
  j.attributes.emplace_back("namespace", first.meta.namespace_name);
  if (!first.priority_class_name.empty()) j.attributes.emplace_back("priorityClassName", first.priority_class_name);
  if (auto q = Label(first.meta, kKueueQueueLabel); !q.empty()) j.attributes.emplace_back("queue", std::string(q));
  j.priority_class = ClassOfPriority(first.priority, class_values);
  j.submit = kInfiniteFuture;
  j.start = Timestamp{};
  bool requeueable = true;
  std::vector<const Pod*> live;
  bool all_succeeded = true;
  for (const Pod* p : pods) {
    j.submit = std::min(j.submit, p->meta.created);
    if (Annotation(*p, kSafeToEvict) == "false" || Annotation(*p, kDoNotDisrupt) == "true" ||
        Annotation(*p, names.protect) == "true") {
      j.is_protected = true;
    }
    if (auto v = Annotation(*p, names.preemptible); v == "true" || v == "false") j.preemptible = v == "true";
    if (auto v = Annotation(*p, names.checkpoints); v == "true" || v == "false") j.checkpoints = v == "true";
    // A pod no controller owns is gone for good once evicted.
    requeueable = requeueable && p->Controller() != nullptr;
    all_succeeded = all_succeeded && p->phase == "Succeeded";
    if (LivePod(*p)) live.push_back(p);
  }
  j.requeueable = requeueable;
  if (live.empty()) {
    j.phase = JobPhase::kDone;
    j.waits_for = all_succeeded ? "" : "its pods failed";
    return j;
  }
  j.pools = 0;
  for (size_t p = 0; p < options.pools.size() && p < 64; ++p) {
    bool fits = true;
    for (const Pod* pod : live) fits = fits && PodFitsPool(*pod, options.pools[p]);
    if (fits) j.pools |= PoolSet{1} << p;
  }
  int size = gang.size;
  std::string problem;
  if (gang.from_pod_group || gang.from_volcano) {
    const auto& sizes = gang.from_volcano ? group_sizes.volcano : group_sizes.plugins;
    auto it = sizes.find(gang.key);
    if (it == sizes.end()) {
      problem = StrCat("its ", gang.from_volcano ? "Volcano " : "", "PodGroup ", gang.key, " does not exist");
    } else {
      size = it->second;
    }
  } else if (size <= 0) {
    problem = StrCat("its ", kKueueCountAnnotation, " annotation is missing or not a positive count");
  }
  if (problem.empty()) problem = ShapeOf(live, &j);
  int bound = 0, running = 0, unschedulable = 0;
  bool stopping = false;
  for (const Pod* p : live) {
    if (p->node_name.empty()) {
      unschedulable += MarkedUnschedulable(*p) ? 1 : 0;
      continue;
    }
    ++bound;
    running += p->phase == "Running" ? 1 : 0;
    stopping = stopping || p->meta.deleted.has_value();
    j.nodes.push_back(p->node_name);
    j.members.push_back(StrCat(p->meta.namespace_name, "/", p->meta.name));
    if (p->started && (j.start == Timestamp{} || *p->started < j.start)) j.start = *p->started;
  }
  std::sort(j.nodes.begin(), j.nodes.end());
  std::sort(j.members.begin(), j.members.end());
  const int count = static_cast<int>(live.size());
  // Why an unplaced gang cannot start yet, whoever places it ("" if it can).
  std::string held = problem;
  if (held.empty() && !first.scheduling_gates.empty()) {
    held = StrCat("scheduling gates: ", StrJoin(first.scheduling_gates, ", "));
  } else if (held.empty() && count < size) {
    held = StrCat("its pods: ", count, " of ", size, " created");
  }
  if (options.autoscale_only && !stopping && bound < count) {
    // Another scheduler places the pods: the gang is demand only for the
    // pods it could not place, and only once it has tried every one of them.
    j.nodes.clear();
    j.members.clear();
    j.start = Timestamp{};
    j.workers = count - bound;
    if (held.empty() && unschedulable < count - bound) {
      held = StrCat("its scheduler (", first.scheduler_name, ") to try ", count - bound - unschedulable, " of its ",
                    count - bound, " unbound pods");
    }
    j.phase = held.empty() ? JobPhase::kWaiting : JobPhase::kHeld;
    j.waits_for = held;
    if (j.submit == kInfiniteFuture) j.submit = Timestamp{};
    return j;
  }
  if (stopping) {
    j.phase = JobPhase::kStopping;
  } else if (bound > 0) {
    j.phase = bound == count && running == count ? JobPhase::kRunning : JobPhase::kStarting;
  } else {
    j.phase = held.empty() ? JobPhase::kWaiting : JobPhase::kHeld;
    j.waits_for = held;
  }
  j.workers = bound > 0 ? bound : std::max(count, size);
  if (j.submit == kInfiniteFuture) j.submit = Timestamp{};
  return j;
}

}  // namespace

TideNames::TideNames(std::string_view prefix)
    : pool(StrCat(prefix, "/pool")),
      cordon(StrCat(prefix, "/cordon")),
      interruption(StrCat(prefix, "/interruption")),
      protect(StrCat(prefix, "/protected")),
      preemptible(StrCat(prefix, "/preemptible")),
      checkpoints(StrCat(prefix, "/checkpoints")) {}

PoolShape ShapeOfPool(const TideNames& names, std::string_view pool, std::string_view capacity_type) {
  PoolShape s;
  s.name = std::string(pool);
  s.labels[names.pool] = std::string(pool);
  s.labels[std::string(kCapacityTypeLabel)] = std::string(capacity_type);
  return s;
}

GangOf GangOfPod(const Pod& pod) {
  GangOf g;
  const std::string& ns = pod.meta.namespace_name;
  if (auto group = Label(pod.meta, kPodGroupLabel); !group.empty()) {
    g.group = std::string(group);
    g.key = StrCat(ns, "/", group);
    g.size = 0;
    g.from_pod_group = true;
  } else if (auto volcano = Annotation(pod, kVolcanoGroupAnnotation); !volcano.empty()) {
    g.group = std::string(volcano);
    g.key = StrCat(ns, "/", volcano);
    g.size = 0;
    g.from_volcano = true;
  } else if (auto kueue = Label(pod.meta, kKueueGroupLabel); !kueue.empty()) {
    g.group = std::string(kueue);
    g.key = StrCat(ns, "/", kueue);
    int n = 0;
    g.size = ParseInt(Annotation(pod, kKueueCountAnnotation), &n) && n > 0 ? n : 0;
  } else {
    g.key = StrCat(ns, "/", pod.meta.name);
  }
  return g;
}

bool JobPod(const Pod& pod, const TranslateOptions& options) {
  if (options.autoscale_only) {
    // Any scheduler's pods, but only those asking for GPUs: tide's pools are
    // GPU pools, and other pods are for other node groups. Node daemons
    // follow nodes; they never ask for one.
    if ((pod.requests.gpus <= 0 && pod.requests.mig.empty()) || NodeDaemon(pod)) return false;
  } else if (pod.scheduler_name != options.scheduler_name) {
    return false;
  }
  return options.namespaces.empty() || std::find(options.namespaces.begin(), options.namespaces.end(),
                                                 pod.meta.namespace_name) != options.namespaces.end();
}

bool MarkedUnschedulable(const Pod& pod) {
  const Condition* c = pod.FindCondition("PodScheduled");
  return c != nullptr && c->status == "False" && c->reason == "Unschedulable";
}

bool PodFitsPool(const Pod& pod, const PoolShape& pool) {
  for (const auto& [k, v] : pod.node_selector) {
    auto it = pool.labels.find(k);
    if (it == pool.labels.end() || it->second != v) return false;
  }
  if (!pod.required_affinity.empty()) {
    bool any = false;
    for (const NodeSelectorTerm& term : pod.required_affinity) {
      bool all = true;
      for (const auto& r : term) all = all && Requirement(r, pool.labels);
      any = any || all;
    }
    if (!any) return false;
  }
  for (const Taint& t : pool.taints) {
    if (!Tolerates(pod.tolerations, t)) return false;
  }
  return true;
}

std::vector<std::string> NoticedNodes(const std::vector<Node>& nodes, const TranslateOptions& options) {
  const TideNames names(options.label_prefix);
  std::vector<std::string> out;
  for (const Node& n : nodes) {
    for (const Taint& t : n.taints) {
      if (t.key == names.interruption ||
          std::find(options.notice_taints.begin(), options.notice_taints.end(), t.key) != options.notice_taints.end()) {
        out.push_back(n.meta.name);
        break;
      }
    }
  }
  return out;
}

Observation Translate(const ClusterObjects& objects, const TranslateOptions& options) {
  const TideNames names(options.label_prefix);
  std::map<std::string, int, std::less<>> pools;
  for (size_t p = 0; p < options.pools.size(); ++p) pools.emplace(options.pools[p].name, static_cast<int>(p));

  // GPUs in use and busy, by node, from every bound pod still running.
  std::map<std::string, std::pair<int, bool>> use;
  for (const Pod& p : objects.pods) {
    if (p.node_name.empty() || Terminal(p)) continue;
    auto& u = use[p.node_name];
    u.first += static_cast<int>(p.requests.gpus);
    u.second = u.second || !NodeDaemon(p);
  }
  Observation obs;
  for (const Node& n : objects.nodes) obs.nodes.push_back(TranslateNode(n, names, pools, use));

  GroupSizes group_sizes;
  for (const PodGroup& g : objects.pod_groups) group_sizes.plugins[Key(g.meta)] = g.min_member;
  for (const VolcanoPodGroup& g : objects.volcano_groups) group_sizes.volcano[Key(g.meta)] = g.min_member;
  // Gangs, in the order of their keys (the observation is the same whatever
  // order the watch caches hold the pods in).
  std::map<std::string, std::pair<GangOf, std::vector<const Pod*>>> gangs;
  for (const Pod& p : objects.pods) {
    if (!JobPod(p, options)) continue;
    GangOf g = GangOfPod(p);
    auto& entry = gangs[g.key];
    if (entry.second.empty()) entry.first = g;
    entry.second.push_back(&p);
  }
  for (auto& [key, entry] : gangs) {
    auto& pods = entry.second;
    std::sort(pods.begin(), pods.end(), [](const Pod* a, const Pod* b) { return a->meta.name < b->meta.name; });
    obs.jobs.push_back(TranslateGang(entry.first, pods, options, names, group_sizes, options.class_values));
  }
  return obs;
}

}  // namespace tide::backends::kube
