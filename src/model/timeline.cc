#include "model/timeline.h"

#include "model/cluster.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace tide::model {

const std::vector<double>* Timeline::Find(const std::string& name) const {
  for (size_t i = 0; i < level_names.size(); ++i) {
    if (level_names[i] == name) return &levels[i];
  }
  for (size_t i = 0; i < total_names.size(); ++i) {
    if (total_names[i] == name) return &totals[i];
  }
  return nullptr;
}

TimelineRecorder::TimelineRecorder(Timestamp start, Duration step, std::vector<std::string> level_names,
                                   std::vector<std::string> total_names, int64_t max_buckets,
                                   std::vector<std::pair<std::string, std::string>> integrals)
    : start_(start),
      step_(std::max<int64_t>(1, step.count())),
      max_(std::max<int64_t>(2, max_buckets + (max_buckets % 2))),
      level_names_(std::move(level_names)),
      total_names_(std::move(total_names)),
      integrals_(std::move(integrals)),
      area_(level_names_.size()),
      total_(total_names_.size()),
      held_until_(start) {}

void TimelineRecorder::Compact() {
  const int64_t half = (used_ + 1) / 2;
  for (auto& series : area_) {
    for (int64_t i = 0; i < half; ++i) {
      const size_t a = static_cast<size_t>(2 * i), b = a + 1;
      series[static_cast<size_t>(i)] = series[a] + (b < series.size() ? series[b] : 0.0);
    }
    series.resize(static_cast<size_t>(half));
  }
  for (int64_t i = 0; i < half; ++i) {
    const size_t a = static_cast<size_t>(2 * i), b = a + 1;
    const bool later = b < total_set_.size() && total_set_[b];
    for (auto& series : total_) series[static_cast<size_t>(i)] = later ? series[b] : series[a];
    covered_[static_cast<size_t>(i)] = covered_[a] + (b < covered_.size() ? covered_[b] : 0.0);
    total_set_[static_cast<size_t>(i)] = total_set_[a] || later;
  }
  for (auto& series : total_) series.resize(static_cast<size_t>(half));
  covered_.resize(static_cast<size_t>(half));
  total_set_.resize(static_cast<size_t>(half));
  used_ = half;
  step_ *= 2;
}

int64_t TimelineRecorder::Bucket(Timestamp t) {
  if (t < start_) return -1;
  int64_t b = (t - start_).count() / step_;
  while (b >= max_) {
    Compact();
    b = (t - start_).count() / step_;
  }
  if (b >= used_) {
    used_ = b + 1;
    const auto n = static_cast<size_t>(used_);
    for (auto& series : area_) series.resize(n, 0.0);
    for (auto& series : total_) series.resize(n, 0.0);
    covered_.resize(n, 0.0);
    total_set_.resize(n, 0);
  }
  return b;
}

void TimelineRecorder::Hold(Timestamp from, Timestamp to, const std::vector<double>& values) {
  from = std::max({from, start_, held_until_});
  while (from < to) {
    const int64_t b = Bucket(from);
    const Timestamp bucket_end = start_ + Seconds((b + 1) * step_);
    const Timestamp end = std::min(to, bucket_end);
    const auto seconds = static_cast<double>((end - from).count());
    for (size_t i = 0; i < area_.size() && i < values.size(); ++i) area_[i][static_cast<size_t>(b)] += values[i] * seconds;
    covered_[static_cast<size_t>(b)] += seconds;
    from = end;
  }
  held_until_ = std::max(held_until_, to);
}

void TimelineRecorder::Set(Timestamp at, const std::vector<double>& values) {
  const int64_t b = Bucket(std::max(at, start_));
  for (size_t i = 0; i < total_.size() && i < values.size(); ++i) total_[i][static_cast<size_t>(b)] = values[i];
  total_set_[static_cast<size_t>(b)] = 1;
}

Timeline TimelineRecorder::Finish(Timestamp end) const {
  TimelineRecorder r = *this;
  if (end > start_) r.Bucket(end - Seconds(1));
  Timeline t;
  t.start = r.start_;
  t.step = Seconds(r.step_);
  t.buckets = r.used_;
  t.level_names = r.level_names_;
  t.total_names = r.total_names_;
  const auto n = static_cast<size_t>(r.used_);
  for (const auto& series : r.area_) {
    std::vector<double> mean(n, 0.0);
    for (size_t b = 0; b < n; ++b) mean[b] = r.covered_[b] > 0 ? series[b] / r.covered_[b] : 0.0;
    t.levels.push_back(std::move(mean));
  }
  for (const auto& series : r.total_) {
    std::vector<double> filled(n, 0.0);
    double last = 0;
    for (size_t b = 0; b < n; ++b) {
      if (r.total_set_[b]) last = series[b];
      filled[b] = last;
    }
    t.totals.push_back(std::move(filled));
  }
  for (const auto& [level, total] : r.integrals_) {
    const auto it = std::find(r.level_names_.begin(), r.level_names_.end(), level);
    if (it == r.level_names_.end()) continue;
    const auto& area = r.area_[static_cast<size_t>(it - r.level_names_.begin())];
    std::vector<double> sum(n, 0.0);
    double acc = 0;
    for (size_t b = 0; b < n; ++b) sum[b] = acc += area[b] / 3600.0;
    t.total_names.push_back(total);
    t.totals.push_back(std::move(sum));
  }
  return t;
}

TimelineRecorder ReportTimeline(Timestamp start, Duration step, const std::vector<std::string>& classes,
                                int64_t max_buckets) {
  std::vector<std::string> levels(std::begin(kReportLevels), std::end(kReportLevels));
  for (const auto& c : classes) levels.push_back("pending_jobs/" + c);
  std::vector<std::pair<std::string, std::string>> integrals;
  for (int t = 0; t < kNumTiers; ++t) {
    const std::string tier(TierName(static_cast<Tier>(t)));
    integrals.emplace_back("cost_rate/" + tier, "cost/" + tier);
  }
  return TimelineRecorder(start, step, std::move(levels),
                          std::vector<std::string>(std::begin(kReportTotals), std::end(kReportTotals)), max_buckets,
                          std::move(integrals));
}

std::vector<int64_t> Percentiles0To100(std::vector<int64_t> values) {
  std::vector<int64_t> q;
  if (values.empty()) return q;
  std::sort(values.begin(), values.end());
  const auto n = static_cast<double>(values.size());
  for (int p = 0; p <= 100; ++p) {
    const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * n));
    q.push_back(values[rank == 0 ? 0 : rank - 1]);
  }
  return q;
}

}  // namespace tide::model
