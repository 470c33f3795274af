#include "metrics/prometheus.h"

#include <httplib.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <system_error>

#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::metrics {
namespace {

using nlohmann::json;

// `{a="1",b="2"}` of a series' labels, to name it in errors (cut short).
std::string SeriesName(const json& metric) {
  std::string out = "{";
  if (metric.is_object()) {
    bool first = true;
    for (const auto& [k, v] : metric.items()) {
      if (!first) out += ',';
      first = false;
      StrAppend(&out, k, "=", v.dump());
      if (out.size() > 200) {
        out += ",...";
        break;
      }
    }
  }
  return out + "}";
}

// A sample value as Prometheus writes it ("45", "0.5", "1e+06", "NaN",
// "+Inf"); false unless it is a finite number.
bool ParseValue(std::string_view text, double* out) {
  std::string_view s = text;
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(*out);
}

struct SplitUrl {
  std::string origin;  // scheme://host[:port]
  std::string prefix;  // "" or "/path" without a trailing '/'
};

Result<SplitUrl> SplitBaseUrl(const std::string& url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) {
    return absl::InvalidArgumentError(StrCat("prometheus url '", url, "': give http://host:port"));
  }
  const std::string scheme = ToLower(url.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https") {
    return absl::InvalidArgumentError(StrCat("prometheus url '", url, "': the scheme must be http or https"));
  }
  const size_t host_start = scheme_end + 3;
  const size_t path_start = url.find('/', host_start);
  SplitUrl out;
  out.origin = url.substr(0, path_start);
  if (out.origin.size() == host_start) {
    return absl::InvalidArgumentError(StrCat("prometheus url '", url, "': no host"));
  }
  if (url.find_first_of("?#") != std::string::npos) {
    return absl::InvalidArgumentError(StrCat("prometheus url '", url, "': no query or fragment, please"));
  }
  if (path_start != std::string::npos) out.prefix = url.substr(path_start);
  while (!out.prefix.empty() && out.prefix.back() == '/') out.prefix.pop_back();
  return out;
}

}  // namespace

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() * 3);
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Result<std::vector<UtilSample>> ParseQueryResponse(std::string_view text, const PrometheusOptions& options) {
  if (!(options.scale > 0) || !std::isfinite(options.scale)) {
    return absl::InvalidArgumentError(StrCat("prometheus: scale must be positive, not ", options.scale));
  }
  const json reply = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded()) return absl::InvalidArgumentError("prometheus reply: not JSON");
  if (!reply.is_object()) return absl::InvalidArgumentError("prometheus reply: not a JSON object");
  const auto status = reply.find("status");
  if (status == reply.end() || !status->is_string()) {
    return absl::InvalidArgumentError("prometheus reply: no \"status\"");
  }
  if (*status != "success") {
    std::string why;
    for (const char* key : {"errorType", "error"}) {
      if (auto it = reply.find(key); it != reply.end() && it->is_string()) {
        StrAppend(&why, why.empty() ? "" : ": ", it->get<std::string>());
      }
    }
    // Shown: a reply may hold any byte (found by fuzzing).
    return absl::InvalidArgumentError(StrCat("prometheus reply: status \"", Shown(status->get<std::string>()), "\"",
                                             why.empty() ? "" : StrCat(" (", Shown(why, 400), ")")));
  }
  const auto data = reply.find("data");
  if (data == reply.end() || !data->is_object()) return absl::InvalidArgumentError("prometheus reply: no \"data\"");
  const auto type = data->find("resultType");
  if (type == data->end() || !type->is_string()) {
    return absl::InvalidArgumentError("prometheus reply: no data.resultType");
  }
  if (*type != "vector") {
    return absl::InvalidArgumentError(StrCat("prometheus reply: data.resultType is \"", Shown(type->get<std::string>()),
                                             "\", not \"vector\" (query ", options.metric, ")"));
  }
  const auto result = data->find("result");
  if (result == data->end() || !result->is_array()) {
    return absl::InvalidArgumentError("prometheus reply: data.result is not an array");
  }

  std::vector<UtilSample> out;
  out.reserve(result->size());
  for (size_t i = 0; i < result->size(); ++i) {
    const json& series = (*result)[i];
    if (!series.is_object())
      return absl::InvalidArgumentError(StrCat("prometheus reply: result[", i, "] is not an object"));
    const auto metric = series.find("metric");
    const json labels = metric != series.end() && metric->is_object() ? *metric : json::object();
    const std::string where = StrCat("prometheus reply: result[", i, "] ", Shown(SeriesName(labels), 200));
    auto label = [&](const std::string& name) -> std::string {
      auto it = labels.find(name);
      return it != labels.end() && it->is_string() ? it->get<std::string>() : std::string();
    };

    UtilSample s;
    s.node = label(options.node_label);
    if (const std::string pod = label(options.pod_label), ns = label(options.namespace_label);
        !pod.empty() && !ns.empty()) {
      s.pod = StrCat(ns, "/", pod);
    }
    if (s.node.empty() && s.pod.empty()) {
      return absl::InvalidArgumentError(StrCat(where, ": no ", options.node_label,
                                               " label (live.metrics.node_label), and no ", options.pod_label,
                                               " and ", options.namespace_label, " labels"));
    }
    s.job = label(options.job_label);
    if (int gpu = -1; ParseInt(label(options.gpu_label), &gpu) && gpu >= 0) s.gpu = gpu;

    const auto value = series.find("value");
    if (value == series.end() || !value->is_array() || value->size() != 2 || !(*value)[0].is_number() ||
        !(*value)[1].is_string()) {
      return absl::InvalidArgumentError(StrCat(where, ": \"value\" is not [time, \"number\"]"));
    }
    const std::string v = (*value)[1].get<std::string>();
    double raw = 0;
    if (!ParseValue(v, &raw))
      return absl::InvalidArgumentError(StrCat(where, ": value \"", Shown(v), "\" is not a finite number"));
    if (raw < 0) return absl::InvalidArgumentError(StrCat(where, ": negative utilization ", Shown(v)));
    s.util = std::min(1.0, raw / options.scale);
    out.push_back(std::move(s));
  }
  return out;
}

