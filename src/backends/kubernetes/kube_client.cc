#include "backends/kubernetes/kube_client.h"

#include "core/strings.h"

namespace tide::backends::kube {
namespace {

using json = nlohmann::json;

constexpr std::string_view kMergePatch = "application/merge-patch+json";
constexpr std::string_view kStrategicPatch = "application/strategic-merge-patch+json";

std::string PodPath(std::string_view ns, std::string_view name, std::string_view sub = "") {
  return StrCat("/api/v1/namespaces/", ns, "/pods/", name, sub.empty() ? "" : "/", sub);
}
std::string PodWhat(std::string_view ns, std::string_view name) { return StrCat("pod ", ns, "/", name); }

json TaintsJson(const std::vector<Taint>& taints) {
  json list = json::array();
  for (const Taint& t : taints) {
    json j = {{"key", t.key}, {"effect", t.effect}};
    if (!t.value.empty()) j["value"] = t.value;
    list.push_back(std::move(j));
  }
  return list;
}

json Patchable(const std::map<std::string, std::optional<std::string>>& m) {
  json out = json::object();
  for (const auto& [k, v] : m) out[k] = v ? json(*v) : json(nullptr);
  return out;
}

// Parses each raw item of a list with `parse`.
template <typename T, typename Parse>
Result<List<T>> Typed(Result<ListPage> page, Parse parse) {
  if (!page.ok()) return page.status();
  List<T> out;
  out.resource_version = page->resource_version;
  out.items.reserve(page->items.size());
  for (const json& item : page->items) {
    TIDE_ASSIGN_OR_RETURN(T t, parse(item));
    out.items.push_back(std::move(t));
  }
  return out;
}

}  // namespace

std::string CollectionPath(std::string_view group_version, std::string_view resource, std::string_view ns) {
  std::string path = group_version.empty() ? "/api/v1" : StrCat("/apis/", group_version);
  if (!ns.empty()) StrAppend(&path, "/namespaces/", ns);
  StrAppend(&path, "/", resource);
  return path;
}

std::string QueryEscape(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

Result<Reply> Client::Call(std::string_view method, std::string_view path, std::string_view what, const json* body,
                           std::string_view content_type) {
  const std::string text = body != nullptr ? body->dump() : std::string();
  TIDE_ASSIGN_OR_RETURN(Reply reply, transport_->Request(method, path, text, content_type));
  TIDE_RETURN_IF_ERROR(StatusFromReply(reply, what));
  return reply;
}

Result<json> Client::CallJson(std::string_view method, std::string_view path, std::string_view what,
                              const json* body, std::string_view content_type) {
  TIDE_ASSIGN_OR_RETURN(Reply reply, Call(method, path, what, body, content_type));
  json j = json::parse(reply.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(
        StrCat(what, ": HTTP ", reply.status, " but the reply is not a JSON object: ",
               Shown(StripWhitespace(reply.body), 120)));
  }
  return j;
}

Result<json> Client::GetJson(std::string_view path, std::string_view what) { return CallJson("GET", path, what); }

Result<Pod> Client::GetPod(std::string_view ns, std::string_view name) {
  TIDE_ASSIGN_OR_RETURN(json j, GetJson(PodPath(ns, name), PodWhat(ns, name)));
  return ParsePod(j);
}

Result<Node> Client::GetNode(std::string_view name) {
  TIDE_ASSIGN_OR_RETURN(json j, GetJson(StrCat("/api/v1/nodes/", name), StrCat("node ", name)));
  return ParseNode(j);
}

Result<ListPage> Client::ListOnePage(std::string_view collection, const ListOptions& options,
                                     std::string_view continue_token) {
  std::vector<std::string> query;
  if (options.limit > 0) query.push_back(StrCat("limit=", options.limit));
  if (!continue_token.empty()) query.push_back(StrCat("continue=", QueryEscape(continue_token)));
  if (!options.label_selector.empty()) query.push_back(StrCat("labelSelector=", QueryEscape(options.label_selector)));
  if (!options.field_selector.empty()) query.push_back(StrCat("fieldSelector=", QueryEscape(options.field_selector)));
  const std::string path = query.empty() ? std::string(collection) : StrCat(collection, "?", StrJoin(query, "&"));
  const std::string what = StrCat("list ", collection);
  TIDE_ASSIGN_OR_RETURN(json j, CallJson("GET", path, what));
  ListPage page;
  auto items = j.find("items");
  if (items != j.end() && !items->is_null()) {
    if (!items->is_array()) return absl::InvalidArgumentError(StrCat(what, ": items: expected a list"));
    page.items.assign(items->begin(), items->end());
  }
  if (auto md = j.find("metadata"); md != j.end() && md->is_object()) {
    if (auto rv = md->find("resourceVersion"); rv != md->end() && rv->is_string()) page.resource_version = *rv;
    if (auto c = md->find("continue"); c != md->end() && c->is_string()) page.continue_token = *c;
  }
  if (page.resource_version.empty()) {
    return absl::InvalidArgumentError(StrCat(what, ": metadata.resourceVersion: missing"));
  }
  return page;
}

Result<ListPage> Client::ListAll(std::string_view collection, const ListOptions& options) {
  TIDE_ASSIGN_OR_RETURN(ListPage all, ListOnePage(collection, options));
  std::string next = std::move(all.continue_token);
  all.continue_token.clear();
  while (!next.empty()) {
    TIDE_ASSIGN_OR_RETURN(ListPage page, ListOnePage(collection, options, next));
    for (json& item : page.items) all.items.push_back(std::move(item));
    // A server that hands back the token it was given would be listed for
    // ever, the items piling up (found by fuzzing): an error instead, and
    // the informer retries with its back-off.
    if (page.continue_token == next) {
      return absl::UnavailableError(
          StrCat("list ", collection, ": the server gave the same continue token twice; the list does not end"));
    }
    next = std::move(page.continue_token);
  }
  return all;
}

Result<List<Pod>> Client::ListPods(std::string_view ns, const ListOptions& options) {
  return Typed<Pod>(ListAll(CollectionPath("", "pods", ns), options), [](const json& j) { return ParsePod(j); });
}

Result<List<Node>> Client::ListNodes(const ListOptions& options) {
  return Typed<Node>(ListAll(CollectionPath("", "nodes", ""), options), [](const json& j) { return ParseNode(j); });
}

Result<Node> Client::CreateNode(const NodeTemplate& node) {
  json resources = json::object();
  for (const auto& [k, v] : node.capacity) resources[k] = v;
  json body = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", node.name}, {"labels", node.labels}, {"annotations", node.annotations}}},
               {"spec", json::object()},
               {"status", {{"capacity", resources}, {"allocatable", resources}}}};
  if (!node.provider_id.empty()) body["spec"]["providerID"] = node.provider_id;
  if (!node.taints.empty()) body["spec"]["taints"] = TaintsJson(node.taints);
  TIDE_ASSIGN_OR_RETURN(json j, CallJson("POST", "/api/v1/nodes", StrCat("create node ", node.name), &body));
  return ParseNode(j);
}

Result<Node> Client::PatchNode(std::string_view name, const NodePatch& patch) {
  json body = json::object();
  if (patch.unschedulable) body["spec"]["unschedulable"] = *patch.unschedulable;
  if (patch.taints) body["spec"]["taints"] = TaintsJson(*patch.taints);
  if (!patch.labels.empty()) body["metadata"]["labels"] = Patchable(patch.labels);
  if (!patch.annotations.empty()) body["metadata"]["annotations"] = Patchable(patch.annotations);
  if (!patch.resource_version.empty()) body["metadata"]["resourceVersion"] = patch.resource_version;
  TIDE_ASSIGN_OR_RETURN(json j, CallJson("PATCH", StrCat("/api/v1/nodes/", name), StrCat("patch node ", name), &body,
                                         kMergePatch));
  return ParseNode(j);
}

Status Client::DeleteNode(std::string_view name) {
  return Call("DELETE", StrCat("/api/v1/nodes/", name), StrCat("delete node ", name)).status();
}

Status Client::BindPod(std::string_view ns, std::string_view name, std::string_view node, std::string_view uid) {
  json meta = {{"name", name}, {"namespace", ns}};
  if (!uid.empty()) meta["uid"] = uid;
  json body = {{"apiVersion", "v1"},
               {"kind", "Binding"},
               {"metadata", meta},
               {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}};
  return Call("POST", PodPath(ns, name, "binding"), StrCat("bind ", PodWhat(ns, name), " to node ", node), &body)
      .status();
}

Status Client::EvictPod(std::string_view ns, std::string_view name, std::optional<Duration> grace) {
  json body = {{"apiVersion", "policy/v1"}, {"kind", "Eviction"}, {"metadata", {{"name", name}, {"namespace", ns}}}};
  if (grace) body["deleteOptions"] = {{"gracePeriodSeconds", grace->count()}};
  auto reply = Call("POST", PodPath(ns, name, "eviction"), StrCat("evict ", PodWhat(ns, name)), &body);
  if (absl::IsResourceExhausted(reply.status())) {
    return absl::ResourceExhaustedError(
        StrCat(PodWhat(ns, name), ": eviction refused by a disruption budget (try again later): ",
               Message(reply.status())));
  }
  return reply.status();
}

Status Client::SetPodScheduled(std::string_view ns, std::string_view name, std::string_view status,
                               std::string_view reason, std::string_view message, Timestamp now) {
  json cond = {{"type", "PodScheduled"},
               {"status", status},
               {"reason", reason},
               {"message", message},
               {"lastTransitionTime", FormatTimestamp(now)}};
  json body = {{"status", {{"conditions", json::array({cond})}}}};
  return Call("PATCH", PodPath(ns, name, "status"), StrCat("set PodScheduled of ", PodWhat(ns, name)), &body,
              kStrategicPatch)
      .status();
}

Status Client::DeletePod(std::string_view ns, std::string_view name, std::optional<Duration> grace) {
  std::string path = PodPath(ns, name);
  if (grace) StrAppend(&path, "?gracePeriodSeconds=", grace->count());
  return Call("DELETE", path, StrCat("delete ", PodWhat(ns, name))).status();
}

Status Client::PostEvent(const EventSpec& e, Timestamp now) {
  const std::string ns = e.namespace_name.empty() ? "default" : e.namespace_name;
  json involved = {{"kind", e.kind}, {"apiVersion", e.api_version}, {"name", e.name}};
  if (!e.namespace_name.empty()) involved["namespace"] = e.namespace_name;
  if (!e.uid.empty()) involved["uid"] = e.uid;
  const std::string t = FormatTimestamp(now);
  json body = {{"apiVersion", "v1"},
               {"kind", "Event"},
               {"metadata", {{"generateName", StrCat(e.name, ".")}, {"namespace", ns}}},
               {"involvedObject", involved},
               {"reason", e.reason},
               {"message", e.message},
               {"type", e.warning ? "Warning" : "Normal"},
               {"source", {{"component", "tide"}}},
               {"reportingComponent", "tide"},
               {"reportingInstance", "tide"},
               {"firstTimestamp", t},
               {"lastTimestamp", t},
               {"count", 1}};
  return Call("POST", StrCat("/api/v1/namespaces/", ns, "/events"),
              StrCat("post event ", e.reason, " about ", ToLower(e.kind), " ", e.namespace_name,
                     e.namespace_name.empty() ? "" : "/", e.name),
              &body)
      .status();
}

Status Client::SetJobParallelism(std::string_view ns, std::string_view name, int32_t parallelism) {
  json body = {{"spec", {{"parallelism", parallelism}}}};
  return Call("PATCH", StrCat("/apis/batch/v1/namespaces/", ns, "/jobs/", name),
              StrCat("set parallelism of job ", ns, "/", name, " to ", parallelism), &body, kMergePatch)
      .status();
}

Status Client::DeleteJob(std::string_view ns, std::string_view name) {
  return Call("DELETE", StrCat("/apis/batch/v1/namespaces/", ns, "/jobs/", name, "?propagationPolicy=Background"),
              StrCat("delete job ", ns, "/", name))
      .status();
}

}  // namespace tide::backends::kube
