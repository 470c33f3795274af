#include "metrics/util_history.h"

#include <algorithm>
#include <cmath>

namespace tide::metrics {
namespace {

// Beyond the horizon, a cap on the points kept per job and direction (only
// reached when samples come much faster than the poll interval).
constexpr size_t kMaxPoints = 4096;

}  // namespace

void UtilHistory::Trim(std::deque<Point>* points, Timestamp* from, Timestamp now) const {
  // The latest point is never dropped: it is younger than the horizon and
  // the cap is above 1.
  while (points->size() > 1 && (points->front().at < now - options_.horizon || points->size() > kMaxPoints)) {
    *from = std::max(*from, points->front().next);
    points->pop_front();
  }
}

void UtilHistory::Record(model::JobId job, double util, Timestamp at) {
  if (!std::isfinite(util)) return;
  util = std::clamp(util, 0.0, 1.0);
  auto it = series_.find(job);
  if (it == series_.end() || at - it->second.last_at > options_.max_gap) {
    Series s;
    s.start = s.last_at = s.below_from = s.above_from = at;
    s.last_util = util;
    s.highs.push_back({at, util});
    s.lows.push_back({at, util});
    series_[job] = std::move(s);
    return;
  }
  Series& s = it->second;
  if (at < s.last_at) return;
  // The latest sample ends both stacks; its successor is this one.
  s.highs.back().next = at;
  s.lows.back().next = at;
  while (!s.highs.empty() && s.highs.back().util <= util) s.highs.pop_back();
  while (!s.lows.empty() && s.lows.back().util >= util) s.lows.pop_back();
  s.highs.push_back({at, util});
  s.lows.push_back({at, util});
  s.last_at = at;
  s.last_util = util;
  Trim(&s.highs, &s.below_from, at);
  Trim(&s.lows, &s.above_from, at);
}

void UtilHistory::Forget(model::JobId job) { series_.erase(job); }

const UtilHistory::Series* UtilHistory::Current(model::JobId job, Timestamp t) const {
  auto it = series_.find(job);
  if (it == series_.end()) return nullptr;
  const Series& s = it->second;
  if (t < s.last_at || t - s.last_at > options_.max_gap) return nullptr;
  return &s;
}

std::optional<double> UtilHistory::UtilAt(model::JobId job, Timestamp t) const {
  const Series* s = Current(job, t);
  if (s == nullptr) return std::nullopt;
  return s->last_util;
}

std::optional<Timestamp> UtilHistory::BelowSince(model::JobId job, double threshold, Timestamp t) const {
  const Series* s = Current(job, t);
  if (s == nullptr || !(s->last_util < threshold)) return std::nullopt;
  // highs fall from oldest to latest; the latest sample at or above the
  // threshold is the last of those at or above it, and the run starts with
  // the sample after it.
  auto first_below =
      std::partition_point(s->highs.begin(), s->highs.end(), [&](const Point& p) { return p.util >= threshold; });
  const Timestamp start = first_below == s->highs.begin() ? s->start : std::prev(first_below)->next;
  return std::max(start, s->below_from);
}

std::optional<Timestamp> UtilHistory::AboveSince(model::JobId job, double threshold, Timestamp t) const {
  const Series* s = Current(job, t);
  if (s == nullptr || !(s->last_util > threshold)) return std::nullopt;
  auto first_above =
      std::partition_point(s->lows.begin(), s->lows.end(), [&](const Point& p) { return p.util <= threshold; });
  const Timestamp start = first_above == s->lows.begin() ? s->start : std::prev(first_above)->next;
  return std::max(start, s->above_from);
}

Timestamp UtilHistory::NextUtilChange(model::JobId job, Timestamp t) const { return t + options_.poll_interval; }

Timestamp UtilHistory::NextBelowFor(model::JobId job, double threshold, Duration span, Timestamp t) const {
  const auto since = BelowSince(job, threshold, t);
  if (!since) return t + options_.poll_interval;
  return std::max(t, *since + span);
}

Timestamp UtilHistory::NextAboveFor(model::JobId job, double threshold, Duration span, Timestamp t) const {
  const auto since = AboveSince(job, threshold, t);
  if (!since) return t + options_.poll_interval;
  return std::max(t, *since + span);
}

}  // namespace tide::metrics
