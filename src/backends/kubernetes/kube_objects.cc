#include "backends/kubernetes/kube_objects.h"

#include <limits>

#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::backends::kube {
namespace {

using json = nlohmann::json;

std::string_view TypeName(const json& j) { return j.type_name(); }

// Reads the fields of one object, naming it in every error.
class Fields {
 public:
  explicit Fields(std::string what) : what_(std::move(what)) {}
  void Rename(std::string what) { what_ = std::move(what); }

  Status Error(std::string_view field, std::string_view problem) const {
    return absl::InvalidArgumentError(StrCat(what_, ": ", field, ": ", problem));
  }
  // `s`'s message, prefixed with the object's name.
  Status Prefix(const Status& s) const { return absl::InvalidArgumentError(StrCat(what_, ": ", Message(s))); }
  Status WrongType(std::string_view field, std::string_view want, const json& got) const {
    return Error(field, StrCat("expected ", want, ", got ", TypeName(got)));
  }

  // The member `key` of `obj`, or nullptr when absent or null.
  static const json* Find(const json& obj, std::string_view key) {
    if (!obj.is_object()) return nullptr;
    auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }

  // An object member; nullptr when absent; error when not an object.
  Result<const json*> Object(const json& obj, std::string_view key, std::string_view field) const {
    const json* v = Find(obj, key);
    if (v != nullptr && !v->is_object()) return WrongType(field, "an object", *v);
    return v;
  }
  Result<const json*> Array(const json& obj, std::string_view key, std::string_view field) const {
    const json* v = Find(obj, key);
    if (v != nullptr && !v->is_array()) return WrongType(field, "a list", *v);
    return v;
  }
  Status String(const json& obj, std::string_view key, std::string_view field, std::string* out) const {
    const json* v = Find(obj, key);
    if (v == nullptr) return OkStatus();
    if (!v->is_string()) return WrongType(field, "a string", *v);
    *out = v->get<std::string>();
    return OkStatus();
  }
  Status Bool(const json& obj, std::string_view key, std::string_view field, bool* out) const {
    const json* v = Find(obj, key);
    if (v == nullptr) return OkStatus();
    if (!v->is_boolean()) return WrongType(field, "true or false", *v);
    *out = v->get<bool>();
    return OkStatus();
  }
  template <typename Int>
  Status Integer(const json& obj, std::string_view key, std::string_view field, Int* out) const {
    const json* v = Find(obj, key);
    if (v == nullptr) return OkStatus();
    if (!v->is_number_integer()) return WrongType(field, "an integer", *v);
    const int64_t x = v->get<int64_t>();
    if (x < std::numeric_limits<Int>::min() || x > std::numeric_limits<Int>::max()) {
      return Error(field, StrCat(x, " is out of range"));
    }
    *out = static_cast<Int>(x);
    return OkStatus();
  }
  Status Time(const json& obj, std::string_view key, std::string_view field, std::optional<Timestamp>* out) const {
    std::string text;
    TIDE_RETURN_IF_ERROR(String(obj, key, field, &text));
    if (text.empty()) return OkStatus();
    auto t = ParseTimestamp(text);
    if (!t.ok()) return Error(field, StrCat("'", text, "' is not an RFC 3339 time"));
    *out = *t;
    return OkStatus();
  }
  Status StringMap(const json& obj, std::string_view key, std::string_view field,
                   std::map<std::string, std::string>* out) const {
    TIDE_ASSIGN_OR_RETURN(const json* m, Object(obj, key, field));
    if (m == nullptr) return OkStatus();
    for (const auto& [k, v] : m->items()) {
      if (!v.is_string()) return WrongType(StrCat(field, "[", k, "]"), "a string", v);
      (*out)[k] = v.get<std::string>();
    }
    return OkStatus();
  }
  Status StringList(const json& obj, std::string_view key, std::string_view field,
                    std::vector<std::string>* out) const {
    TIDE_ASSIGN_OR_RETURN(const json* a, Array(obj, key, field));
    if (a == nullptr) return OkStatus();
    for (size_t i = 0; i < a->size(); ++i) {
      if (!(*a)[i].is_string()) return WrongType(StrCat(field, "[", i, "]"), "a string", (*a)[i]);
      out->push_back((*a)[i].get<std::string>());
    }
    return OkStatus();
  }

