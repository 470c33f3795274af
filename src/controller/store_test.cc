// The state file: durability across a kill -9, WAL, the read-only second
// connection, and files that are not a tide store.
#include "controller/store.h"

#include <sys/stat.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "controller/live_cost.h"
#include "controller/store_fixtures_test.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::controller {
namespace {

using model::Tier;
using testing::Action;
using testing::At;
using testing::Instance;
using testing::Msg;
using testing::OpenOrDie;
using testing::StoreFileTest;
using ::testing::HasSubstr;

TEST_F(StoreFileTest, WalModeOn) {
  auto store = OpenOrDie(path_);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Query("PRAGMA journal_mode"), "wal");
  ASSERT_TRUE(store->AddCounter("x", 1).ok());
  EXPECT_TRUE(std::filesystem::exists(StrCat(path_, "-wal")));
}

mode_t ModeOf(const std::string& path) {
  struct stat st = {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST_F(StoreFileTest, TheStateFileAndItsCompanionsAreForItsUserOnly) {
  const mode_t old_mask = ::umask(0);  // a plain create would make 0644 or 0666 files now
  {
    auto store = OpenOrDie(path_);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->AddCounter("x", 1).ok());  // makes the -wal and the -shm
    for (const char* suffix : {"", "-wal", "-shm"}) {
      SCOPED_TRACE(suffix);
      EXPECT_EQ(ModeOf(path_ + suffix), 0600u);
    }
    // Files made before (or by hand) are narrowed at the next open.
    ASSERT_EQ(::chmod(path_.c_str(), 0664), 0);
    ASSERT_EQ(::chmod((path_ + "-wal").c_str(), 0644), 0);
    ASSERT_NE(OpenOrDie(path_), nullptr);
    EXPECT_EQ(ModeOf(path_), 0600u);
    EXPECT_EQ(ModeOf(path_ + "-wal"), 0600u);
  }
  ::umask(old_mask);
}

TEST_F(StoreFileTest, ReopenAfterKill9SeesEverythingCommitted) {
  ASSERT_TRUE(RunThenKill9([&] {
    auto store = Store::Open(path_);
    if (!store.ok()) return false;
    Store& s = *store->release();  // never closed: the kill comes first
    // One write per statement (GCC 12 warns about the temporaries of a long
    // && chain).
    const std::vector<std::function<Status()>> writes = {
        [&] { return s.BeginAction(Action("create-1")); },
        [&] { return s.CommitCreate("create-1", Instance("i-1", "gpu1"), At(10)); },
        [&] { return s.BeginAction(Action("create-2", "create", "gpu2")); },  // in flight when killed
        [&] { return s.PutInstance(Instance("i-0", "gpu0", Tier::kSpot, 10.0)); },
        [&] { return s.MarkInstanceDeleted("i-0", At(3600), "deleted"); },
        [&] { return s.AppendDecisions({{.at = At(1), .kind = "scale_up", .reason = "queue"}}); },
        [&] { return s.AddJobEvent({.job = "7", .kind = "requeued", .at = At(5), .lost_gpu_seconds = 120}); },
        [&] { return s.AddCounter("buys", 1); },
        [&] { return s.SetValue("cursor", "42"); },
    };
    for (const auto& write : writes) {
      if (!write().ok()) return false;
    }
    return true;
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
  auto cost = LiveCost(store.get(), At(3600));
  ASSERT_TRUE(cost.ok());
  EXPECT_DOUBLE_EQ(cost->spot, 10.0);
  EXPECT_DOUBLE_EQ(cost->on_demand, 36.0);
  EXPECT_EQ(store->RecentDecisions(10)->size(), 1u);
  EXPECT_DOUBLE_EQ(*store->LostGpuSeconds(), 120);
  EXPECT_EQ(*store->Counter("buys"), 1);
  EXPECT_EQ(store->GetValue("cursor")->value_or(""), "42");
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

}  // namespace
}  // namespace tide::controller
