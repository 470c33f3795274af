// Prometheus's /api/v1/query replies (metrics::ParseQueryResponse), as the
// live controller reads GPU utilization. The first byte picks the options'
// scale (percent or fraction).
//
// Properties: an error is printable and starts with "prometheus"; every
// sample read is a utilization in [0, 1] that names a node or a pod; a reply
// that is not a success with a vector never reads as "no GPUs reported".
#include <cmath>

#include "fuzz/fuzz_check.h"
#include "metrics/prometheus.h"
#include "nlohmann/json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tide;
  using namespace tide::fuzz;
  if (size == 0) return 0;
  metrics::PrometheusOptions options;
  options.scale = data[0] % 2 == 0 ? 100 : 1;
  const std::string_view text = AsText(data + 1, size - 1);
  auto samples = metrics::ParseQueryResponse(text, options);
  if (!samples.ok()) {
    CheckMessage(samples.status(), "prometheus");
    return 0;
  }
  for (const auto& s : *samples) {
    if (!(s.util >= 0 && s.util <= 1)) Fail("a utilization is in [0, 1]", StrCat(s.util));
    if (s.node.empty() && s.pod.empty()) Fail("a sample names a node or a pod", text);
  }
  if (samples->empty()) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    const auto is = [](const nlohmann::json& o, const char* key, const char* want) {
      return o.is_object() && o.contains(key) && o[key].is_string() && o[key] == want;
    };
    const bool empty_vector = is(j, "status", "success") && j.contains("data") && is(j["data"], "resultType", "vector") &&
                              j["data"].contains("result") && j["data"]["result"].is_array() &&
                              j["data"]["result"].empty();
    if (!empty_vector) Fail("no samples only from a successful empty vector", text);
  }
  return 0;
}