 private:
  std::string what_;
};

// Reads metadata and names the object in `f` (kind plus namespace/name).
Status ReadMeta(const json& object, std::string_view kind, Fields& f, ObjectMeta* m) {
  if (!object.is_object()) return f.WrongType("(object)", "an object", object);
  TIDE_ASSIGN_OR_RETURN(const json* md, f.Object(object, "metadata", "metadata"));
  if (md == nullptr) return f.Error("metadata", "missing");
  TIDE_RETURN_IF_ERROR(f.String(*md, "name", "metadata.name", &m->name));
  TIDE_RETURN_IF_ERROR(f.String(*md, "namespace", "metadata.namespace", &m->namespace_name));
  if (m->name.empty()) return f.Error("metadata.name", "missing");
  f.Rename(StrCat(kind, " ", Key(*m)));
  TIDE_RETURN_IF_ERROR(f.String(*md, "uid", "metadata.uid", &m->uid));
  TIDE_RETURN_IF_ERROR(f.String(*md, "resourceVersion", "metadata.resourceVersion", &m->resource_version));
  TIDE_RETURN_IF_ERROR(f.StringMap(*md, "labels", "metadata.labels", &m->labels));
  TIDE_RETURN_IF_ERROR(f.StringMap(*md, "annotations", "metadata.annotations", &m->annotations));
  std::optional<Timestamp> created;
  TIDE_RETURN_IF_ERROR(f.Time(*md, "creationTimestamp", "metadata.creationTimestamp", &created));
  if (created) m->created = *created;
  TIDE_RETURN_IF_ERROR(f.Time(*md, "deletionTimestamp", "metadata.deletionTimestamp", &m->deleted));
  TIDE_ASSIGN_OR_RETURN(const json* owners, f.Array(*md, "ownerReferences", "metadata.ownerReferences"));
  if (owners != nullptr) {
    for (size_t i = 0; i < owners->size(); ++i) {
      const std::string field = StrCat("metadata.ownerReferences[", i, "]");
      const json& o = (*owners)[i];
      if (!o.is_object()) return f.WrongType(field, "an object", o);
      OwnerReference r;
      TIDE_RETURN_IF_ERROR(f.String(o, "kind", StrCat(field, ".kind"), &r.kind));
      TIDE_RETURN_IF_ERROR(f.String(o, "name", StrCat(field, ".name"), &r.name));
      TIDE_RETURN_IF_ERROR(f.String(o, "uid", StrCat(field, ".uid"), &r.uid));
      TIDE_RETURN_IF_ERROR(f.Bool(o, "controller", StrCat(field, ".controller"), &r.controller));
      m->owners.push_back(std::move(r));
    }
  }
  return OkStatus();
}

// The nvidia.com/gpu and nvidia.com/mig-* entries of a resource list.
Status ReadGpus(const json& obj, std::string_view key, std::string_view field, const Fields& f, GpuResources* out) {
  TIDE_ASSIGN_OR_RETURN(const json* list, f.Object(obj, key, field));
  if (list == nullptr) return OkStatus();
  for (const auto& [name, q] : list->items()) {
    const bool gpu = name == kGpuResource;
    const bool mig = std::string_view(name).starts_with(kMigResourcePrefix);
    if (!gpu && !mig) continue;
    auto n = ParseCount(q, StrCat(field, "[", name, "]"));
    if (!n.ok()) return f.Prefix(n.status());
    if (gpu) {
      out->gpus = *n;
    } else {
      out->mig[name.substr(kMigResourcePrefix.size())] = *n;
    }
  }
  return OkStatus();
}

Status ReadConditions(const json& status, const Fields& f, std::vector<Condition>* out) {
  TIDE_ASSIGN_OR_RETURN(const json* list, f.Array(status, "conditions", "status.conditions"));
  if (list == nullptr) return OkStatus();
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string field = StrCat("status.conditions[", i, "]");
    const json& c = (*list)[i];
    if (!c.is_object()) return f.WrongType(field, "an object", c);
    Condition cond;
    TIDE_RETURN_IF_ERROR(f.String(c, "type", StrCat(field, ".type"), &cond.type));
    TIDE_RETURN_IF_ERROR(f.String(c, "status", StrCat(field, ".status"), &cond.status));
    TIDE_RETURN_IF_ERROR(f.String(c, "reason", StrCat(field, ".reason"), &cond.reason));
    TIDE_RETURN_IF_ERROR(f.String(c, "message", StrCat(field, ".message"), &cond.message));
    out->push_back(std::move(cond));
  }
  return OkStatus();
}

