// The schema: creation, refusing what this tide cannot read, and the upgrades
// of files older tides wrote.
#include "controller/store_schema.h"

#include <string>

#include "controller/live_cost.h"
#include "controller/store.h"
#include "controller/store_fixtures_test.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::controller {
namespace {

using testing::At;
using testing::kT0;
using testing::Msg;
using testing::OpenOrDie;
using testing::StoreFileTest;
using ::testing::HasSubstr;

// The schema as versions 1 and 2 wrote it (job ids were integers): the
// test's own copy, so that a change to the code's DDL cannot hide a broken
// upgrade of the files older tides left behind.
constexpr const char* kVersion1Ddl = R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE actions (
  key TEXT PRIMARY KEY NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('create', 'delete', 'drain', 'undrain', 'power_down', 'signal',
                                     'requeue', 'cancel')),
  node TEXT NOT NULL, job INTEGER NOT NULL, pool TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed', 'abandoned')),
  created INTEGER NOT NULL, updated INTEGER NOT NULL, detail TEXT NOT NULL);
CREATE INDEX actions_pending ON actions (created) WHERE state = 'pending';
CREATE INDEX actions_created ON actions (created);
CREATE TABLE instances (
  id TEXT PRIMARY KEY NOT NULL, node TEXT NOT NULL, pool TEXT NOT NULL,
  tier TEXT NOT NULL CHECK (tier IN ('reserved', 'on-demand', 'spot')),
  price_per_hour REAL NOT NULL CHECK (price_per_hour >= 0), idempotency_key TEXT NOT NULL,
  created INTEGER NOT NULL, deleted INTEGER,
  state TEXT NOT NULL CHECK (state IN ('booting', 'ready', 'releasing', 'deleted', 'lost')),
  CHECK ((deleted IS NULL) = (state IN ('booting', 'ready', 'releasing'))));
CREATE INDEX instances_live_node ON instances (node) WHERE deleted IS NULL;
CREATE TABLE ledger (
  instance_id TEXT PRIMARY KEY NOT NULL REFERENCES instances (id), tier TEXT NOT NULL,
  price_per_hour REAL NOT NULL, start_at INTEGER NOT NULL, end_at INTEGER NOT NULL,
  cost REAL NOT NULL CHECK (cost >= 0));
CREATE TABLE decisions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, kind TEXT NOT NULL, reason TEXT NOT NULL,
  detail TEXT NOT NULL, dry_run INTEGER NOT NULL CHECK (dry_run IN (0, 1)));
CREATE TABLE job_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT, job INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('signalled', 'requeued', 'cancelled', 'interrupted')),
  at INTEGER NOT NULL, lost_gpu_seconds REAL NOT NULL CHECK (lost_gpu_seconds >= 0), detail TEXT NOT NULL);
CREATE INDEX job_events_job ON job_events (job, at, id);
CREATE INDEX job_events_kind ON job_events (kind);
CREATE TABLE counters (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE kv (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;
)sql";
constexpr const char* kVersion2Ddl = R"sql(
CREATE TABLE samples (
  at INTEGER PRIMARY KEY NOT NULL, demand_gpus REAL NOT NULL, running_gpus REAL NOT NULL,
  capacity_reserved REAL NOT NULL, capacity_on_demand REAL NOT NULL, capacity_spot REAL NOT NULL, util_gpus REAL,
  pending_jobs INTEGER NOT NULL, running_jobs INTEGER NOT NULL, cost_rate_reserved REAL NOT NULL,
  cost_rate_on_demand REAL NOT NULL, cost_rate_spot REAL NOT NULL, spot_interruptions INTEGER NOT NULL,
  lost_work_gpu_hours REAL NOT NULL);
CREATE TABLE sample_pending (
  at INTEGER NOT NULL REFERENCES samples (at) ON DELETE CASCADE, class TEXT NOT NULL, jobs INTEGER NOT NULL,
  PRIMARY KEY (at, class)) WITHOUT ROWID;
CREATE TABLE job_starts (
  job INTEGER NOT NULL, submit INTEGER NOT NULL, start INTEGER NOT NULL, class TEXT NOT NULL,
  PRIMARY KEY (job, submit)) WITHOUT ROWID;
CREATE INDEX job_starts_start ON job_starts (start);
)sql";

