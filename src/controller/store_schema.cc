#include "controller/store_schema.h"

#include <iterator>
#include <optional>
#include <string>

#include "controller/sqlite.h"
#include "core/strings.h"

namespace tide::controller {
namespace {

// The schema of version 1, as it was written: a fresh store runs it and
// then every later step. The CHECK constraints repeat the argument
// validation of the store: they are the backstop that keeps a bug from
// writing a row the recovery logic cannot interpret.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE actions (
  key TEXT PRIMARY KEY NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('create', 'delete', 'drain', 'undrain', 'power_down', 'signal',
                                     'requeue', 'cancel')),
  node TEXT NOT NULL,
  job INTEGER NOT NULL,
  pool TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed', 'abandoned')),
  created INTEGER NOT NULL,
  updated INTEGER NOT NULL,
  detail TEXT NOT NULL
);
CREATE INDEX actions_pending ON actions (created) WHERE state = 'pending';
CREATE INDEX actions_created ON actions (created);

CREATE TABLE instances (
  id TEXT PRIMARY KEY NOT NULL,
  node TEXT NOT NULL,
  pool TEXT NOT NULL,
  tier TEXT NOT NULL CHECK (tier IN ('reserved', 'on-demand', 'spot')),
  price_per_hour REAL NOT NULL CHECK (price_per_hour >= 0),
  idempotency_key TEXT NOT NULL,
  created INTEGER NOT NULL,
  deleted INTEGER,  -- NULL while the instance is live
  state TEXT NOT NULL CHECK (state IN ('booting', 'ready', 'releasing', 'deleted', 'lost')),
  CHECK ((deleted IS NULL) = (state IN ('booting', 'ready', 'releasing')))
);
CREATE INDEX instances_live_node ON instances (node) WHERE deleted IS NULL;

-- One closed entry per gone instance: the primary key is what makes a
-- repeated MarkInstanceDeleted harmless.
CREATE TABLE ledger (
  instance_id TEXT PRIMARY KEY NOT NULL REFERENCES instances (id),
  tier TEXT NOT NULL,
  price_per_hour REAL NOT NULL,
  start_at INTEGER NOT NULL,
  end_at INTEGER NOT NULL,
  cost REAL NOT NULL CHECK (cost >= 0)
);

CREATE TABLE decisions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  kind TEXT NOT NULL,
  reason TEXT NOT NULL,
  detail TEXT NOT NULL,
  dry_run INTEGER NOT NULL CHECK (dry_run IN (0, 1))
);

CREATE TABLE job_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('signalled', 'requeued', 'cancelled', 'interrupted')),
  at INTEGER NOT NULL,
  lost_gpu_seconds REAL NOT NULL CHECK (lost_gpu_seconds >= 0),
  detail TEXT NOT NULL
);
CREATE INDEX job_events_job ON job_events (job, at, id);
CREATE INDEX job_events_kind ON job_events (kind);

CREATE TABLE counters (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE kv (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;
)sql";

// Version 2: the live status page's history (RecordSample). Tables are
// added, none changed.
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE IF NOT EXISTS samples (
  at INTEGER PRIMARY KEY NOT NULL,
  demand_gpus REAL NOT NULL CHECK (demand_gpus >= 0),
  running_gpus REAL NOT NULL CHECK (running_gpus >= 0),
  capacity_reserved REAL NOT NULL CHECK (capacity_reserved >= 0),
  capacity_on_demand REAL NOT NULL CHECK (capacity_on_demand >= 0),
  capacity_spot REAL NOT NULL CHECK (capacity_spot >= 0),
  util_gpus REAL CHECK (util_gpus >= 0),  -- NULL: no utilization source
  pending_jobs INTEGER NOT NULL CHECK (pending_jobs >= 0),
  running_jobs INTEGER NOT NULL CHECK (running_jobs >= 0),
  cost_rate_reserved REAL NOT NULL CHECK (cost_rate_reserved >= 0),
  cost_rate_on_demand REAL NOT NULL CHECK (cost_rate_on_demand >= 0),
  cost_rate_spot REAL NOT NULL CHECK (cost_rate_spot >= 0),
  spot_interruptions INTEGER NOT NULL CHECK (spot_interruptions >= 0),
  lost_work_gpu_hours REAL NOT NULL CHECK (lost_work_gpu_hours >= 0)
);
CREATE TABLE IF NOT EXISTS sample_pending (
  at INTEGER NOT NULL REFERENCES samples (at) ON DELETE CASCADE,
  class TEXT NOT NULL,
  jobs INTEGER NOT NULL CHECK (jobs >= 0),
  PRIMARY KEY (at, class)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS job_starts (
  job INTEGER NOT NULL,
  submit INTEGER NOT NULL,
  start INTEGER NOT NULL,
  class TEXT NOT NULL,
  PRIMARY KEY (job, submit)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS job_starts_start ON job_starts (start);
)sql";

// Version 3: job keys are text. SQLite cannot change a column's type, so
// each table is rebuilt (https://sqlite.org/lang_altertable.html#otheralter):
// create the new table, copy the rows, drop the old one, rename, and
// recreate its indexes. Text affinity matters: in an INTEGER column a key
// such as "007" would be stored as 7. No foreign key refers to these tables
// and they have none, so foreign keys stay on. Row ids are copied: actions
// are listed in rowid order among equal times, and job events in id order
// (job events are never deleted, so the AUTOINCREMENT counter, set from the
// copied ids, is where it was).
constexpr const char* kSchemaV3 = R"sql(
CREATE TABLE actions_v3 (
  key TEXT PRIMARY KEY NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('create', 'delete', 'drain', 'undrain', 'power_down', 'signal',
                                     'requeue', 'cancel')),
  node TEXT NOT NULL,
  job TEXT NOT NULL,  -- the workload manager's job key; '' for none
  pool TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed', 'abandoned')),
  created INTEGER NOT NULL,
  updated INTEGER NOT NULL,
  detail TEXT NOT NULL
);
INSERT INTO actions_v3 (rowid, key, kind, node, job, pool, state, created, updated, detail)
  SELECT rowid, key, kind, node, CASE WHEN job = 0 THEN '' ELSE CAST(job AS TEXT) END, pool, state, created,
         updated, detail
  FROM actions;
DROP TABLE actions;
ALTER TABLE actions_v3 RENAME TO actions;
CREATE INDEX actions_pending ON actions (created) WHERE state = 'pending';
CREATE INDEX actions_created ON actions (created);

CREATE TABLE job_events_v3 (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('signalled', 'requeued', 'cancelled', 'interrupted')),
  at INTEGER NOT NULL,
  lost_gpu_seconds REAL NOT NULL CHECK (lost_gpu_seconds >= 0),
  detail TEXT NOT NULL
);
INSERT INTO job_events_v3 (id, job, kind, at, lost_gpu_seconds, detail)
  SELECT id, CAST(job AS TEXT), kind, at, lost_gpu_seconds, detail FROM job_events;
