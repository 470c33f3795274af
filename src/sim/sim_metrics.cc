#include "sim/sim_metrics.h"

#include <algorithm>

namespace tide::sim {

const JobRun* SimMetrics::At(const RunSegments& segs, Timestamp t) const {
  for (auto it = segs.rbegin(); it != segs.rend(); ++it) {
    if (it->start() <= t) return &*it;
  }
  return nullptr;
}

std::optional<double> SimMetrics::UtilAt(model::JobId job, Timestamp t) const {
  const RunRecord* rec = runs_->Find(job);
  if (rec == nullptr) return std::nullopt;
  const JobRun* r = At(rec->segments, t);
  if (r == nullptr) return std::nullopt;
  return r->UtilAt(t);
}

template <typename Pred>
std::optional<Timestamp> SimMetrics::Since(model::JobId job, Timestamp t, Pred holds) const {
  const RunRecord* rec = runs_->Find(job);
  if (rec == nullptr) return std::nullopt;
  const RunSegments& segs = rec->segments;
  const JobRun* r = At(segs, t);
  if (r == nullptr || !holds(r->UtilAt(t))) return std::nullopt;
  Timestamp cur = t;
  // Walk back over pieces of constant utilization while the condition holds.
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

// Walks the current segment forward from the start of the run of pieces
// that holds at `t` (or from `t`), looking for a run of at least `span`.
// The current segment is the job's whole known future: a resize starts a new
// one, and the loop is woken then anyway.
template <typename Pred>
Timestamp SimMetrics::NextFor(model::JobId job, Duration span, Timestamp t, Pred holds) const {
  const RunRecord* rec = runs_->Find(job);
  if (rec == nullptr || rec->segments.empty()) return kInfiniteFuture;
  const JobRun& seg = rec->segments.back();
  if (t < seg.start()) return kInfiniteFuture;
  // Most questions of most runs have no answer (a training job is never
  // idle for half an hour): say so without walking every checkpoint. When
  // no later piece may hold for longer than the span, only the run of pieces
  // that holds at `t` (its load phase, say) may reach it.
  const bool later_may = seg.MayHoldLongerThan(holds, span);
  if (!holds(seg.UtilAt(t)) && !later_may) return kInfiniteFuture;
  Timestamp run_start = kInfiniteFuture;  // start of the current run of holding pieces
  if (holds(seg.UtilAt(t))) {
    run_start = *Since(job, t, holds);
  }
  Timestamp cur = t;
  for (int steps = 0; steps < 100000 && cur < seg.EndTime(); ++steps) {
    const Timestamp next = seg.NextChange(cur);
    if (run_start != kInfiniteFuture) {
      // Holds over [cur, next): done if the run reaches `span` by then.
      if (run_start + span < next) return std::max(t, run_start + span);
    }
    if (next >= seg.EndTime()) break;
    cur = next;
    if (holds(seg.UtilAt(cur))) {
      if (run_start == kInfiniteFuture) run_start = cur;
    } else {
      run_start = kInfiniteFuture;
      if (!later_may) break;  // the run that held at `t` fell short
    }
  }
  return kInfiniteFuture;
}

template <typename Pred>
Timestamp SimMetrics::Cached(model::JobId job, bool below, double threshold, Duration span, Timestamp t,
                             Pred holds) const {
  const RunRecord* rec = runs_->Find(job);
  if (rec == nullptr || rec->segments.empty()) return kInfiniteFuture;
  RunAnswers& ra = rec->answers;
  if (ra.segments != rec->segments.size()) {
    ra = RunAnswers{};
    ra.segments = rec->segments.size();
  }
  RunAnswers::Answer* slot = nullptr;
  for (int i = 0; i < ra.count; ++i) {
    RunAnswers::Answer& a = ra.answers[i];
    if (a.below == below && a.threshold == threshold && a.span == span.count()) {
      // An answer u found at some t0 <= t stays right while t <= u: the
      // condition does not hold before u. Past u it must be asked again.
      if (t <= a.at) return a.at;
      slot = &a;
      break;
    }
  }
  const Timestamp u = NextFor(job, span, t, holds);
  if (slot == nullptr) {
    // A new question; past the array's size the first is forgotten.
    const int i = ra.count < static_cast<int>(ra.answers.size()) ? ra.count++ : 0;
    slot = &ra.answers[i];
  }
  *slot = RunAnswers::Answer{below, threshold, span.count(), u};
  return u;
}

Timestamp SimMetrics::NextBelowFor(model::JobId job, double threshold, Duration span, Timestamp t) const {
  return Cached(job, true, threshold, span, t, [threshold](double u) { return u < threshold; });
}

Timestamp SimMetrics::NextAboveFor(model::JobId job, double threshold, Duration span, Timestamp t) const {
  return Cached(job, false, threshold, span, t, [threshold](double u) { return u > threshold; });
}

Timestamp SimMetrics::Due(const DueOrder& q, model::JobId job, Timestamp t) const {
  return q.below ? NextBelowFor(job, q.threshold, Seconds(q.span), t) : NextAboveFor(job, q.threshold, Seconds(q.span), t);
}

bool SimMetrics::VisitByDue(bool below, double threshold, Duration span, Timestamp t,
                            const std::function<bool(model::JobId, Timestamp)>& visit) const {
  DueOrder* q = nullptr;
  for (auto& o : orders_) {
    if (o.below == below && o.threshold == threshold && o.span == span.count()) q = &o;
  }
  // A run with no answer (most: a training job is never idle for long) is
  // left out: its answer stays so until the run changes, and the walk below
  // stops at the first such anyway.
  auto enter = [&](model::JobId job) {
    const RunRecord* rec = runs_->Find(job);
    if (rec == nullptr || rec->segments.empty()) return;
    const Timestamp due = Due(*q, job, t);
    if (due == kInfiniteFuture) return;
    q->due[job] = due;
    q->order.insert({due, job});
  };
  if (q == nullptr) {
    q = &orders_.emplace_back();
    q->below = below;
    q->threshold = threshold;
    q->span = span.count();
    runs_->ForEachRun(enter);
    q->seen = changed_.size();
  }
  // Runs that changed since: their answers are asked again.
  for (; q->seen < changed_.size(); ++q->seen) {
    const model::JobId job = changed_[q->seen];
    if (auto it = q->due.find(job); it != q->due.end()) {
      q->order.erase({it->second, job});
      q->due.erase(it);
    }
    enter(job);
  }
  if (std::all_of(orders_.begin(), orders_.end(), [&](const DueOrder& o) { return o.seen == changed_.size(); })) {
    changed_.clear();
    for (auto& o : orders_) o.seen = 0;
  }
  // An answer found before `t` holds only up to itself: those past it are
  // asked again (they are never earlier than `t`).
  std::vector<model::JobId> stale;
  for (auto it = q->order.begin(); it != q->order.end() && it->first < t; ++it) stale.push_back(it->second);
  for (model::JobId job : stale) {
    q->order.erase({q->due[job], job});
    q->due.erase(job);
    enter(job);
  }
  for (const auto& [due, job] : q->order) {
    if (due == kInfiniteFuture || !visit(job, due)) break;
  }
  return true;
}

Timestamp SimMetrics::NextUtilChange(model::JobId job, Timestamp t) const {
  const RunRecord* rec = runs_->Find(job);
  if (rec == nullptr) return kInfiniteFuture;
  const JobRun* r = At(rec->segments, t);
  return r == nullptr ? kInfiniteFuture : r->NextChange(t);
}

}  // namespace tide::sim
