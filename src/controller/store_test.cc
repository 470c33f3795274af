#include "controller/store.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/strings.h"
#include "core/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Msg(const Status& s) { return std::string(Message(s)); }

constexpr Timestamp kT0 = FromUnixSeconds(1767571200);  // 2026-01-05T00:00:00Z
Timestamp At(int64_t seconds) { return kT0 + Seconds(seconds); }

ActionRecord Action(std::string key, std::string kind = "create", std::string node = "gpu1") {
  return ActionRecord{
      .key = std::move(key), .kind = std::move(kind), .node = std::move(node), .pool = "a100", .created = At(0)};
}

InstanceRecord Instance(std::string id, std::string node, std::string tier = "on-demand", double price = 36.0,
                        int64_t created = 0) {
  return InstanceRecord{.id = std::move(id),
                        .node = std::move(node),
                        .pool = "a100",
                        .tier = std::move(tier),
                        .price_per_hour = price,
                        .created = At(created),
                        .state = "booting"};
}

std::unique_ptr<Store> OpenOrDie(const std::string& path) {
  auto store = Store::Open(path);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

// A fresh directory per test, removed afterwards.
class StoreFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = StrCat(::testing::TempDir(), "/tide_store_test_XXXXXX");
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = StrCat(dir_, "/state.db");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `sql` on a separate raw connection and returns the first column of
  // the first row as text ("" if no row).
  std::string Query(const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    std::string out;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    const int rc = sqlite3_step(stmt);
    EXPECT_TRUE(rc == SQLITE_ROW || rc == SQLITE_DONE) << sqlite3_errmsg(db);
    if (rc == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return out;
  }

  // Runs `body` in a child process that is then killed with SIGKILL: no
  // destructor, no sqlite3_close, no checkpoint (so `body` must not let its
  // Store be destroyed). Returns false if the body failed (the child then
  // exits 1 instead).
  bool RunThenKill9(const std::function<bool()>& body) {
    const pid_t pid = fork();
    if (pid == 0) {
      if (!body()) _exit(1);
      raise(SIGKILL);
      _exit(2);
    }
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  }

  std::string dir_;
  std::string path_;
};

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

TEST_F(StoreFileTest, WalModeOn) {
  auto store = OpenOrDie(path_);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Query("PRAGMA journal_mode"), "wal");
  ASSERT_TRUE(store->AddCounter("x", 1).ok());
  EXPECT_TRUE(std::filesystem::exists(StrCat(path_, "-wal")));
}

TEST_F(StoreFileTest, ReopenAfterKill9SeesEverythingCommitted) {
  ASSERT_TRUE(RunThenKill9([&] {
    auto store = Store::Open(path_);
    if (!store.ok()) return false;
    Store& s = *store->release();  // never closed: the kill comes first
    return s.BeginAction(Action("create-1")).ok() && s.CommitCreate("create-1", Instance("i-1", "gpu1"), At(10)).ok() &&
           s.BeginAction(Action("create-2", "create", "gpu2")).ok() &&  // in flight when killed
           s.PutInstance(Instance("i-0", "gpu0", "spot", 10.0)).ok() &&
           s.MarkInstanceDeleted("i-0", At(3600), "deleted").ok() &&
           s.AppendDecisions({{.at = At(1), .kind = "scale_up", .reason = "queue"}}).ok() &&
           s.AddJobEvent({.job = 7, .kind = "requeued", .at = At(5), .lost_gpu_seconds = 120}).ok() &&
           s.AddCounter("buys", 1).ok() && s.SetValue("cursor", "42").ok();
  }));
  EXPECT_TRUE(std::filesystem::exists(StrCat(path_, "-wal")));  // not checkpointed: recovery reads it

  auto store = OpenOrDie(path_);
  ASSERT_NE(store, nullptr);
  auto done = store->GetAction("create-1");
  ASSERT_TRUE(done.ok() && done->has_value());
  EXPECT_EQ((*done)->state, "done");
  EXPECT_EQ((*done)->detail, "instance i-1");
  auto pending = store->PendingActions();
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].key, "create-2");
  auto live = store->InstanceByNode("gpu1");
  ASSERT_TRUE(live.ok() && live->has_value());
  EXPECT_EQ((*live)->id, "i-1");
  EXPECT_EQ((*live)->idempotency_key, "create-1");
  auto all = store->Instances(/*include_deleted=*/true);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);
  auto cost = store->Cost(At(3600));
  ASSERT_TRUE(cost.ok());
  EXPECT_DOUBLE_EQ(cost->spot, 10.0);
  EXPECT_DOUBLE_EQ(cost->on_demand, 36.0);
  EXPECT_EQ(store->RecentDecisions(10)->size(), 1u);
  EXPECT_DOUBLE_EQ(*store->LostGpuSeconds(), 120);
  EXPECT_EQ(*store->Counter("buys"), 1);
  EXPECT_EQ(store->GetValue("cursor")->value_or(""), "42");
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

