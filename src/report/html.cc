#include "report/html.h"

#include <cmath>

#include "core/strings.h"
#include "core/time.h"
#include "nlohmann/json.hpp"

namespace tide::report {
namespace assets {
extern const char kTemplate[];
extern const char kCss[];
extern const char kJs[];
}  // namespace assets

namespace {

using Json = nlohmann::ordered_json;

// Three decimals are more than a chart can show and keep the file small.
double Short(double v) {
  if (!std::isfinite(v)) return 0;
  return std::round(v * 1000.0) / 1000.0;
}

Json TimelineObject(const model::Timeline& t) {
  Json o;
  o["start"] = ToUnixSeconds(t.start);
  o["step"] = t.step.count();
  o["buckets"] = t.buckets;
  Json series = Json::object();
  auto add = [&](const std::vector<std::string>& names, const std::vector<std::vector<double>>& values) {
    for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
      Json a = Json::array();
      for (double v : values[i]) a.push_back(Short(v));
      series[names[i]] = std::move(a);
    }
  };
  add(t.level_names, t.levels);
  add(t.total_names, t.totals);
  o["series"] = std::move(series);
  return o;
}

// Replaces `marker` in `page` by `text`.
void Fill(std::string* page, std::string_view marker, std::string_view text) {
  const size_t at = page->find(marker);
  if (at != std::string::npos) page->replace(at, marker.size(), text);
}

std::string Page(std::string_view body_attrs, std::string_view data_json) {
  std::string page = assets::kTemplate;
  Fill(&page, "/*@CSS@*/", assets::kCss);
  Fill(&page, "/*@BODY@*/", body_attrs);
  // Inside <script>, "</" would end the element: JSON allows "<\/" for it.
  std::string data;
  data.reserve(data_json.size());
  for (size_t i = 0; i < data_json.size(); ++i) {
    if (data_json[i] == '<' && i + 1 < data_json.size() && data_json[i + 1] == '/') {
      data += "<\\/";
      ++i;
    } else {
      data += data_json[i];
    }
  }
  Fill(&page, "/*@DATA@*/", data);
  Fill(&page, "/*@JS@*/", assets::kJs);
  return page;
}

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string ReportDataJson(const ReportData& d) {
  Json root;
  root["format"] = "tide-report/1";
  root["mode"] = d.mode;
  root["title"] = d.title;
  root["meta"] = d.meta;
  root["time_zone"] = d.time_zone;
  root["currency"] = d.currency;
  root["classes"] = d.classes;
  root["summary"] = d.summary_json.empty() ? Json(nullptr) : Json::parse(d.summary_json, nullptr, false);
  Json policies = Json::array();
  for (const auto& p : d.policies) {
    Json o;
    o["name"] = p.name;
    o["description"] = p.description;
    o["timeline"] = p.timeline ? TimelineObject(*p.timeline) : Json(nullptr);
    Json q = Json::object();
    for (const auto& [name, values] : p.wait_quantiles) q[name] = values;
    o["wait_quantiles"] = std::move(q);
    policies.push_back(std::move(o));
  }
  root["policies"] = std::move(policies);
  return root.dump();
}

std::string RenderHtml(std::string_view data_json) { return Page("", data_json); }

std::string RenderLiveHtml(std::string_view source, int refresh_s) {
  return Page(StrCat(" data-source=\"", Escape(source), "\" data-refresh=\"", refresh_s, "\""), "null");
}

}  // namespace tide::report
