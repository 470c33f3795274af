// The live status page's history (docs/live.md, "Live status page"): what
// each successful loop saw (samples, with pending jobs by class) and each
// job's first start.
#include <cmath>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "controller/sqlite.h"
#include "controller/store.h"
#include "core/strings.h"

namespace tide::controller {
namespace {

// InvalidArgument naming `thing` unless every value is finite and >= 0.
Status NonNegative(std::string_view thing, std::initializer_list<std::pair<std::string_view, double>> values) {
  for (const auto& [field, v] : values) {
    if (!std::isfinite(v) || v < 0) {
      return absl::InvalidArgumentError(StrCat(thing, ": ", field, " ", v, " is not >= 0"));
    }
  }
  return OkStatus();
}

Status ValidateSample(const SampleRecord& r) {
  const std::string thing = StrCat("sample at ", FormatTimestamp(r.at));
  TIDE_RETURN_IF_ERROR(NonNegative(thing, {{"demand_gpus", r.demand_gpus},
                                           {"running_gpus", r.running_gpus},
                                           {"capacity_gpus.reserved", r.capacity_gpus.reserved},
                                           {"capacity_gpus.on-demand", r.capacity_gpus.on_demand},
                                           {"capacity_gpus.spot", r.capacity_gpus.spot},
                                           {"util_gpus", r.util_gpus.value_or(0)},
                                           {"pending_jobs", static_cast<double>(r.pending_jobs)},
                                           {"running_jobs", static_cast<double>(r.running_jobs)},
                                           {"cost_rate.reserved", r.cost_rate.reserved},
                                           {"cost_rate.on-demand", r.cost_rate.on_demand},
                                           {"cost_rate.spot", r.cost_rate.spot},
                                           {"spot_interruptions", static_cast<double>(r.spot_interruptions)},
                                           {"lost_work_gpu_hours", r.lost_work_gpu_hours}}));
  for (const auto& [name, jobs] : r.pending_by_class) {
    TIDE_RETURN_IF_ERROR(NonNegative(thing, {{StrCat("pending_jobs/", name), static_cast<double>(jobs)}}));
  }
  return OkStatus();
}

}  // namespace

Status Store::RecordSample(const SampleRecord& r, const std::vector<JobStartRecord>& starts, Timestamp keep_since) {
  TIDE_RETURN_IF_ERROR(ValidateSample(r));
  TIDE_ASSIGN_OR_RETURN(auto txn, SqliteTransaction::Begin(db_.get(), "RecordSample"));
  bool fresh = false;
  {
    TIDE_ASSIGN_OR_RETURN(
        auto s,
        db_->Prepare("INSERT INTO samples (at, demand_gpus, running_gpus, capacity_reserved, capacity_on_demand, "
                     "capacity_spot, util_gpus, pending_jobs, running_jobs, cost_rate_reserved, "
                     "cost_rate_on_demand, cost_rate_spot, spot_interruptions, lost_work_gpu_hours) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (at) DO NOTHING",
                     "RecordSample"));
    s.BindTime(r.at)
        .BindReal(r.demand_gpus)
        .BindReal(r.running_gpus)
        .BindReal(r.capacity_gpus.reserved)
        .BindReal(r.capacity_gpus.on_demand)
        .BindReal(r.capacity_gpus.spot);
    if (r.util_gpus.has_value()) {
      s.BindReal(*r.util_gpus);
    } else {
      s.BindNull();
    }
    TIDE_RETURN_IF_ERROR(s.BindInt(r.pending_jobs)
                             .BindInt(r.running_jobs)
                             .BindReal(r.cost_rate.reserved)
                             .BindReal(r.cost_rate.on_demand)
                             .BindReal(r.cost_rate.spot)
                             .BindInt(r.spot_interruptions)
                             .BindReal(r.lost_work_gpu_hours)
                             .Run());
    fresh = db_->Changes() == 1;
  }
  // A sample already stored at this second keeps its own counts.
  for (size_t i = 0; fresh && i < r.pending_by_class.size(); ++i) {
    const auto& [name, jobs] = r.pending_by_class[i];
    TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("INSERT INTO sample_pending (at, class, jobs) VALUES (?, ?, ?) "
                                               "ON CONFLICT (at, class) DO UPDATE SET jobs = jobs + excluded.jobs",
                                               "RecordSample"));
    TIDE_RETURN_IF_ERROR(s.BindTime(r.at).BindText(name).BindInt(jobs).Run());
  }
  for (const JobStartRecord& j : starts) {
    TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("INSERT INTO job_starts (job, submit, start, class) VALUES (?, ?, ?, ?) "
                                               "ON CONFLICT (job, submit) DO NOTHING",
                                               "RecordSample"));
    TIDE_RETURN_IF_ERROR(s.BindText(j.job).BindTime(j.submit).BindTime(j.start).BindText(j.priority_class).Run());
  }
  {
    // sample_pending goes with its samples (ON DELETE CASCADE).
    TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("DELETE FROM samples WHERE at < ?", "RecordSample"));
    TIDE_RETURN_IF_ERROR(s.BindTime(keep_since).Run());
  }
  {
    TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("DELETE FROM job_starts WHERE start < ?", "RecordSample"));
    TIDE_RETURN_IF_ERROR(s.BindTime(keep_since).Run());
  }
  return txn.Commit();
}