// A version 1 file is version 2 without the history tables.
TEST_F(StoreFileTest, UpgradesAVersion1FileInPlace) {
  {
    auto store = OpenOrDie(path_);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutInstance(Instance("i-1", "gpu1")).ok());
    ASSERT_TRUE(store->AddCounter("spot_interruptions", 2).ok());
  }
  Query("DROP TABLE sample_pending");
  Query("DROP TABLE samples");
  Query("DROP TABLE job_starts");
  Query("UPDATE schema_version SET version = 1");
  ASSERT_EQ(Query("SELECT COUNT(*) FROM sqlite_master WHERE name = 'samples'"), "0");

  auto store = OpenOrDie(path_);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Query("SELECT version FROM schema_version"), "2");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM schema_version"), "1");
  // What version 1 held is still there, and the new tables work.
  EXPECT_EQ((*store->InstanceByNode("gpu1"))->id, "i-1");
  EXPECT_EQ(*store->Counter("spot_interruptions"), 2);
  SampleRecord sample{.at = At(10), .demand_gpus = 4, .pending_by_class = {{"high", 1}}};
  ASSERT_TRUE(
      store
          ->RecordSample(sample, {{.job = 7, .submit = At(0), .start = At(5), .priority_class = "high"}}, kInfinitePast)
          .ok());
  EXPECT_EQ(store->Samples(kInfinitePast)->size(), 1u);
  EXPECT_EQ(store->JobStarts(kInfinitePast)->size(), 1u);
  // Opening again changes nothing.
  store.reset();
  ASSERT_NE(OpenOrDie(path_), nullptr);
  EXPECT_EQ(Query("SELECT version FROM schema_version"), "2");
  EXPECT_EQ(Query("SELECT COUNT(*) FROM samples"), "1");
}

TEST_F(StoreFileTest, VersionZeroIsNotATideFile) {
  ASSERT_NE(OpenOrDie(path_), nullptr);
  Query("UPDATE schema_version SET version = 0");
  auto store = Store::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Msg(store.status()), HasSubstr("not a tide state file"));
}

TEST_F(StoreFileTest, ReadOnlyConnectionSeesTheWritersCommits) {
  auto writer = OpenOrDie(path_);
  ASSERT_NE(writer, nullptr);
  auto reader = Store::OpenReadOnly(path_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_TRUE((*reader)->Samples(kInfinitePast)->empty());
  ASSERT_TRUE(writer->RecordSample({.at = At(10), .demand_gpus = 8}, {}, kInfinitePast).ok());
  auto samples = (*reader)->Samples(kInfinitePast);
  ASSERT_TRUE(samples.ok()) << samples.status();
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_DOUBLE_EQ((*samples)[0].demand_gpus, 8);
  // It cannot write.
  const Status write = (*reader)->AddCounter("x", 1);
  EXPECT_FALSE(write.ok());
  EXPECT_THAT(Msg(write), HasSubstr(path_));
  EXPECT_EQ(*writer->Counter("x"), 0);
}

TEST_F(StoreFileTest, ReadOnlyOpenRefusesWhatItCannotRead) {
  auto missing = Store::OpenReadOnly(path_);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(missing.status()), HasSubstr(path_));
  EXPECT_FALSE(std::filesystem::exists(path_));  // not created

  ASSERT_NE(OpenOrDie(path_), nullptr);
  Query("UPDATE schema_version SET version = 1");
  auto old = Store::OpenReadOnly(path_);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Msg(old.status()), HasSubstr(StrCat(path_, ": schema version 1")));
  EXPECT_EQ(Query("SELECT version FROM schema_version"), "1");  // a reader never upgrades
}

