// The API verbs tide needs, thin over a Transport (kube_http.h): reads
// (get, paged list with label selectors), nodes (create, patch, delete),
// pods (bind, evict, write PodScheduled, delete), Events, and a Job's
// parallelism. Each returns Status/Result with StatusFromReply's codes and a
// message naming the object; nothing throws. Thread-safe when the transport
// is (HttpTransport is). The client does not own the transport.
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_CLIENT_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_CLIENT_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/kubernetes/kube_http.h"
#include "backends/kubernetes/kube_objects.h"
#include "core/status.h"
#include "core/time.h"
#include "nlohmann/json.hpp"

namespace tide::backends::kube {

// Collection paths ("/api/v1/pods", "/api/v1/namespaces/ns/pods"): `group`
// is "" for the core group, else "apps/v1" style group/version.
std::string CollectionPath(std::string_view group_version, std::string_view resource, std::string_view namespace_name);
// Percent-encodes a query value (label selectors, continue tokens).
std::string QueryEscape(std::string_view value);

struct ListOptions {
  std::string label_selector;  // "a=b,c in (d)"; empty: everything
  std::string field_selector;
  int limit = 500;  // per page; 0: no paging
};

// One page: raw items, the list's resourceVersion and the continue token
// ("" on the last page).
struct ListPage {
  std::vector<nlohmann::json> items;
  std::string resource_version;
  std::string continue_token;
};

// Every page of a list, and the resourceVersion to watch from.
template <typename T>
struct List {
  std::vector<T> items;
  std::string resource_version;
};

// A Node object to create: what the kwok provider (or a test) posts.
struct NodeTemplate {
  std::string name;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<Taint> taints;
  std::string provider_id;
  // Resource name -> quantity, for both capacity and allocatable
  // ({"nvidia.com/gpu": "8", "cpu": "96", "memory": "1Ti", "pods": "110"}).
  std::map<std::string, std::string> capacity;
};

// A JSON merge patch of a Node. Absent fields are left alone.
struct NodePatch {
  std::optional<bool> unschedulable;  // the cordon
  // Labels and annotations to set; a nullopt value removes the key.
  std::map<std::string, std::optional<std::string>> labels;
  std::map<std::string, std::optional<std::string>> annotations;
  // Replaces the whole taint list (a merge patch cannot edit a list): read,
  // edit, then write with `resource_version` set so a concurrent change is
  // refused (Aborted) rather than lost.
  std::optional<std::vector<Taint>> taints;
  std::string resource_version;  // precondition when not empty
};

// A core/v1 Event about one object, as `kubectl describe` shows it.
struct EventSpec {
  std::string kind;  // "Pod", "Node", "Job"
  std::string api_version = "v1";
  std::string namespace_name;  // the object's; Events about nodes go to "default"
  std::string name;
  std::string uid;
  std::string reason;  // CamelCase: "ScaleUp", "Preempted"
  std::string message;
  bool warning = false;  // type Warning, else Normal
};

class Client {
 public:
  explicit Client(Transport* transport) : transport_(transport) {}

  // ---- Reads. `what` names the object in errors.
  Result<nlohmann::json> GetJson(std::string_view path, std::string_view what);
  Result<Pod> GetPod(std::string_view namespace_name, std::string_view name);
  Result<Node> GetNode(std::string_view name);
  // One page of `collection` (CollectionPath) from `continue_token`.
  Result<ListPage> ListOnePage(std::string_view collection, const ListOptions& options,
                               std::string_view continue_token = "");
  // Every page; the resourceVersion is the first page's (a consistent
  // snapshot). A continue token that expired mid-list is OutOfRange (IsGone):
  // list again from the start.
  Result<ListPage> ListAll(std::string_view collection, const ListOptions& options);
  Result<List<Pod>> ListPods(std::string_view namespace_name, const ListOptions& options = {});
  Result<List<Node>> ListNodes(const ListOptions& options = {});

  // ---- Nodes.
  // POST /api/v1/nodes. AlreadyExists when the name is taken.
  Result<Node> CreateNode(const NodeTemplate& node);
  // PATCH (merge patch). NotFound; Aborted when resource_version no longer matches.
  Result<Node> PatchNode(std::string_view name, const NodePatch& patch);
  // NotFound when it is already gone.
  Status DeleteNode(std::string_view name);

  // ---- Pods.
  // POST pods/NAME/binding. `uid` (optional) makes it a precondition: a pod
  // recreated under the same name is not bound by mistake (Aborted).
  // AlreadyExists/Aborted (409) when the pod is bound already.
  Status BindPod(std::string_view namespace_name, std::string_view name, std::string_view node,
                 std::string_view uid = "");
  // POST pods/NAME/eviction (policy/v1): the API server enforces every
  // PodDisruptionBudget. ResourceExhausted "pod ns/name: eviction refused by
  // a disruption budget: ..." on 429: try again later, never delete instead.
  // `grace` (optional) becomes deleteOptions.gracePeriodSeconds.
  Status EvictPod(std::string_view namespace_name, std::string_view name, std::optional<Duration> grace = {});
  // PATCH pods/NAME/status (strategic merge, conditions merge by type):
  // PodScheduled with `status` ("True"/"False"), reason and message.
  Status SetPodScheduled(std::string_view namespace_name, std::string_view name, std::string_view status,
                         std::string_view reason, std::string_view message, Timestamp now);
  // DELETE. Not for getting around a budget: that is what EvictPod is for.
  Status DeletePod(std::string_view namespace_name, std::string_view name, std::optional<Duration> grace = {});

  // ---- Events and Jobs.
  // POST a core/v1 Event (source and reportingComponent "tide") at `now`.
  Status PostEvent(const EventSpec& event, Timestamp now);
  // PATCH batch/v1 Job spec.parallelism (merge patch), for elastic resizes.
  Status SetJobParallelism(std::string_view namespace_name, std::string_view name, int32_t parallelism);
  // DELETE a Job and its pods (propagationPolicy Background).
  Status DeleteJob(std::string_view namespace_name, std::string_view name);

 private:
  // Sends one request and maps a non-2xx reply (StatusFromReply) naming `what`.
  Result<Reply> Call(std::string_view method, std::string_view path, std::string_view what,
                     const nlohmann::json* body = nullptr, std::string_view content_type = "application/json");
  Result<nlohmann::json> CallJson(std::string_view method, std::string_view path, std::string_view what,
                                  const nlohmann::json* body = nullptr,
                                  std::string_view content_type = "application/json");

  Transport* transport_;
};

}  // namespace tide::backends::kube

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_CLIENT_H_
