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
  // Cost attributed to jobs (their share of each node's price while they
  // hold it), by priority class and by team; what no job held is idle.
  std::vector<std::pair<std::string, double>> cost_by_priority;
  std::vector<std::pair<std::string, double>> cost_by_team;
  double cost_idle = 0;
  double gpu_hours_busy = 0;
  double utilization = 0;  // busy / paid

  Percentiles wait_s;  // submission to start, jobs that started
  Percentiles jct_s;   // submission to completion, jobs that completed
  std::vector<std::pair<std::string, Percentiles>> wait_by_priority;  // by class name, in config order
  std::vector<std::pair<std::string, Percentiles>> jct_by_priority;

  // Measured GPU utilization: utilization-weighted GPU time over paid GPU time.
  double gpu_util_mean = 0;

  // Interruptions and what they cost.
  int64_t spot_interruptions = 0;  // jobs stopped or killed by a spot interruption
  int64_t spot_nodes_interrupted = 0;  // spot nodes interrupted (taken back by the provider)
  int64_t preemptions = 0;         // jobs stopped for higher-priority work
  int64_t reclaims = 0;            // idle jobs stopped (requeued or cancelled)
  int64_t consolidations = 0;      // jobs moved off a node to release it
  int64_t jobs_cancelled = 0;
  int64_t resizes = 0;
  int64_t disruptions = 0;         // nodes disrupted by tide's own actions
  double lost_work_gpu_hours = 0;  // work since the last checkpoint, lost to interruptions
  double max_lost_work_s = 0;      // the most one interruption lost (seconds of work)
  int64_t nodes_create_failed = 0; // spot stock-outs
  double storage_wait_node_hours = 0;  // joined nodes waiting for their storage load
  int64_t forecast_nodes = 0;      // bought ahead of forecast demand
  int64_t forecast_nodes_unused = 0;  // ... released without running anything
  int64_t spare_nodes = 0;         // bought as spares against slow boots (boot_hedge)
  int64_t released_booting = 0;    // released before they joined (any node, spare or not)

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
