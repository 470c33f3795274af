// SimMetrics: the MetricsView of the simulator, read straight off the job
// model (sim/job_run.h), so utilization windows are exact.
#ifndef TIDE_SIM_SIM_METRICS_H_
#define TIDE_SIM_SIM_METRICS_H_

#include <array>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "model/cluster.h"
#include "sim/job_run.h"

namespace tide::sim {

// The segments of a job's current run, oldest first (a resize starts a new
// one). The simulator keeps one at a time, in place beside the job.
using RunSegments = absl::InlinedVector<JobRun, 1>;

// What SimMetrics has worked out about a run's segments: the answers to the
// few "when does utilization first stay below/above X for Y" questions asked
// of a job (idle reclaim; the elastic resizer's low, high and bottleneck
// windows). They hold until the segments change: replacing the record resets
// them, and an appended segment is noticed by the count.
struct RunAnswers {
  struct Answer {
    bool below = false;
    double threshold = 0;
    int64_t span = 0;
    Timestamp at;
  };
  size_t segments = 0;  // the segment count they were found for
  int count = 0;
  std::array<Answer, 4> answers;
};

// One job's current run as SimMetrics reads it. The answers sit beside the
// segments so that a question answered before costs one look-up.
struct RunRecord {
  RunSegments segments;
  mutable RunAnswers answers;  // SimMetrics's; the owner leaves them alone
};

// Where SimMetrics finds each job's current run. The simulator keeps runs
// beside its jobs, by position; RunMap keeps them by id.
class RunSource {
 public:
  // The current run of `job`, or nullptr if it has none (not running).
  virtual const RunRecord* Find(model::JobId job) const = 0;
  // Calls `f` with each job that has a current run, in no given order.
  virtual void ForEachRun(absl::FunctionRef<void(model::JobId)> f) const = 0;

 protected:
  ~RunSource() = default;
};

// Runs by job id in a hash map (tests, and owners without positions).
class RunMap final : public RunSource {
 public:
  using Map = absl::flat_hash_map<model::JobId, RunRecord>;
  RunRecord& operator[](model::JobId job) { return map_[job]; }
  void erase(model::JobId job) { map_.erase(job); }
  Map::iterator begin() { return map_.begin(); }
  Map::iterator end() { return map_.end(); }
  Map::const_iterator begin() const { return map_.begin(); }
  Map::const_iterator end() const { return map_.end(); }

  const RunRecord* Find(model::JobId job) const override {
    auto it = map_.find(job);
    return it == map_.end() ? nullptr : &it->second;
  }
  void ForEachRun(absl::FunctionRef<void(model::JobId)> f) const override {
    for (const auto& [job, rec] : map_) f(job);
  }

 private:
  Map map_;
};

class SimMetrics final : public model::MetricsView {
 public:
  explicit SimMetrics(const RunSource* runs) : runs_(runs) {}

  std::optional<double> UtilAt(model::JobId job, Timestamp t) const override;
  std::optional<Timestamp> BelowSince(model::JobId job, double threshold, Timestamp t) const override;
  std::optional<Timestamp> AboveSince(model::JobId job, double threshold, Timestamp t) const override;
  Timestamp NextUtilChange(model::JobId job, Timestamp t) const override;
  Timestamp NextBelowFor(model::JobId job, double threshold, Duration span, Timestamp t) const override;
  Timestamp NextAboveFor(model::JobId job, double threshold, Duration span, Timestamp t) const override;
  // Keeps, for each question asked this way, every run's answer in order:
  // a pass walks only the jobs due and the first one that is not.
  bool VisitByDue(bool below, double threshold, Duration span, Timestamp t,
                  const std::function<bool(model::JobId, Timestamp)>& visit) const override;

  // The owner replaced or erased the run record of `job`.
  void RunChanged(model::JobId job) {
    if (!orders_.empty()) changed_.push_back(job);
  }

 private:
  // One VisitByDue question and each run's answer to it.
  struct DueOrder {
    bool below = false;
    double threshold = 0;
    int64_t span = 0;
    absl::btree_set<std::pair<Timestamp, model::JobId>> order;
    absl::flat_hash_map<model::JobId, Timestamp> due;
    size_t seen = 0;  // of changed_
  };
  // NextBelowFor or NextAboveFor, as the question asks.
  Timestamp Due(const DueOrder& q, model::JobId job, Timestamp t) const;

  template <typename Pred>
  Timestamp NextFor(model::JobId job, Duration span, Timestamp t, Pred holds) const;
  // NextFor through the record's answers: the answer for a segment is fixed
  // until the segment changes (or its time has come).
  template <typename Pred>
  Timestamp Cached(model::JobId job, bool below, double threshold, Duration span, Timestamp t, Pred holds) const;

  // The segment running at `t`, or nullptr.
  const JobRun* At(const RunSegments& segs, Timestamp t) const;
  template <typename Pred>
  std::optional<Timestamp> Since(model::JobId job, Timestamp t, Pred holds) const;

  const RunSource* runs_;
  mutable std::vector<DueOrder> orders_;
  mutable std::vector<model::JobId> changed_;  // runs changed, in order; kept until every order has seen them
};

}  // namespace tide::sim

#endif  // TIDE_SIM_SIM_METRICS_H_