std::map<std::string, double> NodeUtilization(const std::vector<UtilSample>& samples) {
  std::map<std::string, std::pair<double, int>> sums;
  for (const auto& s : samples) {
    if (s.node.empty()) continue;
    auto& [sum, n] = sums[s.node];
    sum += s.util;
    ++n;
  }
  std::map<std::string, double> out;
  for (const auto& [node, sn] : sums) out[node] = sn.first / sn.second;
  return out;
}

Result<std::vector<UtilSample>> PrometheusSource::Query() const {
  TIDE_ASSIGN_OR_RETURN(SplitUrl url, SplitBaseUrl(options_.url));
  httplib::Client client(url.origin);
  if (!client.is_valid()) {
    return absl::InvalidArgumentError(StrCat("prometheus url '", options_.url, "': not a valid http(s) URL"));
  }
  const auto timeout = std::chrono::seconds(std::max<int64_t>(1, options_.timeout.count()));
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  client.set_write_timeout(timeout);
  client.set_url_encode(false);  // the target below is encoded already
  const std::string target = StrCat(url.prefix, "/api/v1/query?query=", UrlEncode(options_.metric));
  httplib::Result res = client.Get(target.c_str());
  if (!res) {
    return absl::UnavailableError(StrCat("prometheus at ", options_.url, ": ", httplib::to_string(res.error())));
  }
  if (res->status != 200) {
    std::string detail = res->body.substr(0, 300);
    if (auto j = json::parse(res->body, nullptr, false);
        j.is_object() && j.contains("error") && j["error"].is_string()) {
      detail = j["error"].get<std::string>();
    }
    return absl::UnavailableError(StrCat("prometheus at ", options_.url, " answered HTTP ", res->status,
                                         detail.empty() ? "" : StrCat(": ", StripWhitespace(detail))));
  }
  auto samples = ParseQueryResponse(res->body, options_);
  if (!samples.ok()) {
    return absl::Status(samples.status().code(), StrCat(options_.url, ": ", Message(samples.status())));
  }
  return samples;
}

}  // namespace tide::metrics
