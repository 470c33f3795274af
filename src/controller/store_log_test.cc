// The decision log, job events (by job key), counters and values.
#include "controller/store.h"

#include <string>
#include <vector>

#include "controller/store_fixtures_test.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::controller {
namespace {

using testing::Action;
using testing::At;
using testing::kT0;
using testing::StoreTest;
using ::testing::ElementsAre;

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

TEST_F(StoreTest, LostWorkSumAndJobEvents) {
  EXPECT_DOUBLE_EQ(*store_->LostGpuSeconds(), 0.0);
  ASSERT_TRUE(store_->AddJobEvent({.job = "1", .kind = "signalled", .at = At(10)}).ok());
  ASSERT_TRUE(store_->AddJobEvent({.job = "1", .kind = "requeued", .at = At(20), .lost_gpu_seconds = 800}).ok());
  ASSERT_TRUE(store_->AddJobEvent({.job = "2", .kind = "interrupted", .at = At(5), .lost_gpu_seconds = 250.5}).ok());
  ASSERT_TRUE(store_->AddJobEvent({.job = "1", .kind = "requeued", .at = At(15), .lost_gpu_seconds = 100}).ok());
  EXPECT_DOUBLE_EQ(*store_->LostGpuSeconds(), 1150.5);
  EXPECT_EQ(*store_->CountJobEvents("requeued"), 2);
  EXPECT_EQ(*store_->CountJobEvents("cancelled"), 0);
  auto events = store_->JobEvents("1");
  ASSERT_TRUE(events.ok());
  std::vector<int64_t> times;
  for (const auto& e : *events) times.push_back(ToUnixSeconds(e.at) - ToUnixSeconds(kT0));
  EXPECT_THAT(times, ElementsAre(10, 15, 20));
  EXPECT_EQ((*events)[1].lost_gpu_seconds, 100);
}

// Job keys are the workload manager's strings, stored as given: a
// Kubernetes "namespace/name", a Slurm id (leading zeros kept), "" for none.
TEST_F(StoreTest, JobKeysRoundTripAsStrings) {
  const std::vector<std::string> keys = {"ml-team/resnet-50-x7", "1234", "007", "7", "ns/a b,c\"d"};
  for (size_t i = 0; i < keys.size(); ++i) {
    SCOPED_TRACE(keys[i]);
    ActionRecord a = Action(StrCat("stop-", i), "signal", "");
    a.job = keys[i];
    ASSERT_TRUE(store_->BeginAction(a).ok());
    EXPECT_EQ((*store_->GetAction(a.key))->job, keys[i]);
    ASSERT_TRUE(store_->AddJobEvent({.job = keys[i], .kind = "signalled", .at = At(static_cast<int64_t>(i))}).ok());
    ASSERT_TRUE(store_
                    ->RecordSample({.at = At(static_cast<int64_t>(i))},
                                   {{.job = keys[i], .submit = At(0), .start = At(static_cast<int64_t>(i))}},
                                   kInfinitePast)
                    .ok());
  }
  for (const std::string& key : keys) {
    auto events = store_->JobEvents(key);
    ASSERT_TRUE(events.ok());
    ASSERT_EQ(events->size(), 1u) << key;
    EXPECT_EQ((*events)[0].job, key);
  }
  EXPECT_TRUE(store_->JobEvents("ml-team")->empty());
  auto starts = store_->JobStarts(kInfinitePast);
  ASSERT_TRUE(starts.ok());
  std::vector<std::string> started;
  for (const auto& j : *starts) started.push_back(j.job);
  EXPECT_EQ(started, keys);  // by start time
  auto actions = store_->PendingActions();
  ASSERT_TRUE(actions.ok());
  std::vector<std::string> pending;
  for (const auto& a : *actions) pending.push_back(a.job);
  EXPECT_EQ(pending, keys);
  // No job: "".
  ASSERT_TRUE(store_->BeginAction(Action("create-x")).ok());
  EXPECT_EQ((*store_->GetAction("create-x"))->job, "");
}

}  // namespace
}  // namespace tide::controller
