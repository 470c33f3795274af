// The state store's schema (controller/store.h) and its migrations.
//
// Versions:
//   1  actions, instances, ledger, decisions, job_events, counters, kv.
//   2  the live status page's history: samples, sample_pending, job_starts.
//   3  job keys are text (a workload manager's job key, docs/live.md):
//      actions.job, job_events.job and job_starts.job. A numeric Slurm id
//      of an older file becomes its decimal string; an action's 0 ("no
//      job") becomes ''.
// A fresh file is created as version 1 and taken through every later step,
// so a new file and an upgraded one have the same schema.
#ifndef TIDE_CONTROLLER_STORE_SCHEMA_H_
#define TIDE_CONTROLLER_STORE_SCHEMA_H_

#include <cstdint>

#include "core/status.h"

namespace tide::controller {

class SqliteConnection;

// The schema version this build writes and reads.
inline constexpr int64_t kStoreSchemaVersion = 3;

// Brings the database on `db` to kStoreSchemaVersion in one transaction:
// creates the schema in an empty database, upgrades an older tide's file in
// place (a crash leaves it at its old version or the new one, never
// between), and changes nothing in a current one. FailedPrecondition naming
// the file for a version written by a newer tide or one below 1 (not a tide
// file); SQLite errors as in controller/sqlite.h.
Status MigrateSchema(SqliteConnection* db);

// For a connection that must not write (a reader beside the controller's
// writer): OK only if the schema is exactly kStoreSchemaVersion;
// FailedPrecondition naming the file otherwise, and for a database without
// tide's schema.
Status CheckSchemaVersion(SqliteConnection* db);

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_STORE_SCHEMA_H_
