// The store's logs and tallies: the decision log, what tide did to jobs (job
// events), counters and the controller's key/value bookmarks.
#include <array>
#include <cmath>
#include <string_view>

#include "controller/sqlite.h"
#include "controller/store.h"
#include "controller/store_internal.h"
#include "core/strings.h"

namespace tide::controller {
namespace {

using store_internal::NotOneOf;
using store_internal::OneOf;
using store_internal::ReadAll;

constexpr std::array<std::string_view, 4> kJobEventKinds = {"signalled", "requeued", "cancelled", "interrupted"};

}  // namespace

// --- Decisions -------------------------------------------------------------------

Status Store::AppendDecisions(const std::vector<DecisionRecord>& d) {
  if (d.empty()) return OkStatus();
  TIDE_ASSIGN_OR_RETURN(auto txn, SqliteTransaction::Begin(db_.get(), "AppendDecisions"));
  for (const DecisionRecord& r : d) {
    TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("INSERT INTO decisions (at, kind, reason, detail, dry_run) "
                                               "VALUES (?, ?, ?, ?, ?)",
                                               "AppendDecisions"));
    TIDE_RETURN_IF_ERROR(
        s.BindTime(r.at).BindText(r.kind).BindText(r.reason).BindText(r.detail).BindInt(r.dry_run ? 1 : 0).Run());
  }
  return txn.Commit();
}

Result<std::vector<DecisionRecord>> Store::RecentDecisions(int limit) {
  if (limit < 0) return absl::InvalidArgumentError(StrCat("RecentDecisions: limit ", limit, " is negative"));
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT seq, at, kind, reason, detail, dry_run FROM decisions "
                                             "ORDER BY seq DESC LIMIT ?",
                                             "RecentDecisions"));
  s.BindInt(limit);
  return ReadAll<DecisionRecord>(s, [](const SqliteStatement& row) -> Result<DecisionRecord> {
    return DecisionRecord{.seq = row.Int(0),
                          .at = row.Time(1),
                          .kind = row.Text(2),
                          .reason = row.Text(3),
                          .detail = row.Text(4),
                          .dry_run = row.Int(5) != 0};
  });
}

// --- Job events --------------------------------------------------------------------

Status Store::AddJobEvent(const JobEvent& e) {
  const std::string thing = StrCat("job ", Shown(e.job), " event");
  if (!OneOf(e.kind, kJobEventKinds)) return NotOneOf(thing, "kind", e.kind, kJobEventKinds);
  if (!std::isfinite(e.lost_gpu_seconds) || e.lost_gpu_seconds < 0) {
    return absl::InvalidArgumentError(StrCat(thing, ": lost_gpu_seconds ", e.lost_gpu_seconds, " is not >= 0"));
  }
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("INSERT INTO job_events (job, kind, at, lost_gpu_seconds, detail) "
                                             "VALUES (?, ?, ?, ?, ?)",
                                             "AddJobEvent"));
  return s.BindText(e.job).BindText(e.kind).BindTime(e.at).BindReal(e.lost_gpu_seconds).BindText(e.detail).Run();
}

Result<std::vector<JobEvent>> Store::JobEvents(const std::string& job) {
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT job, kind, at, lost_gpu_seconds, detail FROM job_events "
                                             "WHERE job = ? ORDER BY at, id",
                                             "JobEvents"));
  s.BindText(job);
  return ReadAll<JobEvent>(s, [](const SqliteStatement& row) -> Result<JobEvent> {
    return JobEvent{.job = row.Text(0),
                    .kind = row.Text(1),
                    .at = row.Time(2),
                    .lost_gpu_seconds = row.Real(3),
                    .detail = row.Text(4)};
  });
}

Result<double> Store::LostGpuSeconds() {
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT TOTAL(lost_gpu_seconds) FROM job_events", "LostGpuSeconds"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
  return row ? s.Real(0) : 0.0;
}

Result<int64_t> Store::CountJobEvents(const std::string& kind) {
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT COUNT(*) FROM job_events WHERE kind = ?", "CountJobEvents"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(kind).Step());
  return row ? s.Int(0) : int64_t{0};
}

// --- Counters and values -------------------------------------------------------------

Status Store::AddCounter(const std::string& name, int64_t delta) {
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("INSERT INTO counters (name, value) VALUES (?, ?) "
                                             "ON CONFLICT (name) DO UPDATE SET value = value + excluded.value",
                                             "AddCounter"));
  return s.BindText(name).BindInt(delta).Run();
}

Result<int64_t> Store::Counter(const std::string& name) {
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT value FROM counters WHERE name = ?", "Counter"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(name).Step());
  return row ? s.Int(0) : int64_t{0};
}

Status Store::SetValue(const std::string& key, const std::string& value) {
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("INSERT INTO kv (key, value) VALUES (?, ?) "
                                             "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                             "SetValue"));
  return s.BindText(key).BindText(value).Run();
}

Result<std::optional<std::string>> Store::GetValue(const std::string& key) {
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("SELECT value FROM kv WHERE key = ?", "GetValue"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(key).Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(s.Text(0));
}

}  // namespace tide::controller
