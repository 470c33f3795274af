// Timeline: named time series of a run, in fixed buckets, for the HTML report
// (docs/report.md). The simulator and the live controller both record one.
//
// Two kinds of series:
//   - levels (GPUs demanded, capacity by tier, jobs queued, ...): piecewise
//     constant quantities; a bucket holds the time-weighted mean over the
//     part of the bucket that was recorded, so areas (GPU-hours) are exact;
//   - totals (interruptions, lost work): running sums; a bucket holds the
//     last value set at or before its end;
//   - integrals: the running integral of a level given per hour, as a total
//     (cost from a cost rate per hour), exact at every bucket end.
//
// The bucket width starts at `step` and doubles (merging neighbours) whenever
// a run would need more than `max_buckets`, so a timeline never holds more
// than max_buckets points however long the run: a week stays at minute
// resolution, a year ends near three hours. Memory is fixed, not per job.
#ifndef TIDE_MODEL_TIMELINE_H_
#define TIDE_MODEL_TIMELINE_H_

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "core/time.h"

namespace tide::model {

struct Timeline {
  Timestamp start{};
  Duration step{60};
  int64_t buckets = 0;  // bucket i covers [start + i*step, start + (i+1)*step)
  std::vector<std::string> level_names, total_names;
  std::vector<std::vector<double>> levels;  // [series][bucket]
  std::vector<std::vector<double>> totals;  // [series][bucket]

  // The series named `name` (levels first, then totals); nullptr if none.
  const std::vector<double>* Find(const std::string& name) const;
};

class TimelineRecorder {
 public:
  // max_buckets is rounded up to an even number, at least 2.
  // `integrals` name, for some levels (by name), the total that is their
  // running integral over time in hours.
  TimelineRecorder(Timestamp start, Duration step, std::vector<std::string> level_names,
                   std::vector<std::string> total_names, int64_t max_buckets = 2048,
                   std::vector<std::pair<std::string, std::string>> integrals = {});

  // The levels held `values` (one per level name, in order) over [from, to).
  // Times before `start` or before an earlier call's `to` are ignored.
  void Hold(Timestamp from, Timestamp to, const std::vector<double>& values);
  // The totals are `values` from `at` on.
  void Set(Timestamp at, const std::vector<double>& values);

  // The timeline up to `end` (exclusive): buckets not recorded hold 0 for
  // levels and the previous value for totals.
  Timeline Finish(Timestamp end) const;


 private:
  int64_t Bucket(Timestamp t);  // compacts as needed; -1 before start
  void Compact();

  Timestamp start_;
  int64_t step_;
  int64_t max_;
  std::vector<std::string> level_names_, total_names_;
  std::vector<std::pair<std::string, std::string>> integrals_;
  std::vector<std::vector<double>> area_;    // [series][bucket]: value x seconds
  std::vector<double> covered_;              // [bucket]: seconds recorded
  std::vector<std::vector<double>> total_;   // [series][bucket]
  std::vector<char> total_set_;              // [bucket]
  int64_t used_ = 0;                         // buckets touched
  Timestamp held_until_;
};

// The series of the HTML report's timeline (docs/design/report.md), which the
// simulator and the live controller both record, in this order. Levels:
// kReportLevels, then "pending_jobs/<class>" for each priority class. Totals:
// kReportTotals, then "cost/<tier>", the integrals of "cost_rate/<tier>".
inline constexpr const char* kReportLevels[] = {
    "demand_gpus", "running_gpus", "capacity_gpus/reserved", "capacity_gpus/on-demand", "capacity_gpus/spot",
    "util_gpus", "pending_jobs", "cost_rate/reserved", "cost_rate/on-demand", "cost_rate/spot"};
inline constexpr const char* kReportTotals[] = {"cost/egress", "spot_interruptions", "lost_work_gpu_hours"};
// Positions in kReportLevels; "<tier>" ones are followed by the other tiers,
// in model::Tier order. The per-class levels start at kNumReportLevels.
enum ReportLevel : size_t {
  kDemandGpus = 0,
  kRunningGpus = 1,
  kCapacityGpus = 2,  // + tier
  kUtilGpus = 5,
  kPendingJobs = 6,
  kCostRate = 7,      // + tier
  kNumReportLevels = 10,
};
static_assert(std::size(kReportLevels) == kNumReportLevels);

// A recorder for those series.
TimelineRecorder ReportTimeline(Timestamp start, Duration step, const std::vector<std::string>& classes,
                                int64_t max_buckets = 2048);

// The 0th..100th nearest-rank percentiles of `values` (101 values; the
// p-th is the ceil(p/100 * n)-th smallest, the smallest for p = 0): the
// report's wait distribution. Empty if `values` is.
std::vector<int64_t> Percentiles0To100(std::vector<int64_t> values);

}  // namespace tide::model

#endif  // TIDE_MODEL_TIMELINE_H_
