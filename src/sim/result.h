// What one simulated policy produced: the figures of the report.
#ifndef TIDE_SIM_RESULT_H_
#define TIDE_SIM_RESULT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/time.h"
#include "cost/ledger.h"

namespace tide::sim {

struct Percentiles {
  int64_t count = 0;
  double mean = 0;
  int64_t p50 = 0, p95 = 0, p99 = 0, max = 0;
};

// Nearest-rank percentiles of `values` (reorders them).
Percentiles ComputePercentiles(std::vector<int64_t>* values);

struct PolicyResult {
  std::string name;
  std::string kind;
  std::string description;
  Timestamp start{};
  Timestamp horizon{};  // billing ends when the last job ends

  cost::CostSummary cost;
  double gpu_hours_busy = 0;
  double utilization = 0;  // busy / paid

  Percentiles wait_s;  // submission to start, jobs that started
  Percentiles jct_s;   // submission to completion, jobs that completed
  std::vector<std::pair<std::string, Percentiles>> wait_by_priority;  // by class name, in config order
  std::vector<std::pair<std::string, Percentiles>> jct_by_priority;

  int peak_nodes = 0;
  int64_t nodes_bought = 0;
  int64_t nodes_released = 0;
  int64_t jobs_total = 0;
  int64_t jobs_started = 0;
  int64_t jobs_completed = 0;
  int64_t jobs_unstarted = 0;
  int64_t jobs_unschedulable = 0;  // reported as fitting no pool
  int64_t jobs_backfilled = 0;
  int64_t events = 0;
  int64_t autoscaler_runs = 0;
};

}  // namespace tide::sim

#endif  // TIDE_SIM_RESULT_H_
