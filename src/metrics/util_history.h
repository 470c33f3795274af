// UtilHistory: the live controller's MetricsView. The controller Records
// each running job's utilization after every poll of Prometheus; the
// autoscaler's policies ask it how long a job has been below (or above) a
// threshold.
//
// Missing data is never read as idle: a job with no sample, or whose
// latest sample is older than max_gap, is unknown (nullopt), and samples
// further apart than max_gap break a run, so "below since" never reaches
// back across a gap.
//
// It answers about the present: queries at a time before the job's latest
// sample answer unknown (the past is not kept sample by sample). The
// controller asks at `now`, after recording.
//
// Memory per job is bounded: for each threshold what matters is the latest
// sample at or above it (or at or below, for AboveSince), so only the
// samples no later sample dominates are kept, and none older than
// `horizon`. A run longer than `horizon` may then be reported as starting
// later than it did (never earlier: the error is on the side of "not idle
// for long enough yet").
//
// Not thread-safe: Record, Forget and the queries are for one thread (the
// controller's loop); the const queries may run concurrently with each
// other.
#ifndef TIDE_METRICS_UTIL_HISTORY_H_
#define TIDE_METRICS_UTIL_HISTORY_H_

#include <cstddef>
#include <deque>
#include <optional>
#include <unordered_map>

#include "core/time.h"
#include "model/cluster.h"

namespace tide::metrics {

struct UtilHistoryOptions {
  // Samples further apart than this break a run; a latest sample older
  // than this (at the query's time) means "unknown".
  Duration max_gap = Seconds(60);
  // How often the controller polls: the next time anything new is known.
  Duration poll_interval = Seconds(10);
  // How far back a run's start is remembered (see above). Longer than any
  // span a policy asks for.
  Duration horizon = Hours(6);
};

class UtilHistory final : public model::MetricsView {
 public:
  explicit UtilHistory(UtilHistoryOptions options = {}) : options_(options) {}

  // One sample of the job's GPU utilization (0..1; clamped) measured at
  // `at`. A sample older than the job's latest one, or not a number, is
  // ignored. A sample more than max_gap after the latest starts a new run.
  void Record(model::JobId job, double util, Timestamp at);
  // Drops everything about the job (it ended).
  void Forget(model::JobId job);
  // Jobs with samples.
  size_t size() const { return series_.size(); }

  // MetricsView. With `t` at or after the job's latest sample and no more
  // than max_gap after it:
  //   UtilAt: the latest sample.
  //   BelowSince: if the latest sample is below `threshold`, the time of
  //     the first sample of the run of samples below it that ends with the
  //     latest (AboveSince: above).
  //   NextUtilChange: t + poll_interval.
  //   NextBelowFor: max(t, BelowSince + span) when BelowSince is known, else
  //     t + poll_interval, the next time more is known (AboveFor alike).
  // Otherwise the first three answer nullopt (unknown).
  std::optional<double> UtilAt(model::JobId job, Timestamp t) const override;
  std::optional<Timestamp> BelowSince(model::JobId job, double threshold, Timestamp t) const override;
  std::optional<Timestamp> AboveSince(model::JobId job, double threshold, Timestamp t) const override;
  Timestamp NextUtilChange(model::JobId job, Timestamp t) const override;
  Timestamp NextBelowFor(model::JobId job, double threshold, Duration span, Timestamp t) const override;
  Timestamp NextAboveFor(model::JobId job, double threshold, Duration span, Timestamp t) const override;

 private:
  struct Point {
    Timestamp at;
    double util = 0;
    Timestamp next = kInfiniteFuture;  // the time of the sample recorded after this one
  };
  // One job's current run.
  struct Series {
    Timestamp start;  // its first sample
    Timestamp last_at;
    double last_util = 0;
    // Samples with a higher (highs) or lower (lows) value than every later
    // sample, oldest first; the latest sample ends both.
    std::deque<Point> highs;
    std::deque<Point> lows;
    // Runs are not reported to start before these (older points dropped).
    Timestamp below_from;
    Timestamp above_from;
  };
  // The job's series if its latest sample is in [t - max_gap, t].
  const Series* Current(model::JobId job, Timestamp t) const;
  void Trim(std::deque<Point>* points, Timestamp* from, Timestamp now) const;

  UtilHistoryOptions options_;
  std::unordered_map<model::JobId, Series> series_;
};

}  // namespace tide::metrics

#endif  // TIDE_METRICS_UTIL_HISTORY_H_
