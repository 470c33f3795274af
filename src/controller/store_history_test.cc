// The live status page's history: samples and job starts.
#include "controller/store.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "controller/store_fixtures_test.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::controller {
namespace {

using testing::At;
using testing::kT0;
using testing::Msg;
using testing::StoreTest;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

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
  const JobStartRecord start{.job = "7", .submit = At(0), .start = At(30), .priority_class = "normal"};
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
      store_->RecordSample({.at = At(70)}, {{.job = "7", .submit = At(65), .start = At(68)}}, kInfinitePast).ok());
  EXPECT_EQ(store_->JobStarts(kInfinitePast)->size(), 2u);
}

TEST_F(StoreTest, RecordSamplePrunesTheHistory) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store_
                    ->RecordSample({.at = At(i * 100), .pending_by_class = {{"high", i + 1}}},
                                   {{.job = StrCat(i + 1), .submit = At(i * 100 - 10), .start = At(i * 100)}},
                                   kInfinitePast)
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
  std::vector<std::string> jobs;
  for (const auto& j : *starts) jobs.push_back(j.job);
  EXPECT_THAT(jobs, ElementsAre("4", "5"));
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
    const Status s = store_->RecordSample(c.sample, {{.job = "1", .submit = At(0), .start = At(1)}}, kInfinitePast);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Msg(s), HasSubstr(c.field));
    EXPECT_THAT(Msg(s), HasSubstr("2026-01-05"));  // the sample's time
  }
  EXPECT_TRUE(store_->Samples(kInfinitePast)->empty());
  EXPECT_TRUE(store_->JobStarts(kInfinitePast)->empty());
}

}  // namespace
}  // namespace tide::controller
