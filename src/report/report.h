// The comparison report: one column per policy, as a text table and as JSON
// with the same figures.
#ifndef TIDE_REPORT_REPORT_H_
#define TIDE_REPORT_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "bound/bound.h"
#include "core/status.h"
#include "model/cluster.h"
#include "sim/result.h"

namespace tide::report {

// What was simulated, for the report's header.
struct RunInfo {
  std::string config;
  std::string trace;
  int64_t jobs = 0;
  double gpu_hours = 0;
  int64_t peak_demand_gpus = 0;
  double mean_demand_gpus = 0;
  uint64_t seed = 0;
  // Set (simulate --bound): the table and JSON also compare every policy's
  // cost with the offline lower bound (docs/design/bound.md).
  std::optional<bound::Bound> lower_bound;
  // The same with the reserved base fixed at what the configuration's
  // reserved pools hold (unset when that base leaves demand unserved).
  std::optional<bound::Bound> bound_at_configured;
  // tide bound: jobs left out of the bound because no pool could run them.
  int64_t jobs_fit_no_pool = 0;
};

// "42s", "4m37s", "3h12m", "2d3h".
std::string HumanDuration(int64_t seconds);
// 1234567.8 -> "1,234,568".
std::string Money(double amount);
// A policy's figures as JSON (what FormatJson lists under "policies").
std::string PolicyJson(const model::ClusterSpec& spec, const sim::PolicyResult& r, int indent = 2);

// The side-by-side table printed by `tide simulate`.
std::string FormatTable(const RunInfo& info, const model::ClusterSpec& spec,
                        const std::vector<sim::PolicyResult>& results);

// The same figures as JSON:
// {"run": {...}, "currency": "...", "policies": [{"name", "cost_total", "gpu_hours_paid", "gpu_hours_busy",
//   "utilization", "wait_s": {"p50", "p95", "p99", ...}, "jobs_total", "jobs_unstarted", ...}]}
std::string FormatJson(const RunInfo& info, const model::ClusterSpec& spec,
                       const std::vector<sim::PolicyResult>& results);

// A cost over the lower bound, "1.14x"; "-" when the bound is 0.
std::string BoundRatio(double cost, const bound::Bound& b);

// What `tide bound` prints (info.lower_bound must be set), and its JSON twin:
// {"run": {...}, "currency": "...", "lower_bound": {"reserved_gpus", "cost_total", "cost_by_tier", ...},
//  "lower_bound_configured_base": {...}}
std::string FormatBound(const RunInfo& info, const model::ClusterSpec& spec);
std::string FormatBoundJson(const RunInfo& info, const model::ClusterSpec& spec);

}  // namespace tide::report

#endif  // TIDE_REPORT_REPORT_H_
