// FakeMetrics: a MetricsView over hand-written utilization series, for tests.
// Each job's series is piecewise constant: (from, util) points in time
// order; before the first point, nothing is known.
#ifndef TIDE_TESTS_TESTUTIL_FAKE_METRICS_H_
#define TIDE_TESTS_TESTUTIL_FAKE_METRICS_H_

#include <algorithm>
#include <map>
#include <vector>

#include "model/cluster.h"

namespace tide::testing {

class FakeMetrics final : public model::MetricsView {
 public:
  // Sets job `id`'s series: util[i] from at[i] until at[i+1] (the last one for ever).
  void Set(model::JobId id, std::vector<std::pair<Timestamp, double>> series) { series_[id] = std::move(series); }

  std::optional<double> UtilAt(model::JobId job, Timestamp t) const override {
    const auto* s = Find(job);
    if (s == nullptr) return std::nullopt;
    std::optional<double> u;
    for (const auto& [at, v] : *s) {
      if (at <= t) u = v;
    }
    return u;
  }
  std::optional<Timestamp> BelowSince(model::JobId job, double thr, Timestamp t) const override {
    return Since(job, t, [thr](double u) { return u < thr; });
  }
  std::optional<Timestamp> AboveSince(model::JobId job, double thr, Timestamp t) const override {
    return Since(job, t, [thr](double u) { return u > thr; });
  }
  Timestamp NextUtilChange(model::JobId job, Timestamp t) const override {
    const auto* s = Find(job);
    if (s == nullptr) return kInfiniteFuture;
    for (const auto& [at, v] : *s) {
      if (at > t) return at;
    }
    return kInfiniteFuture;
  }
  Timestamp NextBelowFor(model::JobId job, double thr, Duration span, Timestamp t) const override {
    return NextFor(job, span, t, [thr](double u) { return u < thr; });
  }
  Timestamp NextAboveFor(model::JobId job, double thr, Duration span, Timestamp t) const override {
    return NextFor(job, span, t, [thr](double u) { return u > thr; });
  }
  // With set_ordered(true), answers VisitByDue as the simulator's view does
  // (by asking every series); otherwise declines, as a live view does.
  void set_ordered(bool ordered) { ordered_ = ordered; }
  bool VisitByDue(bool below, double thr, Duration span, Timestamp t,
                  const std::function<bool(model::JobId, Timestamp)>& visit) const override {
    if (!ordered_) return false;
    std::vector<std::pair<Timestamp, model::JobId>> order;
    for (const auto& [id, s] : series_) {
      if (s.empty()) continue;
      order.emplace_back(below ? NextBelowFor(id, thr, span, t) : NextAboveFor(id, thr, span, t), id);
    }
    std::sort(order.begin(), order.end());
    for (const auto& [due, id] : order) {
      if (due == kInfiniteFuture || !visit(id, due)) break;
    }
    return true;
  }

 private:
  const std::vector<std::pair<Timestamp, double>>* Find(model::JobId job) const {
    auto it = series_.find(job);
    return it == series_.end() || it->second.empty() ? nullptr : &it->second;
  }
  template <typename P>
  std::optional<Timestamp> Since(model::JobId job, Timestamp t, P holds) const {
    const auto* s = Find(job);
    if (s == nullptr) return std::nullopt;
    std::optional<Timestamp> since;
    for (const auto& [at, v] : *s) {
      if (at > t) break;
      if (holds(v)) {
        if (!since) since = at;
      } else {
        since.reset();
      }
    }
    return since;
  }
  template <typename P>
  Timestamp NextFor(model::JobId job, Duration span, Timestamp t, P holds) const {
    const auto* s = Find(job);
    if (s == nullptr) return kInfiniteFuture;
    bool in_run = false;  // the condition has held since `run`
    Timestamp run = kInfinitePast;
    for (size_t i = 0; i < s->size(); ++i) {
      const auto& [at, v] = (*s)[i];
      const Timestamp end = i + 1 < s->size() ? (*s)[i + 1].first : kInfiniteFuture;
      if (holds(v)) {
        if (!in_run) run = at;
        in_run = true;
        if (run + span < end && end > t) return std::max(t, run + span);
      } else {
        in_run = false;
      }
    }
    return kInfiniteFuture;
  }
  bool ordered_ = false;
  std::map<model::JobId, std::vector<std::pair<Timestamp, double>>> series_;
};

}  // namespace tide::testing

#endif  // TIDE_TESTS_TESTUTIL_FAKE_METRICS_H_
