#include "controller/live_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "controller/live_cost.h"
#include "core/strings.h"
#include "model/timeline.h"
#include "nlohmann/json.hpp"
#include "report/html.h"

namespace tide::controller {

namespace {

using Json = nlohmann::ordered_json;

double* TierOf(ByTier* v, model::Tier tier) {
  switch (tier) {
    case model::Tier::kReserved:
      return &v->reserved;
    case model::Tier::kOnDemand:
      return &v->on_demand;
    case model::Tier::kSpot:
      break;
  }
  return &v->spot;
}

// The pool an instance belongs to: by its pool name, else by its node's.
int PoolOf(const config::Config& config, const Built& built, const providers::Instance& i) {
  if (const int p = config.cluster.PoolIndex(i.pool); p >= 0) return p;
  for (const auto& n : built.state.nodes) {
    if (n.name == i.node) return n.pool;
  }
  return -1;
}

}  // namespace

SampleRecord SampleOf(const config::Config& config, const Built& built,
                      const std::vector<providers::Instance>& instances, Timestamp now) {
  SampleRecord s;
  s.at = now;
  const auto& classes = config.cluster.priority_classes;
  std::vector<int64_t> pending(classes.size(), 0);
  const model::MetricsView* metrics = built.state.metrics;
  if (metrics != nullptr) s.util_gpus = 0.0;
  for (const model::Job& j : built.state.jobs) {
    if (j.state == model::JobState::kPending) {
      s.demand_gpus += j.spec.GpuEquivalents();
      ++s.pending_jobs;
      if (j.spec.priority_class >= 0 && static_cast<size_t>(j.spec.priority_class) < pending.size()) {
        ++pending[static_cast<size_t>(j.spec.priority_class)];
      }
      continue;
    }
    const double held = static_cast<double>(j.Workers()) * j.spec.gpus_per_worker;
    s.demand_gpus += held;
    s.running_gpus += held;
    ++s.running_jobs;
    if (metrics != nullptr) {
      if (const auto u = metrics->UtilAt(j.id, now)) *s.util_gpus += *u * held;
    }
  }
  for (size_t c = 0; c < classes.size(); ++c) {
    if (pending[c] > 0) s.pending_by_class.emplace_back(classes[c].name, pending[c]);
  }
  for (const auto& i : instances) {
    const int p = PoolOf(config, built, i);
    if (p < 0) continue;
    const model::NodePool& pool = config.cluster.pools[static_cast<size_t>(p)];
    *TierOf(&s.capacity_gpus, pool.tier) += pool.type.gpus;
    *TierOf(&s.cost_rate, pool.tier) += pool.price_per_hour;
  }
  return s;
}

std::vector<JobStartRecord> JobStartsOf(const config::Config& config, const Built& built) {
  std::vector<JobStartRecord> out;
  const auto& classes = config.cluster.priority_classes;
  for (const model::Job& j : built.state.jobs) {
    if (j.state == model::JobState::kPending || j.started <= Timestamp{}) continue;
    const int c = j.spec.priority_class;
    out.push_back({.job = j.spec.name,  // the manager's job key
                   .submit = j.spec.submit,
                   .start = j.started,
                   .priority_class = c >= 0 && static_cast<size_t>(c) < classes.size() ? classes[c].name : ""});
  }
  return out;
}

namespace {

double Round2(double v) { return std::round(v * 100.0) / 100.0; }

Duration Interval(const config::Config& config) { return std::max(config.live.loop_interval, Seconds(1)); }

// A sample stands for the time until the next one, but for no longer than
// /healthz waits before it calls the loop stale: a longer gap (tide stopped,
// or its loops failed) is shown as no data, not as the last sample.
Duration LongestHold(const config::Config& config) { return std::max(Interval(config) * 3, Seconds(10)); }

// The timeline of `samples` (oldest first, not empty), and the figures the
// headline takes from it.
struct Replay {
  model::Timeline timeline;
  double running_gpu_hours = 0, paid_gpu_hours = 0, util_gpu_hours = 0;
  bool has_util = false;
};

Replay ReplaySamples(const config::Config& config, const std::vector<SampleRecord>& samples, Timestamp now) {
  Replay out;
  for (const auto& s : samples) out.has_util |= s.util_gpus.has_value();
  std::vector<std::string> classes;
  std::map<std::string, size_t> class_level;
  for (const auto& c : config.cluster.priority_classes) {
    class_level[c.name] = model::kNumReportLevels + classes.size();
    classes.push_back(c.name);
  }
  model::TimelineRecorder recorder = model::ReportTimeline(samples.front().at, Interval(config), classes);
  const Duration longest = LongestHold(config);
  Timestamp end = samples.front().at;
  std::vector<double> values(model::kNumReportLevels + classes.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const SampleRecord& s = samples[i];
    const Timestamp next = i + 1 < samples.size() ? samples[i + 1].at : std::max(now, s.at + Seconds(1));
    const Timestamp until = std::min(next, s.at + longest);
    std::fill(values.begin(), values.end(), 0.0);
    using namespace model;  // the ReportLevel positions
    values[kDemandGpus] = s.demand_gpus;
    values[kRunningGpus] = s.running_gpus;
    values[kUtilGpus] = s.util_gpus.value_or(0);
    values[kPendingJobs] = static_cast<double>(s.pending_jobs);
    for (const auto& [offset, by_tier] : {std::pair{kCapacityGpus, &s.capacity_gpus}, std::pair{kCostRate, &s.cost_rate}}) {
      values[offset + static_cast<size_t>(model::Tier::kReserved)] = by_tier->reserved;
      values[offset + static_cast<size_t>(model::Tier::kOnDemand)] = by_tier->on_demand;
      values[offset + static_cast<size_t>(model::Tier::kSpot)] = by_tier->spot;
    }
    for (const auto& [name, jobs] : s.pending_by_class) {
      if (auto it = class_level.find(name); it != class_level.end()) values[it->second] += static_cast<double>(jobs);
    }
    recorder.Set(s.at, {0.0, static_cast<double>(s.spot_interruptions), s.lost_work_gpu_hours});
    recorder.Hold(s.at, until, values);
    const double hours = static_cast<double>((until - s.at).count()) / 3600.0;
    out.running_gpu_hours += s.running_gpus * hours;
    out.paid_gpu_hours += s.capacity_gpus.total() * hours;
    out.util_gpu_hours += s.util_gpus.value_or(0) * hours;
    end = std::max(end, until);
  }
  out.timeline = recorder.Finish(end);
  if (!out.has_util) {  // no utilization source: unknown, not 0
    for (size_t i = 0; i < out.timeline.level_names.size(); ++i) {
      if (out.timeline.level_names[i] == "util_gpus") {
        out.timeline.level_names.erase(out.timeline.level_names.begin() + static_cast<std::ptrdiff_t>(i));
        out.timeline.levels.erase(out.timeline.levels.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
  }
  return out;
}

Json PercentilesObject(const std::vector<int64_t>& waits, const std::vector<int64_t>& q) {
  Json j;
  double sum = 0;
  for (int64_t w : waits) sum += static_cast<double>(w);
  j["p50"] = q.empty() ? 0 : q[50];
  j["p95"] = q.empty() ? 0 : q[95];
  j["p99"] = q.empty() ? 0 : q[99];
  j["mean"] = waits.empty() ? 0.0 : Round2(sum / static_cast<double>(waits.size()));
  j["max"] = q.empty() ? 0 : q[100];
  j["count"] = waits.size();
  return j;
}

std::string Describe(const config::Config& config) {
  std::vector<std::string> pools;
  for (const auto& p : config.cluster.pools) {
    pools.push_back(
        StrCat(p.name, " (", model::TierName(p.tier), ", up to ", p.max_nodes, " x ", p.type.gpus, " GPUs)"));
  }
  return StrCat(StrJoin(pools, ", "), "; provider ", config.live.provider.kind);
}

}  // namespace

Result<std::string> LiveReportJson(const config::Config& config, Store* store, Timestamp now,
                                   const LiveReportOptions& options) {
  const Timestamp since = now - options.history;
  TIDE_ASSIGN_OR_RETURN(const auto samples, store->Samples(since));
  TIDE_ASSIGN_OR_RETURN(const auto starts, store->JobStarts(since));
  TIDE_ASSIGN_OR_RETURN(const CostByTier cost, LiveCost(store, now));
  TIDE_ASSIGN_OR_RETURN(const auto instances, store->Instances(/*include_deleted=*/true));
  TIDE_ASSIGN_OR_RETURN(const int64_t spot, store->Counter("spot_interruptions"));
  TIDE_ASSIGN_OR_RETURN(const double lost_gpu_seconds, store->LostGpuSeconds());

  report::ReportData data;
  data.mode = "live";
  data.title = StrCat("tide run: ", config.source);
  data.time_zone = config.DisplayTimeZone();
  data.currency = config.cluster.currency;
  for (const auto& c : config.cluster.priority_classes) data.classes.push_back(c.name);
  data.meta.push_back(options.dry_run ? std::string("dry run: nothing is recorded")
                                      : StrCat("state ", config.live.state));
  data.meta.push_back(StrCat("loop every ", FormatDuration(Interval(config))));
  data.meta.push_back(samples.empty()
                          ? std::string("no loop recorded yet")
                          : StrCat(samples.size(), " loops recorded since ", FormatTimestamp(samples.front().at),
                                   ", the last at ", FormatTimestamp(samples.back().at)));
  data.meta.push_back(StrCat("history kept ", FormatDuration(options.history)));

  report::ReportPolicy policy;
  policy.name = "live";
  policy.description = Describe(config);
  std::optional<Replay> replay;
  if (!samples.empty()) {
    replay = ReplaySamples(config, samples, now);
    policy.timeline = &replay->timeline;
  }

  std::vector<int64_t> all;
  std::map<std::string, std::vector<int64_t>> by_class;
  for (const auto& s : starts) {
    const int64_t wait = std::max<int64_t>(0, (s.start - s.submit).count());
    all.push_back(wait);
    by_class[s.priority_class].push_back(wait);
  }
  const std::vector<int64_t> all_q = model::Percentiles0To100(all);
  policy.wait_quantiles.emplace_back("all", all_q);
  Json wait_by_class = Json::object();
  for (const auto& c : config.cluster.priority_classes) {
    auto it = by_class.find(c.name);
    if (it == by_class.end()) continue;
    auto q = model::Percentiles0To100(it->second);
    wait_by_class[c.name] = PercentilesObject(it->second, q);
    policy.wait_quantiles.emplace_back(c.name, std::move(q));
  }

  double gpu_hours_paid = 0;
  int64_t live_nodes = 0;
  for (const auto& r : instances) {
    if (r.deleted == kInfiniteFuture) ++live_nodes;
    const int p = config.cluster.PoolIndex(r.pool);
    if (p < 0) continue;  // a pool no longer configured: its GPUs are unknown
    const Timestamp end = std::min(r.deleted, now);
    if (end > r.created) {
      gpu_hours_paid += config.cluster.pools[static_cast<size_t>(p)].type.gpus *
                        static_cast<double>((end - r.created).count()) / 3600.0;
    }
  }

  Json p;
  p["name"] = policy.name;
  p["description"] = policy.description;
  p["cost_total"] = Round2(cost.total());
  p["cost_by_tier"] = {
      {"reserved", Round2(cost.reserved)}, {"on-demand", Round2(cost.on_demand)}, {"spot", Round2(cost.spot)}};
  p["gpu_hours_paid"] = Round2(gpu_hours_paid);
  if (replay && replay->paid_gpu_hours > 0) {
    p["utilization"] = std::round(replay->running_gpu_hours / replay->paid_gpu_hours * 1e4) / 1e4;
    if (replay->has_util) {
      p["gpu_util_mean"] = std::round(replay->util_gpu_hours / replay->paid_gpu_hours * 1e4) / 1e4;
    }
  }
  if (!all.empty()) {
    p["wait_s"] = PercentilesObject(all, all_q);
    p["wait_s_by_priority"] = std::move(wait_by_class);
  }
  p["jobs_started"] = starts.size();
  if (!samples.empty()) {
    p["jobs_pending"] = samples.back().pending_jobs;
    p["jobs_running"] = samples.back().running_jobs;
  }
  p["nodes_bought"] = instances.size();
  p["nodes_live"] = live_nodes;
  p["spot_interruptions"] = spot;
  p["lost_work_gpu_hours"] = Round2(lost_gpu_seconds / 3600.0);
  if (!samples.empty()) p["start"] = FormatTimestamp(samples.front().at);
  p["end"] = FormatTimestamp(now);
  Json summary;
  summary["policies"] = Json::array({std::move(p)});
  data.summary_json = summary.dump();
  data.policies.push_back(std::move(policy));
  return report::ReportDataJson(data);
}

std::string LiveReportPage(const config::Config& config) {
  return report::RenderLiveHtml(kReportPath, static_cast<int>(Interval(config).count()));
}

LiveReportSource::LiveReportSource(const config::Config& config, std::string state, LiveReportOptions options)
    : config_(config), state_(std::move(state)), options_(options) {}

Result<std::string> LiveReportSource::Json(Timestamp now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (reader_ == nullptr) {
    // A dry run keeps its store in memory: an empty one stands for it.
    auto opened = options_.dry_run ? Store::Open(":memory:") : Store::OpenReadOnly(state_);
    if (!opened.ok()) return opened.status();
    reader_ = std::move(*opened);
  }
  auto latest = reader_->LatestSample();
  if (!latest.ok()) {
    reader_.reset();
    return latest.status();
  }
  if (!cached_.empty() && *latest == cached_latest_ && now >= cached_at_ && now - cached_at_ < Interval(config_)) {
    return cached_;
  }
  auto json = LiveReportJson(config_, reader_.get(), now, options_);
  if (!json.ok()) {
    reader_.reset();
    cached_.clear();
    return json;
  }
  cached_ = *json;
  cached_latest_ = *latest;
  cached_at_ = now;
  return json;
}

}  // namespace tide::controller
