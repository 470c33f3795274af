// An in-memory Nodes API: a Transport that keeps Node objects and answers
// POST, GET, list (with an equality-based labelSelector), PATCH (JSON merge
// patch, with a metadata.resourceVersion precondition) and DELETE of
// /api/v1/nodes the way kube-apiserver does, Status bodies and codes
// included. What the kwok provider's unit tests and the provider contract
// suite run on, where a recorded-reply FakeTransport would have to know the
// order of every call.
//
// Fault injection: `down` makes every request fail as a refused connection
// (no reply); `injected` replies are served first, whatever was asked. A
// node with metadata.finalizers is not removed by DELETE: it gets a
// deletionTimestamp (terminating) until FinishDeletion. Not thread-safe.
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_FAKE_NODES_TEST_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_FAKE_NODES_TEST_H_

#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "backends/kubernetes/kube_http.h"
#include "core/strings.h"
#include "core/time.h"
#include "nlohmann/json.hpp"

namespace tide::backends::kube::testing {

class FakeNodesApi final : public Transport {
 public:
  struct Call {
    std::string method, path, body, content_type;
  };

  bool down = false;                   // every request: Unavailable, no reply
  std::deque<Result<Reply>> injected;  // served before the real answer
  std::vector<Call> calls;
  Timestamp clock = FromUnixSeconds(1767571200);  // creationTimestamp / deletionTimestamp

  // The stored node, or null.
  const nlohmann::json* Get(const std::string& name) const {
    auto it = nodes_.find(name);
    return it == nodes_.end() ? nullptr : &it->second;
  }
  size_t size() const { return nodes_.size(); }
  // Puts a node as it is (a test's own object, or one made "by someone else").
  void Put(nlohmann::json node) {
    const std::string name = node["metadata"]["name"].get<std::string>();
    Stamp(&node, /*created=*/true);
    nodes_[name] = std::move(node);
  }
  // Ends a terminating node's deletion (its finalizers done).
  void FinishDeletion(const std::string& name) { nodes_.erase(name); }
  int Count(std::string_view method) const {
    int n = 0;
    for (const Call& c : calls) n += c.method == method ? 1 : 0;
    return n;
  }

  Result<Reply> Request(std::string_view method, std::string_view path_with_query, std::string_view body,
                        std::string_view content_type) override {
    calls.push_back({std::string(method), std::string(path_with_query), std::string(body), std::string(content_type)});
    if (down) return absl::UnavailableError("API server https://127.0.0.1:1: connection refused (fake)");
    if (!injected.empty()) {
      Result<Reply> r = std::move(injected.front());
      injected.pop_front();
      return r;
    }
    std::string_view path = path_with_query;
    std::string_view query;
    if (size_t q = path.find('?'); q != std::string_view::npos) {
      query = path.substr(q + 1);
      path = path.substr(0, q);
    }
    constexpr std::string_view kCollection = "/api/v1/nodes";
    if (path == kCollection) {
      if (method == "GET") return ListNodes(query);
      if (method == "POST") return CreateNode(body);
      return Error(405, "MethodNotAllowed", StrCat("method ", method, " not allowed on nodes"));
    }
    if (path.starts_with(StrCat(kCollection, "/"))) {
      const std::string name(path.substr(kCollection.size() + 1));
      auto it = nodes_.find(name);
      if (it == nodes_.end()) return Error(404, "NotFound", StrCat("nodes \"", name, "\" not found"));
      if (method == "GET") return Ok(200, it->second);
      if (method == "PATCH") return PatchNode(&it->second, body, content_type);
      if (method == "DELETE") return DeleteNode(it);
      return Error(405, "MethodNotAllowed", StrCat("method ", method, " not allowed on a node"));
    }
    return Error(404, "NotFound", "the server could not find the requested resource");
  }

  Status Watch(std::string_view path_with_query, const LineHandler&, std::stop_token,
               const std::function<void()>&) override {
    return absl::UnimplementedError(StrCat("FakeNodesApi does not watch: ", path_with_query));
  }

 private:
  static Reply Ok(int status, const nlohmann::json& j) { return Reply{status, j.dump()}; }
  static Reply Error(int code, std::string_view reason, std::string_view message) {
    const nlohmann::json j = {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", nlohmann::json::object()},
                              {"status", "Failure"}, {"message", message}, {"reason", reason}, {"code", code}};
    return Reply{code, j.dump()};
  }

  void Stamp(nlohmann::json* node, bool created) {
    auto& md = (*node)["metadata"];
    md["resourceVersion"] = StrCat(++version_);
    if (created) {
      md["uid"] = StrCat("uid-", version_);
      md["creationTimestamp"] = FormatTimestamp(clock);
    }
  }