TEST_F(StoreFileTest, NotADatabaseRefused) {
  std::FILE* f = std::fopen(path_.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(std::string(4096, 'x').c_str(), f);
  std::fclose(f);
  auto store = Store::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Msg(store.status()), HasSubstr(StrCat(path_, ": file is not a database (in ")));
}

TEST_F(StoreFileTest, MarkInstanceDeletedTwiceWritesOneLedgerEntry) {
  auto store = OpenOrDie(path_);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutInstance(Instance("i-1", "gpu1", "on-demand", 36.0, 0)).ok());
  ASSERT_TRUE(store->MarkInstanceDeleted("i-1", At(1800), "deleted").ok());
  ASSERT_TRUE(store->MarkInstanceDeleted("i-1", At(7200), "lost").ok());  // no-op
  EXPECT_EQ(Query("SELECT COUNT(*) FROM ledger"), "1");
  auto all = store->Instances(true);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].deleted, At(1800));
  EXPECT_EQ((*all)[0].state, "deleted");
  EXPECT_DOUBLE_EQ(store->Cost(At(99999))->on_demand, 18.0);
  // A gone instance is not revived by a stale upsert (that would bill it twice).
  const Status revive = store->PutInstance(Instance("i-1", "gpu1"));
  EXPECT_EQ(revive.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Msg(revive), HasSubstr("i-1"));
  EXPECT_DOUBLE_EQ(store->Cost(At(99999))->on_demand, 18.0);
  EXPECT_EQ(store->MarkInstanceDeleted("i-9", At(1), "deleted").code(), absl::StatusCode::kNotFound);
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenOrDie(":memory:");
    ASSERT_NE(store_, nullptr);
  }
  std::unique_ptr<Store> store_;
};

