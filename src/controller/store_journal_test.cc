// The journal: actions and instances, and the transactions that keep them
// consistent.
#include "controller/store.h"

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
using testing::StoreTest;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Found by fuzzing: a record's key was quoted raw in the store's errors.
TEST_F(StoreTest, ErrorsQuoteKeysEscaped) {
  ActionRecord a = Action(std::string("k\0\x1b", 3), "explode");
  Status s = store_->BeginAction(a);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(Msg(s), HasSubstr("action k\\x00\\x1b"));
}

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
  a.job = "12";
  ASSERT_TRUE(store_->BeginAction(a).ok());
  auto got = store_->GetAction("k1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->state, "pending");
  EXPECT_EQ((*got)->job, "12");
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
      {"unknown tier", [](Store& s) { return s.PutInstance(Instance("i-1", "gpu1", static_cast<Tier>(7))); },
       "i-1: tier"},
      {"negative price", [](Store& s) { return s.PutInstance(Instance("i-1", "gpu1", Tier::kSpot, -1)); },
       "i-1: price"},
      {"gone state via PutInstance",
       [](Store& s) {
         InstanceRecord r = Instance("i-1", "gpu1");
         r.state = "deleted";
         return s.PutInstance(r);
       },
       "i-1: state 'deleted'"},
      {"live state via MarkInstanceDeleted", [](Store& s) { return s.MarkInstanceDeleted("i-1", At(1), "ready"); },
       "i-1: state 'ready'"},
      {"unknown job event", [](Store& s) { return s.AddJobEvent({.job = "3", .kind = "paused"}); }, "job 3 event"},
      {"negative lost work",
       [](Store& s) { return s.AddJobEvent({.job = "3", .kind = "requeued", .lost_gpu_seconds = -5}); },
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
  ASSERT_TRUE(store_->PutInstance(Instance("i-1", "gpu1", Tier::kSpot, 10, 0)).ok());
  ASSERT_TRUE(store_->MarkInstanceDeleted("i-1", At(100), "lost").ok());
  ASSERT_TRUE(store_->PutInstance(Instance("i-2", "gpu1", Tier::kSpot, 10, 200)).ok());
  InstanceRecord ready = Instance("i-2", "gpu1", Tier::kSpot, 10, 200);
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

TEST_F(StoreFileTest, MarkInstanceDeletedTwiceWritesOneLedgerEntry) {
  auto store = OpenOrDie(path_);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutInstance(Instance("i-1", "gpu1", Tier::kOnDemand, 36.0, 0)).ok());
  ASSERT_TRUE(store->MarkInstanceDeleted("i-1", At(1800), "deleted").ok());
  ASSERT_TRUE(store->MarkInstanceDeleted("i-1", At(7200), "lost").ok());  // no-op
  EXPECT_EQ(Query("SELECT COUNT(*) FROM ledger"), "1");
  auto all = store->Instances(true);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].deleted, At(1800));
  EXPECT_EQ((*all)[0].state, "deleted");
  EXPECT_DOUBLE_EQ(LiveCost(store.get(), At(99999))->on_demand, 18.0);
  // A gone instance is not revived by a stale upsert (that would bill it twice).
  const Status revive = store->PutInstance(Instance("i-1", "gpu1"));
  EXPECT_EQ(revive.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Msg(revive), HasSubstr("i-1"));
  EXPECT_DOUBLE_EQ(LiveCost(store.get(), At(99999))->on_demand, 18.0);
  EXPECT_EQ(store->MarkInstanceDeleted("i-9", At(1), "deleted").code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace tide::controller