  static std::string Unescape(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '%' && i + 2 < s.size()) {
        out.push_back(static_cast<char>(std::stoi(std::string(s.substr(i + 1, 2)), nullptr, 16)));
        i += 2;
      } else {
        out.push_back(s[i] == '+' ? ' ' : s[i]);
      }
    }
    return out;
  }

  // Equality-based selectors only: k=v, k==v, k!=v, k, !k (comma = and).
  static bool Matches(const nlohmann::json& node, const std::string& selector) {
    const nlohmann::json* labels = nullptr;
    if (auto md = node.find("metadata"); md != node.end()) {
      if (auto l = md->find("labels"); l != md->end() && l->is_object()) labels = &*l;
    }
    auto value = [&](const std::string& k) -> const nlohmann::json* {
      if (labels == nullptr) return nullptr;
      auto it = labels->find(k);
      return it == labels->end() ? nullptr : &*it;
    };
    for (std::string_view req : StrSplitView(selector, ',')) {
      if (req.empty()) continue;
      if (size_t ne = req.find("!="); ne != std::string_view::npos) {
        const nlohmann::json* v = value(std::string(req.substr(0, ne)));
        if (v != nullptr && *v == std::string(req.substr(ne + 2))) return false;
      } else if (size_t eq = req.find('='); eq != std::string_view::npos) {
        std::string_view want = req.substr(eq + 1);
        if (want.starts_with("=")) want.remove_prefix(1);
        const nlohmann::json* v = value(std::string(req.substr(0, eq)));
        if (v == nullptr || *v != std::string(want)) return false;
      } else if (req.starts_with("!")) {
        if (value(std::string(req.substr(1))) != nullptr) return false;
      } else if (value(std::string(req)) == nullptr) {
        return false;
      }
    }
    return true;
  }

  static std::vector<std::string_view> StrSplitView(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    size_t start = 0;
    for (size_t i = 0; i <= s.size(); ++i) {
      if (i == s.size() || s[i] == sep) {
        out.push_back(s.substr(start, i - start));
        start = i + 1;
      }
    }
    return out;
  }

  Result<Reply> ListNodes(std::string_view query) {
    std::string selector;
    for (std::string_view kv : StrSplitView(query, '&')) {
      if (kv.starts_with("labelSelector=")) selector = Unescape(kv.substr(std::string_view("labelSelector=").size()));
    }
    nlohmann::json items = nlohmann::json::array();
    for (const auto& [name, node] : nodes_) {
      if (Matches(node, selector)) items.push_back(node);
    }
    return Ok(200, {{"kind", "NodeList"},
                    {"apiVersion", "v1"},
                    {"metadata", {{"resourceVersion", StrCat(version_)}}},
                    {"items", items}});
  }

  Result<Reply> CreateNode(std::string_view body) {
    nlohmann::json node = nlohmann::json::parse(body, nullptr, false);
    if (!node.is_object() || !node.contains("metadata") || !node["metadata"].contains("name") ||
        !node["metadata"]["name"].is_string()) {
      return Error(400, "BadRequest", "the body is not a Node with a name");
    }
    const std::string name = node["metadata"]["name"].get<std::string>();
    if (nodes_.contains(name)) return Error(409, "AlreadyExists", StrCat("nodes \"", name, "\" already exists"));
    Stamp(&node, /*created=*/true);
    nodes_[name] = node;
    return Ok(201, node);
  }

  Result<Reply> PatchNode(nlohmann::json* node, std::string_view body, std::string_view content_type) {
    if (content_type != "application/merge-patch+json") {
      return Error(415, "UnsupportedMediaType", StrCat("the fake takes merge patches only, not ", content_type));
    }
    nlohmann::json patch = nlohmann::json::parse(body, nullptr, false);
    if (!patch.is_object()) return Error(400, "BadRequest", "the patch is not a JSON object");
    if (auto md = patch.find("metadata"); md != patch.end() && md->is_object()) {
      if (auto rv = md->find("resourceVersion"); rv != md->end()) {
        if (*rv != (*node)["metadata"]["resourceVersion"]) {
          return Error(409, "Conflict",
                       StrCat("Operation cannot be fulfilled on nodes \"", (*node)["metadata"]["name"].get<std::string>(),
                              "\": the object has been modified; please apply your changes to the latest version"));
        }
        md->erase(rv);
      }
    }
    node->merge_patch(patch);
    Stamp(node, /*created=*/false);
    return Ok(200, *node);
  }

  Result<Reply> DeleteNode(std::map<std::string, nlohmann::json>::iterator it) {
    nlohmann::json& md = it->second["metadata"];
    if (md.contains("finalizers") && md["finalizers"].is_array() && !md["finalizers"].empty()) {
      if (!md.contains("deletionTimestamp")) {
        md["deletionTimestamp"] = FormatTimestamp(clock);
        Stamp(&it->second, /*created=*/false);
      }
      return Ok(200, it->second);
    }
    nlohmann::json gone = std::move(it->second);
    nodes_.erase(it);
    return Ok(200, gone);
  }

  std::map<std::string, nlohmann::json> nodes_;
  int64_t version_ = 100;
};

}  // namespace tide::backends::kube::testing

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_FAKE_NODES_TEST_H_