TEST_F(StoreTest, BeginActionDuplicateKeyIsAlreadyExists) {
  ASSERT_TRUE(store_->BeginAction(Action("k1", "create", "gpu1")).ok());
  ASSERT_TRUE(store_->FinishAction("k1", "failed", "quota", At(5)).ok());
  ActionRecord again = Action("k1", "delete", "gpu9");
  again.created = At(100);
  const Status s = store_->BeginAction(again);
  EXPECT_EQ(s.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(Msg(s), HasSubstr("k1"));
  auto got = store_->GetAction("k1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->kind, "create");
  EXPECT_EQ((*got)->node, "gpu1");
  EXPECT_EQ((*got)->state, "failed");
  EXPECT_EQ((*got)->detail, "quota");
  EXPECT_EQ((*got)->created, At(0));
  EXPECT_EQ((*got)->updated, At(5));
}

TEST_F(StoreTest, BeginActionStoresPendingWhateverStateIsPassed) {
  ActionRecord a = Action("k1", "drain", "gpu3");
  a.state = "done";
  a.job = 12;
  ASSERT_TRUE(store_->BeginAction(a).ok());
  auto got = store_->GetAction("k1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->state, "pending");
  EXPECT_EQ((*got)->job, 12);
  EXPECT_EQ((*got)->updated, At(0));
  EXPECT_FALSE(store_->GetAction("nope")->has_value());
}

TEST_F(StoreTest, FinishActionTransitions) {
  struct Case {
    std::string name;
    std::string kind;
    std::vector<std::string> finishes;  // all but the last must succeed
    absl::StatusCode last;
    std::string final_state;
  };
  const std::vector<Case> cases = {
      {"pending to done", "drain", {"done"}, absl::StatusCode::kOk, "done"},
      {"pending to abandoned", "create", {"abandoned"}, absl::StatusCode::kOk, "abandoned"},
      {"same state twice is a no-op", "delete", {"failed", "failed"}, absl::StatusCode::kOk, "failed"},
      {"outcome never rewritten", "delete", {"failed", "done"}, absl::StatusCode::kFailedPrecondition, "failed"},
      {"create done needs CommitCreate", "create", {"done"}, absl::StatusCode::kFailedPrecondition, "pending"},
      {"pending is not final", "signal", {"pending"}, absl::StatusCode::kInvalidArgument, "pending"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(c.name);
    const std::string key = StrCat("k", i);
    ASSERT_TRUE(store_->BeginAction(Action(key, c.kind)).ok());
    Status last;
    for (const std::string& state : c.finishes) last = store_->FinishAction(key, state, "d", At(1));
    EXPECT_EQ(last.code(), c.last) << last;
    EXPECT_EQ((*store_->GetAction(key))->state, c.final_state);
  }
  EXPECT_EQ(store_->FinishAction("missing", "done", "", At(1)).code(), absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, InvalidInputsNameTheRecord) {
  struct Case {
    std::string name;
    std::function<Status(Store&)> call;
    std::string mentions;
  };
  const std::vector<Case> cases = {
      {"empty action key", [](Store& s) { return s.BeginAction(Action("")); }, "empty"},
      {"unknown action kind", [](Store& s) { return s.BeginAction(Action("k", "reboot")); }, "k: kind 'reboot'"},
      {"empty instance id", [](Store& s) { return s.PutInstance(Instance("", "gpu1")); }, "empty id"},
      {"unknown tier", [](Store& s) { return s.PutInstance(Instance("i-1", "gpu1", "on_demand")); }, "i-1: tier"},
      {"negative price", [](Store& s) { return s.PutInstance(Instance("i-1", "gpu1", "spot", -1)); }, "i-1: price"},
      {"gone state via PutInstance",
       [](Store& s) {
         InstanceRecord r = Instance("i-1", "gpu1");
         r.state = "deleted";
         return s.PutInstance(r);
       },
       "i-1: state 'deleted'"},
      {"live state via MarkInstanceDeleted", [](Store& s) { return s.MarkInstanceDeleted("i-1", At(1), "ready"); },
       "i-1: state 'ready'"},
      {"unknown job event", [](Store& s) { return s.AddJobEvent({.job = 3, .kind = "paused"}); }, "job 3 event"},
      {"negative lost work",
       [](Store& s) { return s.AddJobEvent({.job = 3, .kind = "requeued", .lost_gpu_seconds = -5}); },
       "job 3 event: lost_gpu_seconds"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Status s = c.call(*store_);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(Msg(s), HasSubstr(c.mentions));
  }
  EXPECT_TRUE(store_->Instances(true)->empty());
  EXPECT_TRUE(store_->RecentActions(10)->empty());
}

TEST_F(StoreTest, CommitCreateStoresActionAndInstanceTogether) {
  ASSERT_TRUE(store_->BeginAction(Action("c1")).ok());
  ASSERT_TRUE(store_->CommitCreate("c1", Instance("i-1", "gpu1"), At(30)).ok());
  auto a = store_->GetAction("c1");
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->state, "done");
  EXPECT_EQ((*a)->updated, At(30));
  auto i = store_->InstanceByNode("gpu1");
  ASSERT_TRUE(i.ok() && i->has_value());
  EXPECT_EQ((*i)->id, "i-1");
  EXPECT_EQ((*i)->idempotency_key, "c1");
  EXPECT_EQ((*i)->deleted, kInfiniteFuture);
  // A retried commit of the same instance changes nothing.
  EXPECT_TRUE(store_->CommitCreate("c1", Instance("i-1", "gpu1"), At(60)).ok());
  EXPECT_EQ((*store_->GetAction("c1"))->updated, At(30));
  // The same action cannot be done with a second instance.
  EXPECT_EQ(store_->CommitCreate("c1", Instance("i-2", "gpu2"), At(60)).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(store_->InstanceByNode("gpu2")->has_value());
}

TEST_F(StoreTest, CommitCreateFailureLeavesNothingHalfDone) {
  // The instance write fails inside the transaction (i-1 is gone), so the
  // action must still be pending: nothing says "done" without an instance.
  ASSERT_TRUE(store_->PutInstance(Instance("i-1", "gpu1")).ok());
  ASSERT_TRUE(store_->MarkInstanceDeleted("i-1", At(10), "deleted").ok());
  ASSERT_TRUE(store_->BeginAction(Action("c1")).ok());
  EXPECT_EQ(store_->CommitCreate("c1", Instance("i-1", "gpu1"), At(20)).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ((*store_->GetAction("c1"))->state, "pending");
  EXPECT_EQ(store_->PendingActions()->size(), 1u);
  EXPECT_FALSE(store_->InstanceByNode("gpu1")->has_value());

  // The action is checked before the instance is written: nothing stored.
  ASSERT_TRUE(store_->FinishAction("c1", "abandoned", "not found at provider", At(30)).ok());
  EXPECT_EQ(store_->CommitCreate("c1", Instance("i-2", "gpu2"), At(40)).code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(store_->BeginAction(Action("d1", "delete")).ok());
  EXPECT_EQ(store_->CommitCreate("d1", Instance("i-3", "gpu3"), At(40)).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->CommitCreate("nope", Instance("i-4", "gpu4"), At(40)).code(), absl::StatusCode::kNotFound);
  InstanceRecord wrong_key = Instance("i-5", "gpu5");
  wrong_key.idempotency_key = "other";
  EXPECT_EQ(store_->CommitCreate("d1", wrong_key, At(40)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Instances(false)->size(), 0u);
}

TEST_F(StoreTest, PutInstanceUpsertsAndInstanceByNodeFindsTheLiveOne) {
  ASSERT_TRUE(store_->PutInstance(Instance("i-1", "gpu1", "spot", 10, 0)).ok());
  ASSERT_TRUE(store_->MarkInstanceDeleted("i-1", At(100), "lost").ok());
  ASSERT_TRUE(store_->PutInstance(Instance("i-2", "gpu1", "spot", 10, 200)).ok());
  InstanceRecord ready = Instance("i-2", "gpu1", "spot", 10, 200);
  ready.state = "ready";
  ASSERT_TRUE(store_->PutInstance(ready).ok());
  auto live = store_->InstanceByNode("gpu1");
  ASSERT_TRUE(live.ok() && live->has_value());
  EXPECT_EQ((*live)->id, "i-2");
  EXPECT_EQ((*live)->state, "ready");
  EXPECT_EQ(store_->Instances(false)->size(), 1u);
  auto all = store_->Instances(true);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].id, "i-1");
  EXPECT_EQ((*all)[0].state, "lost");
  EXPECT_EQ((*all)[0].deleted, At(100));
}

TEST_F(StoreTest, CostByTierWithLiveAndDeletedInstances) {
  ASSERT_TRUE(store_->PutInstance(Instance("r-1", "gpu1", "reserved", 20, 0)).ok());      // live
  ASSERT_TRUE(store_->PutInstance(Instance("o-1", "gpu2", "on-demand", 36, 0)).ok());     // 30 min
  ASSERT_TRUE(store_->PutInstance(Instance("s-1", "gpu3", "spot", 12, 3600)).ok());       // live
  ASSERT_TRUE(store_->PutInstance(Instance("s-2", "gpu4", "spot", 12, 0)).ok());          // 2 h
  ASSERT_TRUE(store_->PutInstance(Instance("o-2", "gpu5", "on-demand", 36, 9000)).ok());  // starts after now
  ASSERT_TRUE(store_->MarkInstanceDeleted("o-1", At(1800), "deleted").ok());
  ASSERT_TRUE(store_->MarkInstanceDeleted("s-2", At(7200), "lost").ok());
  auto cost = store_->Cost(At(7200));
  ASSERT_TRUE(cost.ok()) << cost.status();
  EXPECT_DOUBLE_EQ(cost->reserved, 40.0);     // 2 h live
  EXPECT_DOUBLE_EQ(cost->on_demand, 18.0);    // closed entry; o-2 not yet started
  EXPECT_DOUBLE_EQ(cost->spot, 12.0 + 24.0);  // 1 h live + 2 h closed
  EXPECT_DOUBLE_EQ(cost->total(), 94.0);
  EXPECT_DOUBLE_EQ(store_->Cost(At(0))->total(), 18.0 + 24.0);  // closed entries never shrink
}

TEST_F(StoreTest, DecisionsNewestFirstWithIncreasingSeq) {
  ASSERT_TRUE(store_
                  ->AppendDecisions({{.seq = 99, .at = At(1), .kind = "scale_up", .reason = "r1"},
                                     {.at = At(1), .kind = "scale_up", .reason = "r2", .dry_run = true}})
                  .ok());
  ASSERT_TRUE(store_->AppendDecisions({}).ok());
  ASSERT_TRUE(store_->AppendDecisions({{.at = At(2), .kind = "release", .reason = "r3", .detail = "gpu1"}}).ok());
  auto recent = store_->RecentDecisions(2);
  ASSERT_TRUE(recent.ok());
  ASSERT_EQ(recent->size(), 2u);
  EXPECT_EQ((*recent)[0].reason, "r3");
  EXPECT_EQ((*recent)[0].detail, "gpu1");
  EXPECT_EQ((*recent)[1].reason, "r2");
  EXPECT_TRUE((*recent)[1].dry_run);
  EXPECT_GT((*recent)[0].seq, (*recent)[1].seq);
  auto all = store_->RecentDecisions(10);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[2].reason, "r1");
  EXPECT_NE((*all)[2].seq, 99);  // assigned by the store
  EXPECT_EQ((*all)[2].at, At(1));
  EXPECT_EQ(store_->RecentDecisions(-1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(StoreTest, RecentActionsNewestFirst) {
  for (int i = 0; i < 3; ++i) {
    ActionRecord a = Action(StrCat("k", i), "drain");
    a.created = At(i);
    ASSERT_TRUE(store_->BeginAction(a).ok());
  }
  auto recent = store_->RecentActions(2);
  ASSERT_TRUE(recent.ok());
  std::vector<std::string> keys;
  for (const auto& a : *recent) keys.push_back(a.key);
  EXPECT_THAT(keys, ElementsAre("k2", "k1"));
}

TEST_F(StoreTest, Counters) {
  EXPECT_EQ(*store_->Counter("buys"), 0);
  ASSERT_TRUE(store_->AddCounter("buys", 2).ok());
  ASSERT_TRUE(store_->AddCounter("buys", 3).ok());
  ASSERT_TRUE(store_->AddCounter("buys", -1).ok());
  ASSERT_TRUE(store_->AddCounter("releases", 7).ok());
  EXPECT_EQ(*store_->Counter("buys"), 4);
  EXPECT_EQ(*store_->Counter("releases"), 7);
}

TEST_F(StoreTest, Values) {
  EXPECT_FALSE(store_->GetValue("cursor")->has_value());
  ASSERT_TRUE(store_->SetValue("cursor", "1").ok());
  ASSERT_TRUE(store_->SetValue("cursor", "2").ok());
  EXPECT_EQ(store_->GetValue("cursor")->value_or(""), "2");
}

TEST_F(StoreTest, SamplesRoundTrip) {
  SampleRecord a{.at = At(0),
                 .demand_gpus = 12.5,
                 .running_gpus = 8,
                 .capacity_gpus = {.reserved = 0, .on_demand = 8, .spot = 16},
                 .util_gpus = 6.25,
                 .pending_jobs = 3,
                 .running_jobs = 2,
                 .pending_by_class = {{"high", 1}, {"low", 2}},
                 .cost_rate = {.reserved = 0, .on_demand = 32, .spot = 20},
                 .spot_interruptions = 1,
                 .lost_work_gpu_hours = 0.5};
  SampleRecord b{.at = At(10), .demand_gpus = 1};  // no utilization source, no class
  EXPECT_FALSE(store_->LatestSample()->has_value());
  ASSERT_TRUE(store_->RecordSample(b, {}, kInfinitePast).ok());
  ASSERT_TRUE(store_->RecordSample(a, {}, kInfinitePast).ok());
  auto got = store_->Samples(kInfinitePast);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  const SampleRecord& r = (*got)[0];  // oldest first
  EXPECT_EQ(r.at, At(0));
  EXPECT_DOUBLE_EQ(r.demand_gpus, 12.5);
  EXPECT_DOUBLE_EQ(r.running_gpus, 8);
  EXPECT_DOUBLE_EQ(r.capacity_gpus.on_demand, 8);
  EXPECT_DOUBLE_EQ(r.capacity_gpus.spot, 16);
  ASSERT_TRUE(r.util_gpus.has_value());
  EXPECT_DOUBLE_EQ(*r.util_gpus, 6.25);
  EXPECT_EQ(r.pending_jobs, 3);
  EXPECT_EQ(r.running_jobs, 2);
  EXPECT_THAT(r.pending_by_class,
              ElementsAre(std::pair<std::string, int64_t>{"high", 1}, std::pair<std::string, int64_t>{"low", 2}));
  EXPECT_DOUBLE_EQ(r.cost_rate.on_demand, 32);
  EXPECT_DOUBLE_EQ(r.cost_rate.spot, 20);
  EXPECT_EQ(r.spot_interruptions, 1);
  EXPECT_DOUBLE_EQ(r.lost_work_gpu_hours, 0.5);
  EXPECT_FALSE((*got)[1].util_gpus.has_value());
  EXPECT_TRUE((*got)[1].pending_by_class.empty());
  EXPECT_EQ(store_->Samples(At(5))->size(), 1u);
  EXPECT_EQ(store_->LatestSample()->value_or(kT0), At(10));
}

TEST_F(StoreTest, OneSamplePerSecondAndOneStartPerJob) {
  const JobStartRecord start{.job = 7, .submit = At(0), .start = At(30), .priority_class = "normal"};
  ASSERT_TRUE(
      store_->RecordSample({.at = At(60), .demand_gpus = 2, .pending_by_class = {{"low", 1}}}, {start}, kInfinitePast)
          .ok());
  // The same second again (two loops in one second) and the same job again
  // (seen running at every loop) change nothing.
  JobStartRecord again = start;
  again.start = At(50);
  ASSERT_TRUE(store_
                  ->RecordSample({.at = At(60), .demand_gpus = 9, .pending_by_class = {{"low", 5}}}, {again, start},
                                 kInfinitePast)
                  .ok());
  auto samples = store_->Samples(kInfinitePast);
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_DOUBLE_EQ((*samples)[0].demand_gpus, 2);
  EXPECT_THAT((*samples)[0].pending_by_class, ElementsAre(std::pair<std::string, int64_t>{"low", 1}));
  auto starts = store_->JobStarts(kInfinitePast);
  ASSERT_EQ(starts->size(), 1u);
  EXPECT_EQ((*starts)[0].start, At(30));
  EXPECT_EQ((*starts)[0].priority_class, "normal");
  // A reused job id with another submit time is another job.
  ASSERT_TRUE(
      store_->RecordSample({.at = At(70)}, {{.job = 7, .submit = At(65), .start = At(68)}}, kInfinitePast).ok());
  EXPECT_EQ(store_->JobStarts(kInfinitePast)->size(), 2u);
}

TEST_F(StoreTest, RecordSamplePrunesTheHistory) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store_
                    ->RecordSample({.at = At(i * 100), .pending_by_class = {{"high", i + 1}}},
                                   {{.job = i + 1, .submit = At(i * 100 - 10), .start = At(i * 100)}}, kInfinitePast)
                    .ok());
  }
  ASSERT_TRUE(store_->RecordSample({.at = At(500)}, {}, At(300)).ok());
  auto samples = store_->Samples(kInfinitePast);
  ASSERT_TRUE(samples.ok());
  std::vector<int64_t> times;
  for (const auto& s : *samples) times.push_back((s.at - kT0).count());
  EXPECT_THAT(times, ElementsAre(300, 400, 500));
  EXPECT_EQ((*samples)[0].pending_by_class[0].second, 4);
  // The pruned samples' class counts went with them.
  auto pending = store_->Samples(kInfinitePast);
  int rows = 0;
  for (const auto& s : *pending) rows += static_cast<int>(s.pending_by_class.size());
  EXPECT_EQ(rows, 2);
  auto starts = store_->JobStarts(kInfinitePast);
  ASSERT_TRUE(starts.ok());
  std::vector<int64_t> jobs;
  for (const auto& j : *starts) jobs.push_back(j.job);
  EXPECT_THAT(jobs, ElementsAre(4, 5));
}

TEST_F(StoreTest, RecordSampleRefusesBadValuesAndWritesNothing) {
  struct Case {
    std::string name;
    SampleRecord sample;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"negative demand", {.at = At(1), .demand_gpus = -1}, "demand_gpus"},
      {"nan capacity", {.at = At(1), .capacity_gpus = {.spot = std::nan("")}}, "capacity_gpus.spot"},
      {"negative util", {.at = At(1), .util_gpus = -0.5}, "util_gpus"},
      {"negative class count", {.at = At(1), .pending_by_class = {{"high", -2}}}, "pending_jobs/high"},
      {"infinite lost work", {.at = At(1), .lost_work_gpu_hours = INFINITY}, "lost_work_gpu_hours"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const Status s = store_->RecordSample(c.sample, {{.job = 1, .submit = At(0), .start = At(1)}}, kInfinitePast);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Msg(s), HasSubstr(c.field));
    EXPECT_THAT(Msg(s), HasSubstr("2026-01-05"));  // the sample's time
  }
  EXPECT_TRUE(store_->Samples(kInfinitePast)->empty());
  EXPECT_TRUE(store_->JobStarts(kInfinitePast)->empty());
}

TEST_F(StoreTest, LostWorkSumAndJobEvents) {
  EXPECT_DOUBLE_EQ(*store_->LostGpuSeconds(), 0.0);
  ASSERT_TRUE(store_->AddJobEvent({.job = 1, .kind = "signalled", .at = At(10)}).ok());
  ASSERT_TRUE(store_->AddJobEvent({.job = 1, .kind = "requeued", .at = At(20), .lost_gpu_seconds = 800}).ok());
  ASSERT_TRUE(store_->AddJobEvent({.job = 2, .kind = "interrupted", .at = At(5), .lost_gpu_seconds = 250.5}).ok());
  ASSERT_TRUE(store_->AddJobEvent({.job = 1, .kind = "requeued", .at = At(15), .lost_gpu_seconds = 100}).ok());
  EXPECT_DOUBLE_EQ(*store_->LostGpuSeconds(), 1150.5);
  EXPECT_EQ(*store_->CountJobEvents("requeued"), 2);
  EXPECT_EQ(*store_->CountJobEvents("cancelled"), 0);
  auto events = store_->JobEvents(1);
  ASSERT_TRUE(events.ok());
  std::vector<int64_t> times;
  for (const auto& e : *events) times.push_back(ToUnixSeconds(e.at) - ToUnixSeconds(kT0));
  EXPECT_THAT(times, ElementsAre(10, 15, 20));
  EXPECT_EQ((*events)[1].lost_gpu_seconds, 100);
}

}  // namespace
}  // namespace tide::controller
