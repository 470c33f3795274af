// A Transport that counts the requests it passes on, by kind, for /metrics
// (tide_kube_requests_total): what tide costs the API server. Kinds: "list"
// (a GET with a limit: the informers' pages), "watch" (a watch opened),
// "get", and the other methods lowercased ("post", "put", "patch",
// "delete"). Thread-safe.
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_COUNTED_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_COUNTED_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "backends/kubernetes/kube_http.h"

namespace tide::backends::kube {

// Counts shared by several CountedTransports (the verbs' and the watches').
class RequestCounts {
 public:
  void Add(std::string_view kind);
  std::map<std::string, int64_t> Snapshot() const;
  // Prometheus text: tide_kube_requests_total{kind="..."} for every kind,
  // zeros included, so that a rate() has a series from the start.
  std::string Exposition() const;

  static constexpr int kKinds = 8;  // fixed, so no lock is needed

 private:
  std::atomic<int64_t> counts_[kKinds] = {};
};

class CountedTransport final : public Transport {
 public:
  // Takes `inner`; `counts` must outlive it.
  CountedTransport(std::unique_ptr<Transport> inner, RequestCounts* counts)
      : inner_(std::move(inner)), counts_(counts) {}
  Result<Reply> Request(std::string_view method, std::string_view path_with_query, std::string_view body = "",
                        std::string_view content_type = "application/json") override;
  Status Watch(std::string_view path_with_query, const LineHandler& on_line, std::stop_token stop = {},
               const std::function<void()>& on_open = nullptr) override;

 private:
  std::unique_ptr<Transport> inner_;
  RequestCounts* counts_;
};

}  // namespace tide::backends::kube

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_COUNTED_H_