DROP TABLE job_events;
ALTER TABLE job_events_v3 RENAME TO job_events;
CREATE INDEX job_events_job ON job_events (job, at, id);
CREATE INDEX job_events_kind ON job_events (kind);

CREATE TABLE job_starts_v3 (
  job TEXT NOT NULL,
  submit INTEGER NOT NULL,
  start INTEGER NOT NULL,
  class TEXT NOT NULL,
  PRIMARY KEY (job, submit)
) WITHOUT ROWID;
INSERT INTO job_starts_v3 (job, submit, start, class)
  SELECT CAST(job AS TEXT), submit, start, class FROM job_starts;
DROP TABLE job_starts;
ALTER TABLE job_starts_v3 RENAME TO job_starts;
CREATE INDEX job_starts_start ON job_starts (start);
)sql";

// Each step takes the schema from version `to` - 1 to `to`.
struct Step {
  int64_t to;
  const char* sql;
};
constexpr Step kSteps[] = {{1, kSchemaV1}, {2, kSchemaV2}, {3, kSchemaV3}};
static_assert(std::size(kSteps) == kStoreSchemaVersion, "one step per version");

// The version recorded in schema_version; nullopt if it has no row.
Result<std::optional<int64_t>> ReadVersion(SqliteConnection* db) {
  TIDE_ASSIGN_OR_RETURN(auto s, db->Prepare("SELECT MAX(version) FROM schema_version", "reading schema_version"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
  if (!row || s.IsNull(0)) return std::optional<int64_t>();
  return std::optional<int64_t>(s.Int(0));
}

}  // namespace

Status MigrateSchema(SqliteConnection* db) {
  TIDE_ASSIGN_OR_RETURN(auto txn, SqliteTransaction::Begin(db, "creating the schema"));
  TIDE_RETURN_IF_ERROR(db->ExecScript("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
                                      "creating schema_version"));
  TIDE_ASSIGN_OR_RETURN(const std::optional<int64_t> version, ReadVersion(db));
  if (version.has_value() && *version > kStoreSchemaVersion) {
    return absl::FailedPreconditionError(StrCat(db->path(), ": schema version ", *version,
                                                " was written by a newer tide; this one reads version ",
                                                kStoreSchemaVersion, ". Upgrade tide or use another state file"));
  }
  if (version.has_value() && *version < 1) {
    // Version 1 is the first; anything lower was never written by tide.
    return absl::FailedPreconditionError(
        StrCat(db->path(), ": unknown schema version ", *version, "; this is not a tide state file"));
  }
  if (version == kStoreSchemaVersion) return txn.Commit();
  for (const Step& step : kSteps) {
    if (version.has_value() && step.to <= *version) continue;
    const std::string what =
        step.to == 1 ? std::string("creating the schema") : StrCat("upgrading the schema to version ", step.to);
    TIDE_RETURN_IF_ERROR(db->ExecScript(step.sql, what));
  }
  // In the same transaction as the steps: a crash leaves the old version or
  // the new one, never a mix.
  const char* write = version.has_value() ? "UPDATE schema_version SET version = ?"
                                          : "INSERT INTO schema_version (version) VALUES (?)";
  TIDE_ASSIGN_OR_RETURN(auto s, db->Prepare(write, "writing schema_version"));
  TIDE_RETURN_IF_ERROR(s.BindInt(kStoreSchemaVersion).Run());
  return txn.Commit();
}

Status CheckSchemaVersion(SqliteConnection* db) {
  auto version = ReadVersion(db);
  if (!version.ok()) {
    // No schema_version table: SQLite reports it as a generic error.
    if (version.status().code() != absl::StatusCode::kInternal) return version.status();
    return absl::FailedPreconditionError(StrCat(db->path(), ": not a tide state file (no schema_version)"));
  }
  if (*version != kStoreSchemaVersion) {
    return absl::FailedPreconditionError(
        StrCat(db->path(), ": schema version ", version->has_value() ? StrCat(**version) : std::string("none"),
               "; this tide reads ", kStoreSchemaVersion, " (the controller upgrades the file when it opens it)"));
  }
  return OkStatus();
}

}  // namespace tide::controller
