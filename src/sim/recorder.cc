#include "sim/recorder.h"

#include <algorithm>

#include "autoscale/scaleup/scale_up.h"
#include "core/strings.h"
#include "sim/simulator.h"

namespace tide::sim {

using model::Job;
using model::JobState;
using model::Node;

Recorder::Recorder(SimState* sim, bool record_decisions, SimProgress* progress)
    : sim_(sim), record_decisions_(record_decisions), progress_(progress) {
  const size_t classes = sim->spec->priority_classes.size();
  waits_by_class_.assign(classes, {});
  jcts_by_class_.assign(classes, {});
  cost_by_class_.assign(classes, 0.0);
}

void Recorder::Log(Timestamp now, std::string_view kind, std::string_view text) {
  if (!record_decisions_) return;
  decisions_.push_back(StrCat(FormatTimestamp(now), " ", sim_->policy->name, " ", kind, " ", text));
}

void Recorder::Charge(int priority_class, const std::string& team, double cost) {
  cost_by_class_[static_cast<size_t>(priority_class)] += cost;
  cost_by_team_[team.empty() ? "(none)" : team] += cost;
}

void Recorder::Report(const autoscale::Action& a, Timestamp now) {
  for (auto id : a.jobs) {
    if (a.kind == autoscale::ActionKind::kUnschedulable) unschedulable_.insert(id);
    // Said once per job and kind: a waiting job is reported on every pass.
    if (!noted_.insert({id, a.kind}).second) continue;
    if (a.kind == autoscale::ActionKind::kAtMax) {
      // One action names every job waiting for room in a set of pools.
      const Job* j = sim_->PeekJob(id);
      Log(now, "at-max", j == nullptr ? a.reason : autoscale::AtMaxLine(j->spec, a.cause));
      continue;
    }
    Log(now, autoscale::ActionKindName(a.kind), a.reason);
  }
  if (a.jobs.empty()) Log(now, autoscale::ActionKindName(a.kind), a.reason);
}

void Recorder::StartTimeline(Duration step, int64_t max_buckets) {
  std::vector<std::string> classes;
  for (const auto& c : sim_->spec->priority_classes) classes.push_back(c.name);
  timeline_.emplace(model::ReportTimeline(sim_->t0, step, classes, max_buckets));
  timeline_at_ = sim_->t0;
}

void Recorder::RecordTimelineNow(Timestamp now, const model::MetricsView& metrics, double egress) {
  const model::ClusterSpec& spec = *sim_->spec;
  const size_t classes = spec.priority_classes.size();
  using namespace model;  // the ReportLevel positions
  levels_.assign(kNumReportLevels + classes, 0.0);
  double demand = 0, running = 0, util = 0, pending = 0;
  for (const Job& j : sim_->state.jobs) {
    if (j.state == JobState::kPending) {
      demand += j.spec.GpuEquivalents();
      ++pending;
      if (j.spec.priority_class >= 0 && static_cast<size_t>(j.spec.priority_class) < classes) {
        levels_[kNumReportLevels + static_cast<size_t>(j.spec.priority_class)] += 1;
      }
      continue;
    }
    const double held = j.spec.slice_units > 0 ? static_cast<double>(j.Workers()) * j.spec.slice_units / 7.0
                                               : static_cast<double>(j.Workers()) * j.spec.gpus_per_worker;
    demand += held;
    running += held;
    if (const auto u = metrics.UtilAt(j.id, now)) util += *u * held;
  }
  for (const Node& n : sim_->state.nodes) {  // every node is billed from request to release
    const model::NodePool& pool = spec.pools[static_cast<size_t>(n.pool)];
    const auto tier = static_cast<size_t>(pool.tier);
    levels_[kCapacityGpus + tier] += n.gpus;
    levels_[kCostRate + tier] += pool.price_per_hour;
  }
  levels_[kDemandGpus] = demand;
  levels_[kRunningGpus] = running;
  levels_[kUtilGpus] = util;
  levels_[kPendingJobs] = pending;
  totals_ = {egress, static_cast<double>(sim_->result.spot_interruptions), sim_->result.lost_work_gpu_hours};
  timeline_->Set(now, totals_);
  timeline_at_ = now;
}

void Recorder::HoldTimelineNow(Timestamp now) {
  timeline_->Hold(timeline_at_, now, levels_);
  timeline_at_ = now;
}

void Recorder::UpdateProgressNow(Timestamp now) {
  const PolicyResult& r = sim_->result;
  progress_->now.store(ToUnixSeconds(now), std::memory_order_relaxed);
  progress_->jobs_done.store(r.jobs_completed + r.jobs_cancelled, std::memory_order_relaxed);
  progress_->events.store(r.events, std::memory_order_relaxed);
}

PolicyResult Recorder::Finish(const cost::Ledger& ledger, int64_t forecast_nodes_never_used,
                              std::optional<model::Timeline>* timeline,
                              std::vector<std::pair<std::string, std::vector<int64_t>>>* wait_quantiles) {
  const model::ClusterSpec& spec = *sim_->spec;
  if (timeline_) {
    // The percentiles before the figures reorder the waits.
    wait_quantiles->emplace_back("all", model::Percentiles0To100(waits_));
    for (size_t c = 0; c < spec.priority_classes.size(); ++c) {
      if (!waits_by_class_[c].empty()) {
        wait_quantiles->emplace_back(spec.priority_classes[c].name, model::Percentiles0To100(waits_by_class_[c]));
      }
    }
  }
  PolicyResult& r = sim_->result;
  const autoscale::PolicyProfile& policy = *sim_->policy;
  const Timestamp t0 = sim_->t0;
  r.name = policy.name;
  r.kind = policy.kind;
  r.description = policy.description;
  r.start = t0;
  r.horizon = std::max({t0, last_arrival_, last_completion_});
  r.cost = ledger.Summarize(t0, r.horizon);
  r.gpu_hours_busy = static_cast<double>(busy_gpu_seconds_) / 3600.0;
  r.utilization = r.cost.gpu_hours_paid > 0 ? r.gpu_hours_busy / r.cost.gpu_hours_paid : 0;
  r.gpu_util_mean = r.cost.gpu_hours_paid > 0 ? util_gpu_seconds_ / 3600.0 / r.cost.gpu_hours_paid : 0;
  r.wait_s = ComputePercentiles(&waits_);
  r.jct_s = ComputePercentiles(&jcts_);
  for (size_t c = 0; c < spec.priority_classes.size(); ++c) {
    if (waits_by_class_[c].empty() && jcts_by_class_[c].empty()) continue;
    r.wait_by_priority.emplace_back(spec.priority_classes[c].name, ComputePercentiles(&waits_by_class_[c]));
    r.jct_by_priority.emplace_back(spec.priority_classes[c].name, ComputePercentiles(&jcts_by_class_[c]));
  }
  r.jobs_unstarted = r.jobs_total - r.jobs_started;
  double attributed = 0;
  for (size_t c = 0; c < spec.priority_classes.size(); ++c) {
    if (cost_by_class_[c] > 0) r.cost_by_priority.emplace_back(spec.priority_classes[c].name, cost_by_class_[c]);
    attributed += cost_by_class_[c];
  }
  for (const auto& [team, cost] : cost_by_team_) r.cost_by_team.emplace_back(team, cost);
  r.cost_idle = std::max(0.0, r.cost.total - r.cost.egress - attributed);
  r.forecast_nodes_unused += forecast_nodes_never_used;  // never ran anything
  r.jobs_unschedulable = static_cast<int64_t>(unschedulable_.size());
  if (timeline_) {
    HoldTimeline(r.horizon);
    *timeline = timeline_->Finish(r.horizon);
  }
  UpdateProgress(r.horizon);
  return r;
}

}  // namespace tide::sim