TEST_F(StoreFileTest, SchemaCreation) {
  auto store = OpenOrDie(path_);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Query("SELECT version FROM schema_version"), StrCat(Store::kSchemaVersion));
  for (const char* table : {"actions", "instances", "ledger", "decisions", "job_events", "counters", "kv", "samples",
                            "sample_pending", "job_starts"}) {
    EXPECT_EQ(Query(StrCat("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '", table, "'")), "1")
        << table;
  }
  // Opening again neither fails nor writes a second version row.
  store.reset();
  ASSERT_NE(OpenOrDie(path_), nullptr);
  EXPECT_EQ(Query("SELECT COUNT(*) FROM schema_version"), "1");
}

TEST_F(StoreFileTest, NewerSchemaVersionRefused) {
  ASSERT_NE(OpenOrDie(path_), nullptr);
  Query(StrCat("UPDATE schema_version SET version = ", Store::kSchemaVersion + 1));
  auto store = Store::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Msg(store.status()), HasSubstr(path_));
  EXPECT_THAT(Msg(store.status()), HasSubstr("newer"));
  EXPECT_EQ(Query("SELECT version FROM schema_version"), StrCat(Store::kSchemaVersion + 1));  // untouched
}

TEST_F(StoreFileTest, UpgradesAVersion1FileInPlace) {
  Exec(kVersion1Ddl);
  Exec(StrCat("INSERT INTO schema_version VALUES (1);"
              "INSERT INTO instances VALUES ('i-1', 'gpu1', 'a100', 'on-demand', 36, 'c-1', ",
              ToUnixSeconds(At(0)), ", NULL, 'ready');"
              "INSERT INTO counters VALUES ('spot_interruptions', 2);"
              "INSERT INTO actions VALUES ('s-1', 'signal', '', 42, '', 'pending', ",
              ToUnixSeconds(At(5)), ", ", ToUnixSeconds(At(5)), ", 'requeue');"));

  auto store = OpenOrDie(path_);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Query("SELECT version FROM schema_version"), StrCat(Store::kSchemaVersion));
  EXPECT_EQ(Query("SELECT COUNT(*) FROM schema_version"), "1");
  // What version 1 held is still there, and the new tables work.
  EXPECT_EQ((*store->InstanceByNode("gpu1"))->id, "i-1");
  EXPECT_EQ(*store->Counter("spot_interruptions"), 2);
  EXPECT_EQ((*store->GetAction("s-1"))->job, "42");
  SampleRecord sample{.at = At(10), .demand_gpus = 4, .pending_by_class = {{"high", 1}}};
  const JobStartRecord start{.job = "7", .submit = At(0), .start = At(5), .priority_class = "high"};
  ASSERT_TRUE(store->RecordSample(sample, {start}, kInfinitePast).ok());
  EXPECT_EQ(store->Samples(kInfinitePast)->size(), 1u);
  EXPECT_EQ(store->JobStarts(kInfinitePast)->size(), 1u);
  // Opening again changes nothing.
  store.reset();
  ASSERT_NE(OpenOrDie(path_), nullptr);
  EXPECT_EQ(Query("SELECT version FROM schema_version"), StrCat(Store::kSchemaVersion));
  EXPECT_EQ(Query("SELECT COUNT(*) FROM samples"), "1");
}