// Sums the GPU requests of `containers` (or takes their maximum, for init
// containers, which run one at a time).
Status ContainerGpus(const json& spec, std::string_view key, bool sum, const Fields& f, GpuResources* out) {
  TIDE_ASSIGN_OR_RETURN(const json* list, f.Array(spec, key, StrCat("spec.", key)));
  if (list == nullptr) return OkStatus();
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string field = StrCat("spec.", key, "[", i, "]");
    const json& c = (*list)[i];
    if (!c.is_object()) return f.WrongType(field, "an object", c);
    TIDE_ASSIGN_OR_RETURN(const json* res, f.Object(c, "resources", StrCat(field, ".resources")));
    if (res == nullptr) continue;
    GpuResources requests, limits;
    TIDE_RETURN_IF_ERROR(ReadGpus(*res, "requests", StrCat(field, ".resources.requests"), f, &requests));
    TIDE_RETURN_IF_ERROR(ReadGpus(*res, "limits", StrCat(field, ".resources.limits"), f, &limits));
    // Extended resources: requests default to limits.
    if (requests.gpus == 0) requests.gpus = limits.gpus;
    for (const auto& [p, n] : limits.mig) requests.mig.try_emplace(p, n);
    auto combine = [sum](int64_t a, int64_t b) { return sum ? a + b : std::max(a, b); };
    out->gpus = combine(out->gpus, requests.gpus);
    for (const auto& [p, n] : requests.mig) out->mig[p] = combine(out->mig[p], n);
  }
  return OkStatus();
}

Status ReadAffinity(const json& spec, const Fields& f, std::vector<NodeSelectorTerm>* out) {
  const char* kPath = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  TIDE_ASSIGN_OR_RETURN(const json* aff, f.Object(spec, "affinity", "spec.affinity"));
  if (aff == nullptr) return OkStatus();
  TIDE_ASSIGN_OR_RETURN(const json* na, f.Object(*aff, "nodeAffinity", "spec.affinity.nodeAffinity"));
  if (na == nullptr) return OkStatus();
  TIDE_ASSIGN_OR_RETURN(const json* req, f.Object(*na, "requiredDuringSchedulingIgnoredDuringExecution", kPath));
  if (req == nullptr) return OkStatus();
  TIDE_ASSIGN_OR_RETURN(const json* terms, f.Array(*req, "nodeSelectorTerms", StrCat(kPath, ".nodeSelectorTerms")));
  if (terms == nullptr) return OkStatus();
  for (size_t t = 0; t < terms->size(); ++t) {
    const std::string tf = StrCat(kPath, ".nodeSelectorTerms[", t, "]");
    const json& term = (*terms)[t];
    if (!term.is_object()) return f.WrongType(tf, "an object", term);
    NodeSelectorTerm out_term;
    for (const char* kind : {"matchExpressions", "matchFields"}) {
      TIDE_ASSIGN_OR_RETURN(const json* reqs, f.Array(term, kind, StrCat(tf, ".", kind)));
      if (reqs == nullptr) continue;
      for (size_t i = 0; i < reqs->size(); ++i) {
        const std::string rf = StrCat(tf, ".", kind, "[", i, "]");
        const json& r = (*reqs)[i];
        if (!r.is_object()) return f.WrongType(rf, "an object", r);
        NodeSelectorRequirement q;
        q.on_field = std::string_view(kind) == "matchFields";
        TIDE_RETURN_IF_ERROR(f.String(r, "key", StrCat(rf, ".key"), &q.key));
        TIDE_RETURN_IF_ERROR(f.String(r, "operator", StrCat(rf, ".operator"), &q.op));
        TIDE_RETURN_IF_ERROR(f.StringList(r, "values", StrCat(rf, ".values"), &q.values));
        out_term.push_back(std::move(q));
      }
    }
    out->push_back(std::move(out_term));
  }
  return OkStatus();
}