Result<std::vector<SampleRecord>> Store::Samples(Timestamp since) {
  std::vector<SampleRecord> out;
  {
    TIDE_ASSIGN_OR_RETURN(
        auto s,
        db_->Prepare("SELECT at, demand_gpus, running_gpus, capacity_reserved, capacity_on_demand, capacity_spot, "
                     "util_gpus, pending_jobs, running_jobs, cost_rate_reserved, cost_rate_on_demand, "
                     "cost_rate_spot, spot_interruptions, lost_work_gpu_hours FROM samples WHERE at >= ? "
                     "ORDER BY at",
                     "Samples"));
    s.BindTime(since);
    while (true) {
      TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
      if (!row) break;
      SampleRecord r;
      r.at = s.Time(0);
      r.demand_gpus = s.Real(1);
      r.running_gpus = s.Real(2);
      r.capacity_gpus = {s.Real(3), s.Real(4), s.Real(5)};
      if (!s.IsNull(6)) r.util_gpus = s.Real(6);
      r.pending_jobs = s.Int(7);
      r.running_jobs = s.Int(8);
      r.cost_rate = {s.Real(9), s.Real(10), s.Real(11)};
      r.spot_interruptions = s.Int(12);
      r.lost_work_gpu_hours = s.Real(13);
      out.push_back(std::move(r));
    }
  }
  // Both lists are in time order: one pass matches them up.
  TIDE_ASSIGN_OR_RETURN(
      auto s, db_->Prepare("SELECT at, class, jobs FROM sample_pending WHERE at >= ? ORDER BY at, class", "Samples"));
  s.BindTime(since);
  size_t i = 0;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    const Timestamp at = s.Time(0);
    while (i < out.size() && out[i].at < at) ++i;
    if (i == out.size()) break;
    if (out[i].at == at) out[i].pending_by_class.emplace_back(s.Text(1), s.Int(2));
  }
  return out;
}

Result<std::optional<Timestamp>> Store::LatestSample() {
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT MAX(at) FROM samples", "LatestSample"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
  if (!row || s.IsNull(0)) return std::optional<Timestamp>();
  return std::optional<Timestamp>(s.Time(0));
}

Result<std::vector<JobStartRecord>> Store::JobStarts(Timestamp since) {
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT job, submit, start, class FROM job_starts WHERE start >= ? "
                                             "ORDER BY start, job",
                                             "JobStarts"));
  s.BindTime(since);
  std::vector<JobStartRecord> out;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    out.push_back(
        JobStartRecord{.job = s.Text(0), .submit = s.Time(1), .start = s.Time(2), .priority_class = s.Text(3)});
  }
  return out;
}

}  // namespace tide::controller