// Version 3 made job keys text: a version 2 file's numeric Slurm ids read
// back as their decimal strings, an action's 0 (no job) as "", and every
// other record is as it was.
TEST_F(StoreFileTest, UpgradesAVersion2FileWithNumericJobIds) {
  Exec(kVersion1Ddl);
  Exec(kVersion2Ddl);
  const int64_t t0 = ToUnixSeconds(kT0);
  Exec(StrCat(
      "INSERT INTO schema_version VALUES (2);"
      // Two pending actions at one time: listed by insertion (rowid).
      "INSERT INTO actions (rowid, key, kind, node, job, pool, state, created, updated, detail) VALUES "
      "(3, 'z-create', 'create', 'gpu1', 0, 'a100', 'pending', ", t0 + 100, ", ", t0 + 100, ", 'queue'),"
      "(7, 'a-signal', 'signal', '', 1234, '', 'pending', ", t0 + 100, ", ", t0 + 100, ", 'requeue'),"
      "(1, 'd-1', 'delete', 'gpu2', 0, 'a100', 'done', ", t0 + 50, ", ", t0 + 60, ", 'i-0');"
      "INSERT INTO job_events (job, kind, at, lost_gpu_seconds, detail) VALUES "
      "(1234, 'signalled', ", t0 + 100, ", 0, 'reclaim'),"
      "(77, 'interrupted', ", t0 + 150, ", 10, ''),"
      "(1234, 'requeued', ", t0 + 200, ", 3600, 'old');"
      "INSERT INTO job_starts VALUES (1234, ", t0 + 50, ", ", t0 + 100, ", 'high');"
      "INSERT INTO instances VALUES ('i-0', 'gpu2', 'a100', 'spot', 12, 'c-0', ", t0, ", ", t0 + 1800,
      ", 'deleted');"
      "INSERT INTO ledger VALUES ('i-0', 'spot', 12, ", t0, ", ", t0 + 1800, ", 6);"
      "INSERT INTO decisions (at, kind, reason, detail, dry_run) VALUES (", t0 + 1, ", 'scale_up', 'r', '', 0);"));

  auto store = OpenOrDie(path_);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Query("SELECT version FROM schema_version"), "3");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM schema_version"), "1");
  for (const char* table : {"actions", "job_events", "job_starts"}) {
    EXPECT_EQ(Query(StrCat("SELECT COUNT(*) FROM ", table, " WHERE typeof(job) != 'text'")), "0") << table;
  }
  EXPECT_EQ(Query("PRAGMA foreign_key_check"), "");
  EXPECT_EQ(Query("PRAGMA integrity_check"), "ok");

  auto pending = store->PendingActions();
  ASSERT_TRUE(pending.ok()) << pending.status();
  ASSERT_EQ(pending->size(), 2u);
  EXPECT_EQ((*pending)[0].key, "z-create");
  EXPECT_EQ((*pending)[0].job, "");
  EXPECT_EQ((*pending)[1].key, "a-signal");
  EXPECT_EQ((*pending)[1].job, "1234");
  EXPECT_EQ((*pending)[1].created, At(100));
  EXPECT_EQ((*store->GetAction("d-1"))->job, "");
  EXPECT_EQ((*store->GetAction("d-1"))->detail, "i-0");

  auto events = store->JobEvents("1234");
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].job, "1234");
  EXPECT_EQ((*events)[0].kind, "signalled");
  EXPECT_EQ((*events)[1].lost_gpu_seconds, 3600);
  EXPECT_EQ(store->JobEvents("77")->size(), 1u);
  EXPECT_DOUBLE_EQ(*store->LostGpuSeconds(), 3610);
  EXPECT_EQ(*store->CountJobEvents("requeued"), 1);
  auto starts = store->JobStarts(kInfinitePast);
  ASSERT_EQ(starts->size(), 1u);
  EXPECT_EQ((*starts)[0].job, "1234");
  EXPECT_EQ((*starts)[0].submit, At(50));
  EXPECT_EQ((*starts)[0].priority_class, "high");
  EXPECT_EQ(store->RecentDecisions(10)->size(), 1u);
  EXPECT_DOUBLE_EQ(LiveCost(store.get(), At(3600))->spot, 6.0);

  // New events follow the old ones (ids keep counting up), and text keys are
  // stored as given.
  ASSERT_TRUE(store->AddJobEvent({.job = "1234", .kind = "requeued", .at = At(200), .detail = "new"}).ok());
  EXPECT_EQ(store->JobEvents("1234")->back().detail, "new");
  ASSERT_TRUE(store->AddJobEvent({.job = "007", .kind = "cancelled", .at = At(300)}).ok());
  EXPECT_EQ(store->JobEvents("007")->size(), 1u);
  EXPECT_TRUE(store->JobEvents("7")->empty());
  ASSERT_TRUE(store->RecordSample({.at = At(400)}, {{.job = "1234", .submit = At(50), .start = At(100)}}, kInfinitePast)
                  .ok());
  EXPECT_EQ(store->JobStarts(kInfinitePast)->size(), 1u);  // the migrated start is recognised

  // Opening again changes nothing.
  store.reset();
  ASSERT_NE(OpenOrDie(path_), nullptr);
  EXPECT_EQ(Query("SELECT version FROM schema_version"), "3");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM job_events"), "5");
}

TEST_F(StoreFileTest, VersionZeroIsNotATideFile) {
  ASSERT_NE(OpenOrDie(path_), nullptr);
  Query("UPDATE schema_version SET version = 0");
  auto store = Store::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Msg(store.status()), HasSubstr("not a tide state file"));
}

}  // namespace
}  // namespace tide::controller
