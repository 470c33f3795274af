// Exposition: builds a page of the Prometheus text exposition format,
// version 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/),
// the body of tide's GET /metrics.
//
// A family (one metric name) has a help text, a type and samples, each with
// its own label set. Families print in the order they were first added,
// samples in the order they were added, labels in the order given:
//
//   # HELP tide_nodes Nodes tide holds, by pool and state.
//   # TYPE tide_nodes gauge
//   tide_nodes{pool="a100",state="ready"} 3
//
// Not thread-safe: build a page on one thread, then publish its Text().
#ifndef TIDE_CONTROLLER_EXPOSITION_H_
#define TIDE_CONTROLLER_EXPOSITION_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace tide::controller {

// A sample's labels, (name, value) in the order they are printed.
using Labels = std::vector<std::pair<std::string, std::string>>;

enum class MetricType { kCounter, kGauge };
std::string_view MetricTypeName(MetricType type);  // "counter", "gauge"

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool IsValidMetricName(std::string_view name);
// [a-zA-Z_][a-zA-Z0-9_]*, and not starting with "__" (reserved for Prometheus).
bool IsValidLabelName(std::string_view name);

// A sample value as the format spells it: integral values without exponent
// or decimal point ("3", "1700000000", "-2"); others the shortest text that
// parses back to the same double ("0.25", "1e-09"); "NaN", "+Inf", "-Inf".
std::string FormatSampleValue(double value);
// Label values escape backslash, double quote and newline; HELP texts
// escape backslash and newline.
std::string EscapeLabelValue(std::string_view value);
std::string EscapeHelp(std::string_view help);

class Exposition {
 public:
  // Adds one sample of family `name`. The first sample of a family sets its
  // type and help; later ones keep that help.
  // Returns InvalidArgument, and adds nothing, when the metric or a label
  // name is not valid, a label name repeats, the family exists with another
  // type, the family already has a sample with the same labels, or a
  // counter's value is negative.
  Status Add(MetricType type, std::string_view name, std::string_view help, const Labels& labels, double value);

  // Add, for the common case where the names are literals in tide's code: a
  // failure is kept in status() (the first one) instead of returned, and the
  // sample is left out of the page.
  void Counter(std::string_view name, std::string_view help, const Labels& labels, double value);
  void Gauge(std::string_view name, std::string_view help, const Labels& labels, double value);

  // OK, or the first error of Counter/Gauge.
  const Status& status() const { return status_; }

  // The page: every family with its HELP (when the help is not empty) and
  // TYPE lines, then its samples; "\n" after every line. Empty if there are
  // no samples.
  std::string Text() const;

 private:
  struct Sample {
    Labels labels;
    double value = 0;
  };
  struct Family {
    std::string name;
    std::string help;
    MetricType type = MetricType::kGauge;
    std::vector<Sample> samples;
  };
  void Keep(Status s);
  Family* Find(std::string_view name);

  std::vector<Family> families_;
  Status status_;
};

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_EXPOSITION_H_
