#include "backends/kubernetes/kube_counted.h"

#include <iterator>

#include "core/strings.h"

namespace tide::backends::kube {
namespace {

constexpr std::string_view kKindNames[] = {"list", "watch", "get", "post", "put", "patch", "delete", "other"};
constexpr int kOther = static_cast<int>(std::size(kKindNames)) - 1;

int KindIndex(std::string_view kind) {
  for (int i = 0; i < kOther; ++i) {
    if (kKindNames[i] == kind) return i;
  }
  return kOther;
}

std::string_view KindOf(std::string_view method, std::string_view path) {
  if (method == "GET") {
    const size_t q = path.find('?');
    const std::string_view query = q == std::string_view::npos ? std::string_view() : path.substr(q);
    return query.find("limit=") != std::string_view::npos ? "list" : "get";
  }
  if (method == "POST") return "post";
  if (method == "PUT") return "put";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return "delete";
  return "other";
}

}  // namespace

static_assert(std::size(kKindNames) == RequestCounts::kKinds);

void RequestCounts::Add(std::string_view kind) { counts_[KindIndex(kind)].fetch_add(1, std::memory_order_relaxed); }

std::map<std::string, int64_t> RequestCounts::Snapshot() const {
  std::map<std::string, int64_t> out;
  for (int i = 0; i < kKinds; ++i) out[std::string(kKindNames[i])] = counts_[i].load(std::memory_order_relaxed);
  return out;
}

std::string RequestCounts::Exposition() const {
  std::string out =
      "# HELP tide_kube_requests_total Requests tide sent to the Kubernetes API server, by kind (list: a page of "
      "an informer's list; watch: a watch opened).\n"
      "# TYPE tide_kube_requests_total counter\n";
  for (const auto& [kind, n] : Snapshot()) {
    out += StrCat("tide_kube_requests_total{kind=\"", kind, "\"} ", n, "\n");
  }
  return out;
}

Result<Reply> CountedTransport::Request(std::string_view method, std::string_view path_with_query,
                                        std::string_view body, std::string_view content_type) {
  counts_->Add(KindOf(method, path_with_query));
  return inner_->Request(method, path_with_query, body, content_type);
}

Status CountedTransport::Watch(std::string_view path_with_query, const LineHandler& on_line, std::stop_token stop,
                               const std::function<void()>& on_open) {
  counts_->Add("watch");
  return inner_->Watch(path_with_query, on_line, stop, on_open);
}

}  // namespace tide::backends::kube