Status ReadTolerations(const json& spec, const Fields& f, std::vector<Toleration>* out) {
  TIDE_ASSIGN_OR_RETURN(const json* list, f.Array(spec, "tolerations", "spec.tolerations"));
  if (list == nullptr) return OkStatus();
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string field = StrCat("spec.tolerations[", i, "]");
    const json& t = (*list)[i];
    if (!t.is_object()) return f.WrongType(field, "an object", t);
    Toleration tol;
    TIDE_RETURN_IF_ERROR(f.String(t, "key", StrCat(field, ".key"), &tol.key));
    TIDE_RETURN_IF_ERROR(f.String(t, "operator", StrCat(field, ".operator"), &tol.op));
    TIDE_RETURN_IF_ERROR(f.String(t, "value", StrCat(field, ".value"), &tol.value));
    TIDE_RETURN_IF_ERROR(f.String(t, "effect", StrCat(field, ".effect"), &tol.effect));
    if (Fields::Find(t, "tolerationSeconds") != nullptr) {
      int64_t s = 0;
      TIDE_RETURN_IF_ERROR(f.Integer(t, "tolerationSeconds", StrCat(field, ".tolerationSeconds"), &s));
      tol.toleration_seconds = s;
    }
    out->push_back(std::move(tol));
  }
  return OkStatus();
}

Result<json> ParseText(std::string_view text, std::string_view kind) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return absl::InvalidArgumentError(StrCat(kind, ": reply is not JSON"));
  return j;
}

}  // namespace

std::string Key(const ObjectMeta& meta) {
  return meta.namespace_name.empty() ? meta.name : StrCat(meta.namespace_name, "/", meta.name);
}

