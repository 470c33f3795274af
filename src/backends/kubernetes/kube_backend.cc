#include "backends/kubernetes/kube_backend.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include "core/strings.h"

namespace tide::backends::kube {
namespace {

// An Event's reason for a cause: CamelCase, as Kubernetes' own.
std::string EventReason(Cause c) {
  std::string out;
  bool up = true;
  for (char ch : CauseName(c)) {
    if (ch == '-') {
      up = true;
      continue;
    }
    out.push_back(up ? static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch) : ch);
    up = false;
  }
  return out;
}

}  // namespace

InformerSource::InformerSource(Transport* transport, const Clock* clock, InformerOptions options)
    : pods_(transport, clock, &sleeper_, options),
      nodes_(transport, clock, &sleeper_, options),
      groups_(transport, clock, &sleeper_, options),
      volcano_(transport, clock, &sleeper_, options) {}

InformerSource::~InformerSource() {
  for (auto& t : threads_) t.request_stop();
}

Result<ClusterObjects> InformerSource::Objects() {
  if (threads_.empty()) {
    for (InformerBase* i : std::initializer_list<InformerBase*>{&pods_, &nodes_, &groups_, &volcano_}) {
      threads_.emplace_back([i](std::stop_token stop) { i->Run(stop); });
    }
    // The first call waits a little for the first lists, so that tide's
    // first loop does not report an error for what is only a start.
    for (int waited = 0; waited < 100 && !(pods_.Synced() && nodes_.Synced()); ++waited) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  for (const InformerBase* i : std::initializer_list<const InformerBase*>{&pods_, &nodes_}) {
    if (i->Synced()) continue;
    const SyncState s = i->State();
    return absl::UnavailableError(StrCat(
        "the ", i->what(), " cache is not current (", !s.listed ? "not listed yet" : "no contact lately",
        s.last_error.empty() ? "" : StrCat("; last error: ", s.last_error), ")"));
  }
  ClusterObjects out;
  auto pods = pods_.Snapshot();
  for (auto& [key, p] : pods.objects) out.pods.push_back(std::move(p));
  auto nodes = nodes_.Snapshot();
  for (auto& [key, n] : nodes.objects) out.nodes.push_back(std::move(n));
  // PodGroups are optional: without scheduler-plugins the resource does not
  // exist, and gangs come from Kueue's labels or are single pods.
  auto groups = groups_.Snapshot();
  for (auto& [key, g] : groups.objects) out.pod_groups.push_back(std::move(g));
  auto volcano = volcano_.Snapshot();  // the same for Volcano's
  for (auto& [key, g] : volcano.objects) out.volcano_groups.push_back(std::move(g));
  return out;
}

uint64_t InformerSource::Generation() const {
  return pods_.version() + nodes_.version() + groups_.version() + volcano_.version();
}

KubernetesBackend::KubernetesBackend(KubernetesBackendOptions options, Transport* transport, ObjectSource* source,
                                     const Clock* clock)
    : options_(std::move(options)),
      names_(options_.translate.label_prefix),
      client_(transport),
      source_(source),
      clock_(clock),
      notes_(options_.note_workers, /*capacity=*/20000) {
  caps_.name = "kubernetes";
  // Autoscale-only mode: another scheduler places the pods; tide never binds.
  caps_.schedules_itself = options_.translate.autoscale_only;
  caps_.bind = !options_.translate.autoscale_only;
  caps_.cordon = true;
  caps_.evict = true;
  caps_.checkpoint = false;  // SIGTERM, within the eviction's grace, is the signal
  caps_.requeue = false;     // a Job's controller recreates evicted pods
  caps_.cancel = true;
  caps_.resize = false;
  caps_.explain = true;
  caps_.fixed_node_names = false;
  caps_.job_attributes = {"namespace", "priorityClassName", "queue"};
}

Result<Observation> KubernetesBackend::Observe() {
  TIDE_ASSIGN_OR_RETURN(last_, source_->Objects());
  observed_ = true;
  return Translate(last_, options_.translate);
}

bool KubernetesBackend::NodeKnown(const std::string& node) const {
  return std::any_of(last_.nodes.begin(), last_.nodes.end(), [&](const Node& n) { return n.meta.name == node; });
}

Result<std::vector<const Pod*>> KubernetesBackend::PodsOf(const std::string& job) const {
  std::vector<const Pod*> out;
  for (const Pod& p : last_.pods) {
    if (!JobPod(p, options_.translate) || !LivePod(p)) continue;
    if (GangOfPod(p).key == job) out.push_back(&p);
  }
  if (out.empty()) return absl::NotFoundError(StrCat("kubernetes: no live pods of job ", job, " in the last observation"));
  std::sort(out.begin(), out.end(), [](const Pod* a, const Pod* b) { return a->meta.name < b->meta.name; });
  return out;
}

void KubernetesBackend::Tell(const Pod& pod, std::string_view reason, std::string_view message, bool warning) {
  EventSpec e;
  e.kind = "Pod";
  e.namespace_name = pod.meta.namespace_name;
  e.name = pod.meta.name;
  e.uid = pod.meta.uid;
  e.reason = std::string(reason);
  e.message = std::string(message);
  e.warning = warning;
  // An Event is for people: its failure changes nothing tide decided.
  notes_.Post([this, e = std::move(e), now = clock_->Now()] { (void)client_.PostEvent(e, now); });
}

void KubernetesBackend::TellNode(const std::string& node, std::string_view reason, std::string_view message) {
  EventSpec e;
  e.kind = "Node";
  e.namespace_name = "default";
  e.name = node;
  for (const Node& n : last_.nodes) {
    if (n.meta.name == node) e.uid = n.meta.uid;
  }
  e.reason = std::string(reason);
  e.message = std::string(message);
  notes_.Post([this, e = std::move(e), now = clock_->Now()] { (void)client_.PostEvent(e, now); });
}

Status KubernetesBackend::Cordon(const std::string& node, const Reason& why) {
  if (!NodeKnown(node)) return absl::NotFoundError(StrCat("kubernetes: no node ", node, " in the last observation"));
  NodePatch patch;
  patch.unschedulable = true;
  patch.annotations[names_.cordon] = std::string(CauseName(why.cause));
  TIDE_RETURN_IF_ERROR(client_.PatchNode(node, patch).status());
  TellNode(node, StrCat("Cordoned", EventReason(why.cause)), StrCat("tide cordoned the node: ", why.text));
  return OkStatus();
}

Status KubernetesBackend::Uncordon(const std::string& node) {
  if (!NodeKnown(node)) return absl::NotFoundError(StrCat("kubernetes: no node ", node, " in the last observation"));
  NodePatch patch;
  patch.unschedulable = false;
  patch.annotations[names_.cordon] = std::nullopt;
  return client_.PatchNode(node, patch).status();
}

Status KubernetesBackend::Evict(const std::string& job, Duration grace, const Reason& why) {
  TIDE_ASSIGN_OR_RETURN(std::vector<const Pod*> pods, PodsOf(job));
  for (const Pod* p : pods) {
    if (p->node_name.empty() || p->meta.deleted) continue;  // not running, or already going
    Status s = client_.EvictPod(p->meta.namespace_name, p->meta.name, grace);
    if (IsRefused(s)) {
      Tell(*p, "EvictionRefused", StrCat("tide could not evict it (", why.text, "): ", Message(s)), true);
      return Refused(StrCat("job ", job, ": ", Message(s)));
    }
    if (absl::IsNotFound(s)) continue;  // gone by itself
    TIDE_RETURN_IF_ERROR(s);
    Tell(*p, StrCat("Evicted", EventReason(why.cause)), StrCat("tide evicted it: ", why.text), false);
  }
  return OkStatus();
}

Status KubernetesBackend::Checkpoint(const std::string& job) {
  return absl::UnimplementedError(
      StrCat("kubernetes: no checkpoint signal apart from a stop (SIGTERM within the eviction's grace); job ", job));
}

Status KubernetesBackend::Requeue(const std::string& job) {
  return absl::UnimplementedError(
      StrCat("kubernetes: requeue is the Job controller's, after an eviction; job ", job));
}

Status KubernetesBackend::Cancel(const std::string& job, Duration grace, const Reason& why) {
  TIDE_ASSIGN_OR_RETURN(std::vector<const Pod*> pods, PodsOf(job));
  // Ending a Job's pods alone would have its controller recreate them: end
  // the Job (its pods go with it). A pod no Job owns is deleted.
  std::set<std::pair<std::string, std::string>> jobs_done;
  for (const Pod* p : pods) {
    const OwnerReference* owner = p->Controller();
    Status s;
    if (owner != nullptr && owner->kind == "Job") {
      if (!jobs_done.insert({p->meta.namespace_name, owner->name}).second) continue;
      s = client_.DeleteJob(p->meta.namespace_name, owner->name);
    } else {
      s = client_.DeletePod(p->meta.namespace_name, p->meta.name, grace);
    }
    if (!s.ok() && !absl::IsNotFound(s)) return s;
    Tell(*p, StrCat("Cancelled", EventReason(why.cause)), StrCat("tide ended the job: ", why.text), false);
  }
  return OkStatus();
}

Status KubernetesBackend::Bind(const std::string& job, const std::vector<NodeWorkers>& where, const Reason& why) {
  if (options_.translate.autoscale_only) {
    return absl::FailedPreconditionError(
        StrCat("kubernetes: autoscale-only mode binds nothing (job ", job, " is its scheduler's to place)"));
  }
  TIDE_ASSIGN_OR_RETURN(std::vector<const Pod*> pods, PodsOf(job));
  std::vector<const Pod*> waiting;
  for (const Pod* p : pods) {
    if (p->node_name.empty()) waiting.push_back(p);
  }
  int workers = 0;
  for (const auto& w : where) {
    if (!NodeKnown(w.node)) return absl::NotFoundError(StrCat("kubernetes: job ", job, ": no node ", w.node));
    workers += w.workers;
  }
  if (workers != static_cast<int>(waiting.size()) || waiting.size() != pods.size()) {
    return absl::InvalidArgumentError(StrCat("kubernetes: job ", job, " has ", waiting.size(), " of ", pods.size(),
                                             " pods waiting; the placement names ", workers, " workers"));
  }
  // Every pod or none: a binding that fails has the pods bound before it
  // evicted again (their controller recreates them, waiting), so that a
  // half-bound gang never holds nodes.
  std::vector<std::string> node_of;  // by waiting pod
  for (const auto& w : where) node_of.insert(node_of.end(), static_cast<size_t>(w.workers), w.node);
  // Up to bind_parallelism bindings at once (each is a round trip to the
  // API server); a round with a failure is the last.
  std::vector<Status> result(waiting.size(), absl::CancelledError("not tried"));
  const size_t width = static_cast<size_t>(std::max(1, options_.bind_parallelism));
  auto bind = [&](size_t i) {
    const Pod* p = waiting[i];
    result[i] = client_.BindPod(p->meta.namespace_name, p->meta.name, node_of[i], p->meta.uid);
  };
  bool failed = false;
  for (size_t from = 0; from < waiting.size() && !failed; from += width) {
    const size_t to = std::min(waiting.size(), from + width);
    if (width == 1) {
      bind(from);
    } else {
      std::vector<std::jthread> round;
      for (size_t i = from; i < to; ++i) round.emplace_back(bind, i);
    }  // joined here
    for (size_t i = from; i < to; ++i) failed = failed || !result[i].ok();
  }
  if (failed) {
    size_t first = 0;
    while (result[first].ok()) ++first;
    for (size_t i = 0; i < waiting.size(); ++i) {
      if (result[i].ok()) (void)client_.EvictPod(waiting[i]->meta.namespace_name, waiting[i]->meta.name, Seconds(0));
    }
    const Status& s = result[first];
    return Status(s.code(), StrCat("kubernetes: job ", job, ": binding pod ", waiting[first]->meta.name, " to ",
                                   node_of[first], " failed, the gang's other bindings undone: ", Message(s)));
  }
  size_t next = 0;
  for (const auto& w : where) {
    for (int i = 0; i < w.workers; ++i, ++next) {
      Tell(*waiting[next], "Scheduled",
           StrCat("tide placed gang ", job, " (", waiting.size(), " pods); this pod on ", w.node, ": ", why.text),
           false);
    }
  }
  return OkStatus();
}

Status KubernetesBackend::Resize(const std::string& job, const ResizeOrder& order, const Reason& why) {
  return absl::UnimplementedError(StrCat("kubernetes: resizing a running gang is not carried out (job ", job, " to ",
                                         order.workers, " workers: ", why.text, ")"));
}

Status KubernetesBackend::Explain(const std::string& job, const std::string& why) {
  TIDE_ASSIGN_OR_RETURN(std::vector<const Pod*> pods, PodsOf(job));
  for (const Pod* p : pods) {
    if (!p->node_name.empty()) continue;
    if (options_.translate.autoscale_only) {
      // The condition is the other scheduler's to write: tide only adds
      // its Event, beside that scheduler's FailedScheduling.
      Tell(*p, "Waiting", why, false);
      continue;
    }
    // For people too (what `kubectl describe` and cluster-autoscaler read):
    // sent beside the loop, like the Events.
    notes_.Post([this, ns = p->meta.namespace_name, name = p->meta.name, why, now = clock_->Now()] {
      (void)client_.SetPodScheduled(ns, name, "False", "Unschedulable", why, now);
    });
    // And an Event, so that `kubectl describe` and event streams show tide's
    // decision (a scale-up, a limit) as they show the scheduler's.
    Tell(*p, "Waiting", why, false);
  }
  return OkStatus();
}

Result<std::string> KubernetesBackend::RegisterNode(int pool, const std::vector<std::string>& taken) {
  if (pool < 0 || pool >= static_cast<int>(options_.translate.pools.size())) {
    return absl::InvalidArgumentError(StrCat("kubernetes: no pool ", pool));
  }
  std::set<std::string> used(taken.begin(), taken.end());
  for (const Node& n : last_.nodes) used.insert(n.meta.name);
  // A Node's name is a DNS subdomain: the pool's name, lowercased, with
  // anything else made '-'.
  std::string name = ToLower(options_.translate.pools[static_cast<size_t>(pool)].name);
  for (char& c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) c = '-';
  }
  // Never a name handed out before: a node given back keeps its name to
  // itself while its Node object goes away.
  for (int& i = next_index_[pool];; ) {
    std::string candidate = StrCat(name, "-", ++i);
    if (used.count(candidate) == 0) return candidate;
  }
}

Status KubernetesBackend::RemoveNode(const std::string& node) {
  if (!NodeKnown(node)) return absl::NotFoundError(StrCat("kubernetes: no node ", node, " in the last observation"));
  // Deleted since (the provider's own delete, say): that is what was asked.
  Status s = client_.DeleteNode(node);
  return absl::IsNotFound(s) ? OkStatus() : s;
}

}  // namespace tide::backends::kube
