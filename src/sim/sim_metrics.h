// SimMetrics: the MetricsView of the simulator, read straight off the job
// model (sim/job_run.h), so utilisation windows are exact.
#ifndef TIDE_SIM_SIM_METRICS_H_
#define TIDE_SIM_SIM_METRICS_H_

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/cluster.h"
#include "sim/job_run.h"

namespace tide::sim {

// The segments of a job's current run, oldest first (a resize starts a new one).
using RunSegments = std::vector<JobRun>;

class SimMetrics final : public model::MetricsView {
 public:
  explicit SimMetrics(const absl::flat_hash_map<model::JobId, RunSegments>* runs) : runs_(runs) {}

  std::optional<double> UtilAt(model::JobId job, Timestamp t) const override;
  std::optional<Timestamp> BelowSince(model::JobId job, double threshold, Timestamp t) const override;
  std::optional<Timestamp> AboveSince(model::JobId job, double threshold, Timestamp t) const override;
  Timestamp NextUtilChange(model::JobId job, Timestamp t) const override;
  Timestamp NextBelowFor(model::JobId job, double threshold, Duration span, Timestamp t) const override;
  Timestamp NextAboveFor(model::JobId job, double threshold, Duration span, Timestamp t) const override;

 private:
  template <typename Pred>
  Timestamp NextFor(model::JobId job, Duration span, Timestamp t, Pred holds) const;
  // NextFor through a cache: the answer for a segment is fixed until the
  // segment changes (or its time has come).
  template <typename Pred>
  Timestamp Cached(model::JobId job, bool below, double threshold, Duration span, Timestamp t, Pred holds) const;

  struct CacheKey {
    model::JobId job;
    int64_t segment_start;
    size_t segments;
    bool below;
    double threshold;
    int64_t span;
    bool operator==(const CacheKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const CacheKey& k) {
      return H::combine(std::move(h), k.job, k.segment_start, k.segments, k.below, k.threshold, k.span);
    }
  };
  mutable absl::flat_hash_map<CacheKey, Timestamp> cache_;
  // The segment running at `t`, or nullptr.
  const JobRun* At(const RunSegments& segs, Timestamp t) const;
  template <typename Pred>
  std::optional<Timestamp> Since(model::JobId job, Timestamp t, Pred holds) const;

  const absl::flat_hash_map<model::JobId, RunSegments>* runs_;
};

}  // namespace tide::sim

#endif  // TIDE_SIM_SIM_METRICS_H_