const Condition* Pod::FindCondition(std::string_view type) const {
  for (const Condition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

const OwnerReference* Pod::Controller() const {
  for (const OwnerReference& o : meta.owners) {
    if (o.controller) return &o;
  }
  return nullptr;
}

Result<int64_t> ParseCount(const json& q, std::string_view what) {
  if (q.is_number_integer()) {
    if (q.get<int64_t>() < 0) return absl::InvalidArgumentError(StrCat(what, ": negative count ", q.dump()));
    return q.get<int64_t>();
  }
  if (!q.is_string()) return absl::InvalidArgumentError(StrCat(what, ": expected a whole count, got ", q.dump()));
  std::string_view s = q.get_ref<const std::string&>();
  int64_t scale = 1;
  if (!s.empty()) {
    switch (s.back()) {
      case 'k': scale = 1000; break;
      case 'M': scale = 1000 * 1000; break;
      case 'G': scale = 1000 * 1000 * 1000; break;
      default: break;
    }
    if (scale != 1) s.remove_suffix(1);
  }
  int64_t n = 0;
  bool digits = !s.empty() && s.size() < 16;
  for (char c : s) {
    if (c < '0' || c > '9') digits = false;
    if (digits) n = n * 10 + (c - '0');
  }
  if (!digits) {
    return absl::InvalidArgumentError(
        StrCat(what, ": '", q.get<std::string>(), "' is not a whole count (GPUs and MIG slices cannot be fractions)"));
  }
  return n * scale;
}

Result<Pod> ParsePod(const json& object) {
  Pod p;
  Fields f("pod");
  TIDE_RETURN_IF_ERROR(ReadMeta(object, "pod", f, &p.meta));
  TIDE_ASSIGN_OR_RETURN(const json* spec, f.Object(object, "spec", "spec"));
  if (spec != nullptr) {
    TIDE_RETURN_IF_ERROR(f.String(*spec, "schedulerName", "spec.schedulerName", &p.scheduler_name));
    TIDE_RETURN_IF_ERROR(f.String(*spec, "nodeName", "spec.nodeName", &p.node_name));
    TIDE_RETURN_IF_ERROR(f.Integer(*spec, "priority", "spec.priority", &p.priority));
    TIDE_RETURN_IF_ERROR(f.String(*spec, "priorityClassName", "spec.priorityClassName", &p.priority_class_name));
    TIDE_RETURN_IF_ERROR(ContainerGpus(*spec, "containers", true, f, &p.requests));
    GpuResources init;
    TIDE_RETURN_IF_ERROR(ContainerGpus(*spec, "initContainers", false, f, &init));
    p.requests.gpus = std::max(p.requests.gpus, init.gpus);
    for (const auto& [prof, n] : init.mig) p.requests.mig[prof] = std::max(p.requests.mig[prof], n);
    TIDE_RETURN_IF_ERROR(ReadTolerations(*spec, f, &p.tolerations));
    TIDE_RETURN_IF_ERROR(f.StringMap(*spec, "nodeSelector", "spec.nodeSelector", &p.node_selector));
    TIDE_RETURN_IF_ERROR(ReadAffinity(*spec, f, &p.required_affinity));
    TIDE_ASSIGN_OR_RETURN(const json* gates, f.Array(*spec, "schedulingGates", "spec.schedulingGates"));
    if (gates != nullptr) {
      for (size_t i = 0; i < gates->size(); ++i) {
        std::string name;
        TIDE_RETURN_IF_ERROR(f.String((*gates)[i], "name", StrCat("spec.schedulingGates[", i, "].name"), &name));
        p.scheduling_gates.push_back(std::move(name));
      }
    }
  }
  TIDE_ASSIGN_OR_RETURN(const json* status, f.Object(object, "status", "status"));
  if (status != nullptr) {
    TIDE_RETURN_IF_ERROR(f.String(*status, "phase", "status.phase", &p.phase));
    TIDE_RETURN_IF_ERROR(ReadConditions(*status, f, &p.conditions));
    TIDE_RETURN_IF_ERROR(f.Time(*status, "startTime", "status.startTime", &p.started));
  }
  return p;
}

Result<Node> ParseNode(const json& object) {
  Node n;
  Fields f("node");
  TIDE_RETURN_IF_ERROR(ReadMeta(object, "node", f, &n.meta));
  TIDE_ASSIGN_OR_RETURN(const json* spec, f.Object(object, "spec", "spec"));
  if (spec != nullptr) {
    TIDE_RETURN_IF_ERROR(f.String(*spec, "providerID", "spec.providerID", &n.provider_id));
    TIDE_RETURN_IF_ERROR(f.Bool(*spec, "unschedulable", "spec.unschedulable", &n.unschedulable));
    TIDE_ASSIGN_OR_RETURN(const json* taints, f.Array(*spec, "taints", "spec.taints"));
    if (taints != nullptr) {
      for (size_t i = 0; i < taints->size(); ++i) {
        const std::string field = StrCat("spec.taints[", i, "]");
        const json& t = (*taints)[i];
        if (!t.is_object()) return f.WrongType(field, "an object", t);
        Taint taint;
        TIDE_RETURN_IF_ERROR(f.String(t, "key", StrCat(field, ".key"), &taint.key));
        TIDE_RETURN_IF_ERROR(f.String(t, "value", StrCat(field, ".value"), &taint.value));
        TIDE_RETURN_IF_ERROR(f.String(t, "effect", StrCat(field, ".effect"), &taint.effect));
        n.taints.push_back(std::move(taint));
      }
    }
  }
  TIDE_ASSIGN_OR_RETURN(const json* status, f.Object(object, "status", "status"));
  if (status != nullptr) {
    TIDE_RETURN_IF_ERROR(ReadGpus(*status, "capacity", "status.capacity", f, &n.capacity));
    TIDE_RETURN_IF_ERROR(ReadGpus(*status, "allocatable", "status.allocatable", f, &n.allocatable));
    std::vector<Condition> conditions;
    TIDE_RETURN_IF_ERROR(ReadConditions(*status, f, &conditions));
    for (Condition& c : conditions) {
      if (c.type == "Ready") n.ready = std::move(c);
    }
  }
  return n;
}

Result<PodDisruptionBudget> ParsePodDisruptionBudget(const json& object) {
  PodDisruptionBudget b;
  Fields f("poddisruptionbudget");
  TIDE_RETURN_IF_ERROR(ReadMeta(object, "poddisruptionbudget", f, &b.meta));
  TIDE_ASSIGN_OR_RETURN(const json* spec, f.Object(object, "spec", "spec"));
  if (spec != nullptr) {
    TIDE_ASSIGN_OR_RETURN(const json* sel, f.Object(*spec, "selector", "spec.selector"));
    if (sel != nullptr) {
      TIDE_RETURN_IF_ERROR(f.StringMap(*sel, "matchLabels", "spec.selector.matchLabels", &b.match_labels));
      TIDE_ASSIGN_OR_RETURN(const json* exprs, f.Array(*sel, "matchExpressions", "spec.selector.matchExpressions"));
      b.has_match_expressions = exprs != nullptr && !exprs->empty();
    }
  }
  TIDE_ASSIGN_OR_RETURN(const json* status, f.Object(object, "status", "status"));
  if (status != nullptr) {
    TIDE_RETURN_IF_ERROR(f.Integer(*status, "disruptionsAllowed", "status.disruptionsAllowed", &b.disruptions_allowed));
    TIDE_RETURN_IF_ERROR(f.Integer(*status, "currentHealthy", "status.currentHealthy", &b.current_healthy));
    TIDE_RETURN_IF_ERROR(f.Integer(*status, "desiredHealthy", "status.desiredHealthy", &b.desired_healthy));
  }
  return b;
}

Result<PriorityClass> ParsePriorityClass(const json& object) {
  PriorityClass c;
  Fields f("priorityclass");
  TIDE_RETURN_IF_ERROR(ReadMeta(object, "priorityclass", f, &c.meta));
  TIDE_RETURN_IF_ERROR(f.Integer(object, "value", "value", &c.value));
  TIDE_RETURN_IF_ERROR(f.String(object, "preemptionPolicy", "preemptionPolicy", &c.preemption_policy));
  TIDE_RETURN_IF_ERROR(f.Bool(object, "globalDefault", "globalDefault", &c.global_default));
  return c;
}

Result<PodGroup> ParsePodGroup(const json& object) {
  PodGroup g;
  Fields f("podgroup");
  TIDE_RETURN_IF_ERROR(ReadMeta(object, "podgroup", f, &g.meta));
  TIDE_ASSIGN_OR_RETURN(const json* spec, f.Object(object, "spec", "spec"));
  if (spec != nullptr) TIDE_RETURN_IF_ERROR(f.Integer(*spec, "minMember", "spec.minMember", &g.min_member));
  return g;
}

Result<Pod> ParsePodText(std::string_view text) {
  TIDE_ASSIGN_OR_RETURN(json j, ParseText(text, "pod"));
  return ParsePod(j);
}

Result<Node> ParseNodeText(std::string_view text) {
  TIDE_ASSIGN_OR_RETURN(json j, ParseText(text, "node"));
  return ParseNode(j);
}

}  // namespace tide::backends::kube
