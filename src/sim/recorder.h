// Recorder: the figures of one simulation (waits, completion times, busy and
// utilization-weighted GPU time, cost by class and team), its decision log,
// the HTML report's timeline and the progress shown on another thread. It
// only records; what happened is the cluster's and the cloud's to say.
#ifndef TIDE_SIM_RECORDER_H_
#define TIDE_SIM_RECORDER_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "autoscale/plan.h"
#include "cost/ledger.h"
#include "model/cluster.h"
#include "model/timeline.h"
#include "sim/result.h"
#include "sim/sim_state.h"

namespace tide::sim {

struct SimProgress;

class Recorder {
 public:
  // `sim` is borrowed and outlives the recorder.
  Recorder(SimState* sim, bool record_decisions, SimProgress* progress);

  // A line of the decision log ("<time> <policy> <kind> <text>"), when kept.
  void Log(Timestamp now, std::string_view kind, std::string_view text);
  bool logging() const { return record_decisions_; }

  // A job's first start, `wait` after its submission.
  void Started(const model::Job& job, int64_t wait) {
    waits_.push_back(wait);
    waits_by_class_[static_cast<size_t>(job.spec.priority_class)].push_back(wait);
    ++sim_->result.jobs_started;
  }
  // A job completed `jct` after its submission.
  void Completed(const model::Job& job, int64_t jct, Timestamp now) {
    jcts_.push_back(jct);
    jcts_by_class_[static_cast<size_t>(job.spec.priority_class)].push_back(jct);
    ++sim_->result.jobs_completed;
    last_completion_ = now;
  }
  // GPU time a run held (`gpu_seconds`) and the same weighted by utilization.
  void AddBusy(double gpu_seconds) { busy_gpu_seconds_ += gpu_seconds; }
  void AddUtilized(double gpu_seconds) { util_gpu_seconds_ += gpu_seconds; }
  // Cost charged to a job of `priority_class` and `team`.
  void Charge(int priority_class, const std::string& team, double cost);
  void Arrived(Timestamp at) { last_arrival_ = at; }
  Timestamp last_arrival() const { return last_arrival_; }

  // The reports of a plan: each waiting job said once per kind; a job
  // reported unschedulable counts in the result.
  void Report(const autoscale::Action& a, Timestamp now);

  // The timeline (SimOptions::record_timeline): from `t0` in steps of
  // `step`, doubling to stay within `max_buckets`.
  void StartTimeline(Duration step, int64_t max_buckets);
  // The timeline's levels and totals as they stand after the instant `now`.
  // (Called at every instant: the checks are inline, the work is not.)
  void RecordTimeline(Timestamp now, const model::MetricsView& metrics, double egress) {
    if (timeline_) RecordTimelineNow(now, metrics, egress);
  }
  // Brings it up to `now`: what was recorded last held until then.
  void HoldTimeline(Timestamp now) {
    if (timeline_ && now > timeline_at_) HoldTimelineNow(now);
  }
  void UpdateProgress(Timestamp now) {
    if (progress_ != nullptr) UpdateProgressNow(now);
  }

  // The figures, with cost from `ledger` up to the last event; the
  // timeline and the wait distribution into `out` when kept.
  PolicyResult Finish(const cost::Ledger& ledger, int64_t forecast_nodes_never_used,
                      std::optional<model::Timeline>* timeline,
                      std::vector<std::pair<std::string, std::vector<int64_t>>>* wait_quantiles);
  std::vector<std::string> TakeDecisions() { return std::move(decisions_); }

 private:
  void RecordTimelineNow(Timestamp now, const model::MetricsView& metrics, double egress);
  void HoldTimelineNow(Timestamp now);
  void UpdateProgressNow(Timestamp now);

  SimState* sim_;
  bool record_decisions_;
  SimProgress* progress_;
  std::vector<int64_t> waits_, jcts_;
  std::vector<std::vector<int64_t>> waits_by_class_, jcts_by_class_;
  double busy_gpu_seconds_ = 0;
  double util_gpu_seconds_ = 0;
  std::vector<double> cost_by_class_;
  std::map<std::string, double> cost_by_team_;
  Timestamp last_arrival_ = kInfinitePast;
  Timestamp last_completion_ = kInfinitePast;
  absl::flat_hash_set<std::pair<model::JobId, autoscale::ActionKind>> noted_;
  absl::flat_hash_set<model::JobId> unschedulable_;
  std::vector<std::string> decisions_;
  std::optional<model::TimelineRecorder> timeline_;
  Timestamp timeline_at_{};
  std::vector<double> levels_, totals_;
};

}  // namespace tide::sim

#endif  // TIDE_SIM_RECORDER_H_
