#include "controller/exposition.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "core/strings.h"

namespace tide::controller {
namespace {

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string ToChars(double v, std::chars_format fmt) {
  char buf[400];  // a fixed spelling of a double below 1e21 needs far less
  auto r = std::to_chars(buf, buf + sizeof(buf), v, fmt);
  if (r.ec != std::errc()) return StrCat(v);  // not reached with the bounds below
  return std::string(buf, r.ptr);
}

// A label set as text, to find duplicates with.
std::string LabelKey(const Labels& labels) {
  std::string key;
  for (const auto& [name, value] : labels) StrAppend(&key, name, "=", EscapeLabelValue(value), ",");
  return key;
}

}  // namespace

std::string_view MetricTypeName(MetricType type) { return type == MetricType::kCounter ? "counter" : "gauge"; }

bool IsValidMetricName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!(IsAlpha(c) || c == '_' || c == ':' || (i > 0 && IsDigit(c)))) return false;
  }
  return true;
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty() || name.substr(0, 2) == "__") return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!(IsAlpha(c) || c == '_' || (i > 0 && IsDigit(c)))) return false;
  }
  return true;
}

std::string FormatSampleValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == 0) return "0";  // also -0
  // Integral values print in full (every integral double below 1e21 has an
  // exact, exponent-free shortest spelling); others as the shortest
  // round-trip text, fixed while that stays readable.
  const double mag = std::fabs(value);
  if (mag < 1e21 && (std::trunc(value) == value || mag >= 1e-4)) return ToChars(value, std::chars_format::fixed);
  return ToChars(value, std::chars_format::general);
}

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

Exposition::Family* Exposition::Find(std::string_view name) {
  for (auto& f : families_) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Status Exposition::Add(MetricType type, std::string_view name, std::string_view help, const Labels& labels,
                       double value) {
  if (!IsValidMetricName(name)) {
    return absl::InvalidArgumentError(StrCat("metric name '", name, "' is not valid ([a-zA-Z_:][a-zA-Z0-9_:]*)"));
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    const std::string& label = labels[i].first;
    if (!IsValidLabelName(label)) {
      return absl::InvalidArgumentError(
          StrCat("metric ", name, ": label name '", label, "' is not valid ([a-zA-Z_][a-zA-Z0-9_]*, no leading __)"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (labels[j].first == label) {
        return absl::InvalidArgumentError(StrCat("metric ", name, ": label '", label, "' given twice"));
      }
    }
  }
  if (type == MetricType::kCounter && value < 0) {
    return absl::InvalidArgumentError(StrCat("counter ", name, ": negative value ", FormatSampleValue(value)));
  }
  Family* f = Find(name);
  if (f != nullptr && f->type != type) {
    return absl::InvalidArgumentError(
        StrCat("metric ", name, " is a ", MetricTypeName(f->type), ", not a ", MetricTypeName(type)));
  }
  if (f != nullptr) {
    const std::string key = LabelKey(labels);
    for (const auto& s : f->samples) {
      if (LabelKey(s.labels) == key) {
        return absl::InvalidArgumentError(StrCat("metric ", name, ": a sample with labels {", key, "} exists"));
      }
    }
  } else {
    families_.push_back(Family{std::string(name), std::string(help), type, {}});
    f = &families_.back();
  }
  f->samples.push_back(Sample{labels, value});
  return OkStatus();
}

void Exposition::Keep(Status s) {
  if (status_.ok() && !s.ok()) status_ = std::move(s);
}

void Exposition::Counter(std::string_view name, std::string_view help, const Labels& labels, double value) {
  Keep(Add(MetricType::kCounter, name, help, labels, value));
}

void Exposition::Gauge(std::string_view name, std::string_view help, const Labels& labels, double value) {
  Keep(Add(MetricType::kGauge, name, help, labels, value));
}

std::string Exposition::Text() const {
  std::string out;
  for (const auto& f : families_) {
    if (!f.help.empty()) StrAppend(&out, "# HELP ", f.name, " ", EscapeHelp(f.help), "\n");
    StrAppend(&out, "# TYPE ", f.name, " ", MetricTypeName(f.type), "\n");
    for (const auto& s : f.samples) {
      out += f.name;
      if (!s.labels.empty()) {
        out += '{';
        for (size_t i = 0; i < s.labels.size(); ++i) {
          if (i > 0) out += ',';
          StrAppend(&out, s.labels[i].first, "=\"", EscapeLabelValue(s.labels[i].second), "\"");
        }
        out += '}';
      }
      StrAppend(&out, " ", FormatSampleValue(s.value), "\n");
    }
  }
  return out;
}

}  // namespace tide::controller
