// A small in-memory stand-in for the API server's answers to the verbs the
// Kubernetes backend uses (binding, eviction, node patch and delete, pod and
// Job delete, events), over typed objects it also hands out as the backend's
// ObjectSource. It records every call; pods listed in `budgeted` are
// refused eviction (429), as a PodDisruptionBudget would.
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_FAKE_API_TEST_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_FAKE_API_TEST_H_

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "backends/kubernetes/kube_backend.h"
#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::backends::kube::testing {

class FakeApi final : public Transport, public ObjectSource {
 public:
  ClusterObjects objects;
  std::set<std::string> budgeted;       // "ns/name" of pods a budget protects
  std::set<std::string> failing_binds;  // "ns/name" whose binding fails (500)
  bool down = false;                    // the API server does not answer
  std::vector<std::string> calls;       // "METHOD path", events excluded
  std::vector<std::string> changes;     // the calls that changed something (answered 2xx)
  std::vector<std::string> events;      // "reason: message"

  Result<ClusterObjects> Objects() override {
    if (down) return absl::UnavailableError("fake: the API server does not answer");
    return objects;
  }

  Result<Reply> Request(std::string_view method, std::string_view path, std::string_view body,
                        std::string_view content_type) override {
    Result<Reply> r = Answer(method, path, body, content_type);
    if (r.ok() && r->status / 100 == 2 && !calls.empty() && calls.back() == StrCat(method, " ", path)) {
      changes.push_back(calls.back());
    }
    return r;
  }

  Result<Reply> Answer(std::string_view method, std::string_view path, std::string_view body, std::string_view) {
    if (down) return absl::UnavailableError("fake: the API server does not answer");
    const std::vector<std::string_view> parts = Split(path.substr(0, path.find('?')), '/', true);
    if (method == "POST" && parts.size() == 5 && parts[4] == "events") {
      const auto e = nlohmann::json::parse(body);
      events.push_back(StrCat(e.value("reason", ""), ": ", e.value("message", "")));
      return Reply{201, "{}"};
    }
    calls.push_back(StrCat(method, " ", path));
    // /api/v1/namespaces/NS/pods/NAME[/SUB]
    if (parts.size() >= 6 && parts[2] == "namespaces" && parts[4] == "pods") {
      const std::string key = StrCat(parts[3], "/", parts[5]);
      Pod* pod = FindPod(parts[3], parts[5]);
      if (pod == nullptr) return Reply{404, NotFoundBody(key)};
      const std::string_view sub = parts.size() > 6 ? parts[6] : "";
      if (method == "POST" && sub == "binding") {
        if (failing_binds.count(key) > 0) return Reply{500, R"({"kind":"Status","message":"etcd timeout"})"};
        if (!pod->node_name.empty()) return Reply{409, R"({"kind":"Status","reason":"Conflict","message":"bound"})"};
        pod->node_name = nlohmann::json::parse(body)["target"]["name"].get<std::string>();
        return Reply{201, "{}"};
      }
      if (method == "POST" && sub == "eviction") {
        if (budgeted.count(key) > 0) {
          return Reply{429, R"({"kind":"Status","message":"Cannot evict pod as it would violate the pod's disruption budget."})"};
        }
        Erase(parts[3], parts[5]);
        return Reply{201, "{}"};
      }
      if (method == "PATCH" && sub == "status") {
        const nlohmann::json patch = nlohmann::json::parse(body);
        for (const auto& c : patch["status"]["conditions"]) {
          std::erase_if(pod->conditions, [&](const Condition& x) { return x.type == c.value("type", ""); });
          pod->conditions.push_back({c.value("type", ""), c.value("status", ""), c.value("reason", ""),
                                     c.value("message", "")});
        }
        return Reply{200, "{}"};
      }
      if (method == "DELETE" && sub.empty()) {
        Erase(parts[3], parts[5]);
        return Reply{200, "{}"};
      }
    }
    // /apis/batch/v1/namespaces/NS/jobs/NAME
    if (method == "DELETE" && parts.size() == 7 && parts[5] == "jobs") {
      std::erase_if(objects.pods, [&](const Pod& p) {
        const OwnerReference* c = p.Controller();
        return p.meta.namespace_name == parts[4] && c != nullptr && c->kind == "Job" && c->name == parts[6];
      });
      return Reply{200, "{}"};
    }
    // /api/v1/nodes/NAME
    if (parts.size() == 4 && parts[2] == "nodes") {
      auto it = std::find_if(objects.nodes.begin(), objects.nodes.end(),
                             [&](const Node& n) { return n.meta.name == parts[3]; });
      if (it == objects.nodes.end()) return Reply{404, NotFoundBody(std::string(parts[3]))};
      if (method == "DELETE") {
        objects.nodes.erase(it);
        return Reply{200, "{}"};
      }
      if (method == "PATCH") {
        const auto p = nlohmann::json::parse(body);
        if (p.contains("spec") && p["spec"].contains("unschedulable")) it->unschedulable = p["spec"]["unschedulable"];
        if (p.contains("metadata") && p["metadata"].contains("annotations")) {
          for (const auto& [k, v] : p["metadata"]["annotations"].items()) {
            if (v.is_null()) {
              it->meta.annotations.erase(k);
            } else {
              it->meta.annotations[k] = v.get<std::string>();
            }
          }
        }
        return Reply{200, nlohmann::json{{"kind", "Node"}, {"metadata", {{"name", it->meta.name}}}}.dump()};
      }
    }
    return Reply{404, NotFoundBody(std::string(path))};
  }

  Status Watch(std::string_view path, const LineHandler&, std::stop_token, const std::function<void()>&) override {
    return absl::UnimplementedError(StrCat("fake: no watch of ", path));
  }

  Pod* FindPod(std::string_view ns, std::string_view name) {
    for (Pod& p : objects.pods) {
      if (p.meta.namespace_name == ns && p.meta.name == name) return &p;
    }
    return nullptr;
  }

 private:
  static std::string NotFoundBody(const std::string& what) {
    return nlohmann::json{{"kind", "Status"}, {"reason", "NotFound"}, {"message", StrCat(what, " not found")}}.dump();
  }
  void Erase(std::string_view ns, std::string_view name) {
    std::erase_if(objects.pods, [&](const Pod& p) { return p.meta.namespace_name == ns && p.meta.name == name; });
  }
};

}  // namespace tide::backends::kube::testing

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_FAKE_API_TEST_H_
