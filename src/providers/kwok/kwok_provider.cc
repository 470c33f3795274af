#include "providers/kwok/kwok_provider.h"

#include <algorithm>
#include <utility>

#include "backends/kubernetes/kube_translate.h"
#include "core/strings.h"

namespace tide::providers {
namespace {

namespace kube = backends::kube;

constexpr std::string_view kInstanceTypeLabel = "node.kubernetes.io/instance-type";
// A few tries of a read-modify-write that lost a race with another writer.
constexpr int kConflictRetries = 3;

bool Contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// The provider's reading of the client's codes (kwok_provider.h, "Errors"):
// what is not the caller's to fix is Unavailable, so it takes no destructive
// action and tries again next loop.
Status Mapped(const Status& s) {
  if (s.ok()) return s;
  const std::string_view m = Message(s);
  switch (s.code()) {
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return Status(s.code(), StrCat("kwok provider: ", m));
    case absl::StatusCode::kInvalidArgument:
      // 400 and 422 are the request's fault; the client's other
      // InvalidArguments are replies it could not read.
      if (Contains(m, ": HTTP 400") || Contains(m, ": HTTP 422")) {
        return absl::InvalidArgumentError(StrCat("kwok provider: ", m));
      }
      return absl::UnavailableError(StrCat("kwok provider: unreadable reply: ", m));
    default:
      return absl::UnavailableError(StrCat("kwok provider: ", m));
  }
}

// A Kubernetes label value: at most 63 characters, alphanumerics with '-',
// '_' and '.' inside.
bool IsLabelValue(std::string_view v) {
  if (v.size() > 63) return false;
  if (v.empty()) return true;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  if (!alnum(v.front()) || !alnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(), [&](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// An instance id is "kwok://NAME/UID": the Node's name, and the uid of the
// Node object made for this purchase. A later purchase may reuse the name;
// its uid differs, so an old id never names the new node.
std::string NodeNameOf(std::string_view id) {
  if (id.starts_with(kKwokIdPrefix)) id.remove_prefix(kKwokIdPrefix.size());
  return std::string(id.substr(0, id.find('/')));
}

std::string UidOf(std::string_view id) {
  const size_t slash = id.starts_with(kKwokIdPrefix) ? id.find('/', kKwokIdPrefix.size()) : id.find('/');
  return slash == std::string_view::npos ? std::string() : std::string(id.substr(slash + 1));
}

std::string InstanceId(const kube::Node& node) {
  return node.meta.uid.empty() ? StrCat(kKwokIdPrefix, node.meta.name)
                               : StrCat(kKwokIdPrefix, node.meta.name, "/", node.meta.uid);
}

const std::string* Find(const std::map<std::string, std::string>& m, std::string_view key) {
  auto it = m.find(std::string(key));
  return it == m.end() ? nullptr : &it->second;
}

// An RFC 3339 annotation of `node`; nullopt when absent, Unavailable (a
// reply tide cannot act on) when it is not a time.
Result<std::optional<Timestamp>> TimeAnnotation(const kube::Node& node, const std::string& key) {
  const std::string* text = Find(node.meta.annotations, key);
  if (text == nullptr) return std::optional<Timestamp>();
  Result<Timestamp> t = ParseTimestamp(*text);
  if (!t.ok()) {
    return absl::UnavailableError(
        StrCat("kwok provider: node ", node.meta.name, ": annotation ", key, ": '", *text, "' is not an RFC 3339 time"));
  }
  return std::optional<Timestamp>(*t);
}

}  // namespace

KwokProvider::KwokProvider(Options options, kube::Client* client)
    : options_(std::move(options)), client_(client) {
  const kube::TideNames names(options_.label_prefix);
  const std::string& p = options_.label_prefix;
  provider_label_ = StrCat(p, "/provider");
  pool_label_ = names.pool;
  key_annotation_ = StrCat(p, "/idempotency-key");
  created_annotation_ = StrCat(p, "/created");
  ready_at_annotation_ = StrCat(p, "/ready-at");
  interruption_taint_ = names.interruption;
  interruption_at_annotation_ = StrCat(p, "/interruption-at");
}

std::string KwokProvider::Selector() const { return StrCat(provider_label_, "=", kKwokProviderValue); }

Result<std::vector<kube::Node>> KwokProvider::Sweep(Timestamp now) {
  kube::ListOptions lo;
  lo.label_selector = Selector();
  Result<kube::List<kube::Node>> listed = client_->ListNodes(lo);
  if (!listed.ok()) return Mapped(listed.status());
  std::vector<kube::Node> out;
  out.reserve(listed->items.size());
  for (kube::Node& node : listed->items) {
    const std::string& name = node.meta.name;
    if (node.meta.deleted) {  // going already: nothing to start or end
      out.push_back(std::move(node));
      continue;
    }
    TIDE_ASSIGN_OR_RETURN(std::optional<Timestamp> interrupt_at, TimeAnnotation(node, interruption_at_annotation_));
    if (interrupt_at && *interrupt_at <= now) {
      // The notice has run out: the spot instance is taken.
      Status s = client_->DeleteNode(name);
      if (!s.ok() && !absl::IsNotFound(s)) return Mapped(s);
      continue;
    }
    out.push_back(std::move(node));
  }
  return out;
}

Result<Instance> KwokProvider::ToInstance(const kube::Node& node, Timestamp now) const {
  Instance i;
  i.id = InstanceId(node);
  i.node = node.meta.name;
  if (const std::string* pool = Find(node.meta.labels, pool_label_)) i.pool = *pool;
  if (const std::string* key = Find(node.meta.annotations, key_annotation_)) i.idempotency_key = *key;
  TIDE_ASSIGN_OR_RETURN(std::optional<Timestamp> created, TimeAnnotation(node, created_annotation_));
  i.created = created ? *created : node.meta.created;
  TIDE_ASSIGN_OR_RETURN(std::optional<Timestamp> ready_at, TimeAnnotation(node, ready_at_annotation_));
  if (node.meta.deleted) {
    i.state = "terminating";
  } else if (ready_at && *ready_at > now) {
    i.state = "pending";
  } else {
    i.state = "running";
  }
  return i;
}

Result<Instance> KwokProvider::Create(const CreateRequest& request, Timestamp now) {
  if (request.node.empty()) return absl::InvalidArgumentError("kwok provider: create: no node name");
  auto pool = options_.pools.find(request.pool);
  if (pool == options_.pools.end()) {
    return absl::InvalidArgumentError(
        StrCat("kwok provider: create node ", request.node, ": pool '", request.pool, "' is not configured"));
  }
  // No list of every node per create (that is what made 1,000 nodes slow):
  // a key seen on a node by the last List, or made here since, is looked up
  // by that node's name; a retry under the same name meets AlreadyExists
  // below, which finds it too.
  if (auto known = key_nodes_.find(request.idempotency_key);
      !request.idempotency_key.empty() && known != key_nodes_.end()) {
    Result<kube::Node> there = client_->GetNode(known->second);
    if (there.ok()) {
      const std::string* key = Find(there->meta.annotations, key_annotation_);
      if (key != nullptr && *key == request.idempotency_key) return ToInstance(*there, now);
    } else if (!absl::IsNotFound(there.status())) {
      return Mapped(there.status());
    }
  }
  const PoolOptions& po = pool->second;
  const Timestamp ready_at = now + std::max(Duration::zero(), request.boot_delay);
  kube::NodeTemplate t;
  t.name = request.node;
  t.labels = po.labels;
  t.labels[provider_label_] = std::string(kKwokProviderValue);
  t.labels[pool_label_] = request.pool;
  t.labels[std::string(kube::kCapacityTypeLabel)] = po.capacity_type;
  t.labels["type"] = "kwok";
  if (!request.instance_type.empty() && IsLabelValue(request.instance_type)) {
    t.labels[std::string(kInstanceTypeLabel)] = request.instance_type;
  }
  t.annotations[key_annotation_] = request.idempotency_key;
  t.annotations[created_annotation_] = FormatTimestamp(now);
  t.annotations[ready_at_annotation_] = FormatTimestamp(ready_at);
  t.annotations[std::string(kKwokNodeAnnotation)] = std::string(kKwokNodeValue);
  t.taints = po.taints;
  t.provider_id = StrCat(kKwokIdPrefix, request.node);
  t.capacity[std::string(kube::kGpuResource)] = StrCat(po.gpus);
  for (const auto& [profile, count] : po.mig) t.capacity[StrCat(kube::kMigResourcePrefix, profile)] = StrCat(count);
  t.capacity["cpu"] = StrCat(po.cpus);
  t.capacity["memory"] = StrCat(po.memory_gib, "Gi");
  t.capacity["pods"] = StrCat(po.max_pods);

  Result<kube::Node> made = client_->CreateNode(t);
  if (absl::IsAlreadyExists(made.status())) {
    // Made by a create whose reply was lost (same key: it is ours), or by
    // someone else (refused).
    Result<kube::Node> there = client_->GetNode(request.node);
    if (!there.ok()) return Mapped(there.status());
    const std::string* key = Find(there->meta.annotations, key_annotation_);
    const std::string* mine = Find(there->meta.labels, provider_label_);
    if (mine != nullptr && key != nullptr && *key == request.idempotency_key) return ToInstance(*there, now);
    return absl::AlreadyExistsError(
        StrCat("kwok provider: create node ", request.node, ": a node of that name exists ",
               mine == nullptr ? std::string("that the kwok provider did not make")
                               : StrCat("with idempotency key '", key ? *key : "", "', not '",
                                        request.idempotency_key, "'")));
  }
  if (!made.ok()) return Mapped(made.status());
  if (!request.idempotency_key.empty()) key_nodes_[request.idempotency_key] = made->meta.name;
  return ToInstance(*made, now);
}

Status KwokProvider::Delete(const std::string& instance_id, const std::string& idempotency_key, Timestamp now) {
  const std::string name = NodeNameOf(instance_id);
  if (name.empty()) return absl::InvalidArgumentError(StrCat("kwok provider: delete: '", instance_id, "' names no node"));
  // Only a node this provider made: an id must never take down a node that
  // joined some other way.
  Result<kube::Node> node = client_->GetNode(name);
  if (absl::IsNotFound(node.status())) return OkStatus();
  if (!node.ok()) return Mapped(node.status());
  // A node of the same name made by a later purchase: this instance is gone.
  if (const std::string uid = UidOf(instance_id); !uid.empty() && uid != node->meta.uid) return OkStatus();
  const std::string* mine = Find(node->meta.labels, provider_label_);
  if (mine == nullptr || *mine != kKwokProviderValue) {
    return absl::FailedPreconditionError(StrCat("kwok provider: delete node ", name, ": it has no label ",
                                                Selector(), "; the kwok provider did not make it"));
  }
  Status s = client_->DeleteNode(name);
  if (absl::IsNotFound(s)) return OkStatus();
  return Mapped(s);
}

Result<std::vector<Instance>> KwokProvider::List(Timestamp now) {
  TIDE_ASSIGN_OR_RETURN(std::vector<kube::Node> nodes, Sweep(now));
  key_nodes_.clear();
  for (const kube::Node& n : nodes) {
    if (const std::string* key = Find(n.meta.annotations, key_annotation_); key != nullptr && !key->empty()) {
      key_nodes_[*key] = n.meta.name;
    }
  }
  std::vector<Instance> out;
  out.reserve(nodes.size());
  for (const kube::Node& n : nodes) {
    TIDE_ASSIGN_OR_RETURN(Instance i, ToInstance(n, now));
    out.push_back(std::move(i));
  }
  return out;
}

Result<std::vector<Interruption>> KwokProvider::Interruptions(Timestamp now) {
  TIDE_ASSIGN_OR_RETURN(std::vector<kube::Node> nodes, Sweep(now));
  std::vector<Interruption> out;
  for (const kube::Node& n : nodes) {
    TIDE_ASSIGN_OR_RETURN(std::optional<Timestamp> at, TimeAnnotation(n, interruption_at_annotation_));
    if (at && *at > now) out.push_back({InstanceId(n), n.meta.name, *at});
  }
  return out;
}

Status KwokProvider::InjectInterruption(const std::string& node, Timestamp at) {
  Status last;
  for (int attempt = 0; attempt < kConflictRetries; ++attempt) {
    Result<kube::Node> n = client_->GetNode(node);
    if (absl::IsNotFound(n.status())) return absl::NotFoundError(StrCat("kwok provider: no node ", node, " to interrupt"));
    if (!n.ok()) return Mapped(n.status());
    kube::NodePatch patch;
    patch.annotations[interruption_at_annotation_] = FormatTimestamp(at);
    std::vector<kube::Taint> taints;
    for (const kube::Taint& t : n->taints) {
      if (t.key != interruption_taint_) taints.push_back(t);
    }
    taints.push_back({interruption_taint_, "", "NoSchedule"});
    patch.taints = std::move(taints);
    patch.resource_version = n->meta.resource_version;
    Result<kube::Node> patched = client_->PatchNode(node, patch);
    if (patched.ok()) return OkStatus();
    if (!absl::IsAborted(patched.status())) {
      return absl::IsNotFound(patched.status())
                 ? absl::NotFoundError(StrCat("kwok provider: no node ", node, " to interrupt"))
                 : Mapped(patched.status());
    }
    last = patched.status();
  }
  return Mapped(last);
}

}  // namespace tide::providers
