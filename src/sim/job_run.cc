#include "sim/job_run.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tide::sim {

JobRun::JobRun(Timestamp start, double progress0, double work, double rate, Duration startup,
               const model::CheckpointPolicy& ckpt, const model::JobPhases& phases)
    : start_(start),
      p0_(std::min(progress0, work)),
      work_(work),
      rate_(rate > 0 ? rate : 1e-9),
      startup_(static_cast<double>(startup.count())),
      interval_(static_cast<double>(ckpt.interval.count())),
      cost_(static_cast<double>(ckpt.cost.count())),
      phases_(phases) {
  work_time_ = (work_ - p0_) / rate_;
  eval_from_ = work_ * (1.0 - std::clamp(phases_.eval_share, 0.0, 1.0));
  // Checkpoints taken strictly before the work is done.
  double ckpts = 0;
  if (interval_ > 0 && work_time_ > 0) ckpts = std::ceil(work_time_ / interval_) - 1;
  const double wall = startup_ + work_time_ + ckpts * cost_;
  end_ = start_ + Seconds(static_cast<int64_t>(std::ceil(wall - 1e-9)));
  eval_at_ = p0_ < eval_from_ ? WallForWork((eval_from_ - p0_) / rate_) : -std::numeric_limits<double>::infinity();
}

double JobRun::WallForWork(double w) const {
  if (interval_ <= 0) return startup_ + w;
  // Checkpoints completed before working time w: those at interval multiples strictly below w.
  const double k = w > 0 ? std::ceil(w / interval_) - 1 : 0;
  return startup_ + w + k * cost_;
}

JobRun::Activity JobRun::ActivityAt(Timestamp t, double* work_time) const {
  const double e = static_cast<double>((t - start_).count()) - startup_;
  if (e < 0) {
    *work_time = 0;
    return Activity::kStartup;
  }
  if (interval_ <= 0) {
    *work_time = std::min(e, work_time_);
    return Activity::kWork;
  }
  const double cycle = interval_ + cost_;
  const double k = std::floor(e / cycle);
  const double rem = e - k * cycle;
  double w = k * interval_ + std::min(rem, interval_);
  if (w >= work_time_) {
    *work_time = work_time_;
    return Activity::kWork;
  }
  *work_time = w;
  return rem < interval_ ? Activity::kWork : Activity::kCheckpoint;
}

double JobRun::ProgressAt(Timestamp t) const {
  if (t >= end_) return work_;
  double w;
  ActivityAt(t, &w);
  return std::min(work_, p0_ + rate_ * w);
}

double JobRun::SavedAt(Timestamp t) const {
  if (interval_ <= 0) return p0_;
  const double e = static_cast<double>((t - start_).count()) - startup_;
  if (e <= 0) return p0_;
  const double cycle = interval_ + cost_;
  double k = std::floor(e / cycle);  // checkpoints completed
  const double taken = work_time_ > 0 ? std::ceil(work_time_ / interval_) - 1 : 0;
  k = std::min(k, taken);
  return std::min(work_, p0_ + rate_ * k * interval_);
}

double JobRun::UtilAt(Timestamp t) const {
  double w;
  switch (ActivityAt(t, &w)) {
    case Activity::kStartup: return phases_.load_util;
    case Activity::kCheckpoint: return phases_.checkpoint_util;
    case Activity::kWork: break;
  }
  return p0_ + rate_ * w >= eval_from_ ? phases_.eval_util : phases_.train_util;
}

Timestamp JobRun::NextChange(Timestamp t) const {
  if (t >= end_) return end_;
  const double e = static_cast<double>((t - start_).count());
  double next = static_cast<double>((end_ - start_).count());
  if (e < startup_) next = std::min(next, startup_);
  // Checkpoint boundaries.
  if (interval_ > 0) {
    const double cycle = interval_ + cost_;
    const double base = std::max(0.0, e - startup_);
    const double k = std::floor(base / cycle);
    for (double b : {k * cycle + interval_, (k + 1) * cycle, (k + 1) * cycle + interval_}) {
      const double at = startup_ + b;
      if (at > e) next = std::min(next, at);
    }
  }
  // The start of evaluation.
  if (eval_at_ > e) next = std::min(next, eval_at_);
  const auto secs = static_cast<int64_t>(std::floor(next + 1e-9));
  return std::max(t + Seconds(1), start_ + Seconds(secs));
}

Timestamp JobRun::PieceEnd(Timestamp t) const {
  // Start-up, interval and cost are whole seconds, so every checkpoint
  // boundary is one: the next is NextChange's answer unless the end or the
  // start of evaluation comes first (or at once), when NextChange decides.
  const int64_t since = (t - start_).count();
  const auto startup = static_cast<int64_t>(startup_), interval = static_cast<int64_t>(interval_);
  const int64_t cycle = interval + static_cast<int64_t>(cost_);
  if (interval <= 0 || t >= end_ || since < startup) return NextChange(t);
  const int64_t rem = (since - startup) % cycle;
  const int64_t b = since + (rem < interval ? interval - rem : cycle - rem);
  const double bd = static_cast<double>(b);
  if (start_ + Seconds(b) > end_ || (eval_at_ > static_cast<double>(since) && bd >= eval_at_)) return NextChange(t);
  return start_ + Seconds(b);
}

Timestamp JobRun::PrevChange(Timestamp t) const {
  const double e = static_cast<double>((t - start_).count());
  double prev = 0;
  if (e >= startup_) prev = startup_;
  if (interval_ > 0 && e > startup_) {
    const double cycle = interval_ + cost_;
    const double k = std::floor((e - startup_) / cycle);
    for (double b : {k * cycle, k * cycle + interval_}) {
      const double at = startup_ + b;
      if (at <= e) prev = std::max(prev, at);
    }
  }
  if (eval_at_ <= e) prev = std::max(prev, eval_at_);  // never, with no evaluation ahead
  return start_ + Seconds(static_cast<int64_t>(std::ceil(prev - 1e-9)));
}

double WorkFor(Duration runtime, const model::JobPhases& phases, const model::CheckpointPolicy& ckpt) {
  const int64_t t = std::max<int64_t>(0, runtime.count() - std::min(runtime, phases.load).count());
  const int64_t i = ckpt.interval.count(), c = ckpt.cost.count();
  if (i <= 0 || t <= i) return static_cast<double>(t);
  // Find k checkpoints with w = t - k*c and ceil(w/i) - 1 == k.
  for (int64_t k = std::max<int64_t>(0, t / (i + c) - 1);; ++k) {
    const int64_t w = t - k * c;
    if (w <= 0) return 0;
    if ((w + i - 1) / i - 1 == k) return static_cast<double>(w);
    if ((w + i - 1) / i - 1 < k) return static_cast<double>(k * i);  // boundary: a checkpoint would end the run
  }
}

Duration StartupFor(const model::JobSpec& spec) { return std::min(spec.runtime, spec.phases.load); }

Timestamp JobRun::StartupEnd() const { return start_ + Seconds(static_cast<int64_t>(std::ceil(startup_))); }

}  // namespace tide::sim
