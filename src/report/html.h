// The HTML report (docs/report.md): one self-contained page whose charts are
// drawn from the report data, embedded in the page by `tide simulate --html`
// or fetched from `tide run` at /api/v1/report.
#ifndef TIDE_REPORT_HTML_H_
#define TIDE_REPORT_HTML_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/timeline.h"

namespace tide::report {

struct ReportPolicy {
  std::string name;
  std::string description;
  const model::Timeline* timeline = nullptr;  // not owned; may be null
  // Wait percentiles 0..100 (101 values, seconds) by "all" and class name.
  std::vector<std::pair<std::string, std::vector<int64_t>>> wait_quantiles;
};

struct ReportData {
  std::string mode = "simulation";  // or "live"
  std::string title;
  std::vector<std::string> meta;  // short facts shown under the title
  std::string time_zone = "UTC";  // an IANA name the caller has checked
  std::string currency;
  // The headline figures: a JSON object with "policies": [{"name", ...}],
  // the keys of `tide simulate --json` (FormatJson); "" for none.
  std::string summary_json;
  std::vector<std::string> classes;  // priority class names, in order
  std::vector<ReportPolicy> policies;
};

// The report data as JSON (the format docs/report.md describes).
std::string ReportDataJson(const ReportData& data);

// A page with `data_json` (ReportDataJson's output) embedded: it needs no
// network and no other file.
std::string RenderHtml(std::string_view data_json);

// The live page: the same views, fetching `source` (a path on the same
// server) every `refresh_s` seconds.
std::string RenderLiveHtml(std::string_view source, int refresh_s);

}  // namespace tide::report

#endif  // TIDE_REPORT_HTML_H_
