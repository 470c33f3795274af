#include "sim/sim_metrics.h"

namespace tide::sim {

const JobRun* SimMetrics::At(const RunSegments& segs, Timestamp t) const {
  for (auto it = segs.rbegin(); it != segs.rend(); ++it) {
    if (it->start() <= t) return &*it;
  }
  return nullptr;
}

std::optional<double> SimMetrics::UtilAt(model::JobId job, Timestamp t) const {
  auto it = runs_->find(job);
  if (it == runs_->end()) return std::nullopt;
  const JobRun* r = At(it->second, t);
  if (r == nullptr) return std::nullopt;
  return r->UtilAt(t);
}

template <typename Pred>
std::optional<Timestamp> SimMetrics::Since(model::JobId job, Timestamp t, Pred holds) const {
  auto it = runs_->find(job);
  if (it == runs_->end()) return std::nullopt;
  const RunSegments& segs = it->second;
  const JobRun* r = At(segs, t);
  if (r == nullptr || !holds(r->UtilAt(t))) return std::nullopt;
  Timestamp cur = t;
  // Walk back over pieces of constant utilisation while the condition holds.
  for (int steps = 0; steps < 10000; ++steps) {
    const Timestamp piece = r->PrevChange(cur);
    if (piece <= r->start()) {
      // Into the previous segment of this run, if any.
      const JobRun* prev = nullptr;
      for (size_t i = 1; i < segs.size(); ++i) {
        if (&segs[i] == r) prev = &segs[i - 1];
      }
      const Timestamp before = r->start() - Seconds(1);
      if (prev == nullptr || !holds(prev->UtilAt(before))) return r->start();
      r = prev;
      cur = before;
      continue;
    }
    const Timestamp before = piece - Seconds(1);
    if (!holds(r->UtilAt(before))) return piece;
    cur = before;
  }
  return cur;
}

std::optional<Timestamp> SimMetrics::BelowSince(model::JobId job, double threshold, Timestamp t) const {
  return Since(job, t, [threshold](double u) { return u < threshold; });
}

std::optional<Timestamp> SimMetrics::AboveSince(model::JobId job, double threshold, Timestamp t) const {
  return Since(job, t, [threshold](double u) { return u > threshold; });
}

Timestamp SimMetrics::NextUtilChange(model::JobId job, Timestamp t) const {
  auto it = runs_->find(job);
  if (it == runs_->end()) return kInfiniteFuture;
  const JobRun* r = At(it->second, t);
  return r == nullptr ? kInfiniteFuture : r->NextChange(t);
}

}  // namespace tide::sim
