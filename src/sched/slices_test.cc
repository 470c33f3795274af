#include "sched/slices.h"

#include "gtest/gtest.h"
#include "sched/eligibility.h"
#include "sched/scheduler.h"
#include "testutil/builders.h"

namespace tide::sched {
namespace {

using model::Tier;
using testing::At;
using testing::Pending;

model::NodePool MigPool(std::string name, int gpus, double price, int max) {
  model::NodePool p = testing::Pool(std::move(name), gpus, Tier::kOnDemand, price, 0, max);
  p.mig.profiles = {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"};
  return p;
}

model::Node MigNode(model::NodeId id, int pool, int gpus) {
  model::Node n = testing::ReadyNode(id, pool, gpus, gpus);
  n.slice_free.assign(gpus, 7);
  n.sliced.assign(gpus, 1);
  return n;
}

model::Job SliceJob(model::JobId id, int units, int64_t submit = 0) {
  model::Job j = Pending(id, 1, 1, submit);
  j.spec.slice = units == 1 ? "1g.10gb" : units == 2 ? "2g.20gb" : "3g.40gb";
  j.spec.slice_units = units;
  return j;
}

TEST(SliceSnapshotTest, PacksOntoTheFullestGpuThenFreeSlicedThenReconfigures) {
  CapacitySnapshot cap(1, 8);
  cap.AddNode(1, 0, 2, 1);  // one GPU partly used, one free
  SliceSnapshot s;
  s.AddNode(0, 0, 7, {{0, 3}}, /*free_sliced=*/0);
  auto p = s.Find(PoolBit(0), 2, cap);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->gpu, 0);  // the partly used GPU, 3 units left
  s.Take(*p, 2, &cap);
  p = s.Find(PoolBit(0), 2, cap);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->gpu, -1);  // only the free GPU is left, in whole layout
  EXPECT_TRUE(p->reconfigure);
  s.Take(*p, 2, &cap);
  EXPECT_EQ(cap.free(0), 0);
  EXPECT_FALSE(s.Find(PoolBit(0), 7, cap));
}

TEST(SliceSchedulingTest, SevenSmallJobsShareOneGpu) {
  model::ClusterSpec spec = testing::Spec({MigPool("mig", 2, 30, 4)});
  model::ClusterState state;
  state.spec = &spec;
  state.nodes = {MigNode(1, 0, 2)};
  for (int i = 1; i <= 9; ++i) state.jobs.push_back(SliceJob(i, 1, i));
  const SchedulerOutput out = Scheduler({}).Schedule(state, At(100));
  ASSERT_EQ(out.placements.size(), 9u);
  int on_first = 0;
  for (const auto& p : out.placements) {
    ASSERT_EQ(p.shares.size(), 1u);
    EXPECT_EQ(p.shares[0].units, 1);
    on_first += p.shares[0].gpu == -1 ? 0 : 1;
  }
  EXPECT_EQ(on_first, 7);  // 2 picks take a free GPU; 7 land on partly used ones
}

TEST(SliceSchedulingTest, ASliceTakesAWholeGpuWhereThePoolDoesNotSlice) {
  model::ClusterSpec spec = testing::Spec({testing::Pool("plain", 8, Tier::kOnDemand, 100, 0, 4)});
  model::ClusterState state;
  state.spec = &spec;
  state.nodes = {testing::ReadyNode(1, 0, 8, 8)};
  state.jobs = {SliceJob(1, 3)};
  const SchedulerOutput out = Scheduler({}).Schedule(state, At(0));
  ASSERT_EQ(out.placements.size(), 1u);
  EXPECT_EQ(out.placements[0].shares[0].units, 0);
}

TEST(SliceEligibilityTest, OnlyPoolsOfferingTheProfile) {
  model::NodePool only_big = MigPool("big", 8, 100, 4);
  only_big.mig.profiles = {"3g.40gb", "7g.80gb"};
  model::JobSpec js = SliceJob(1, 1).spec;
  EXPECT_FALSE(Eligible(only_big, js));
  EXPECT_TRUE(Eligible(MigPool("all", 8, 100, 4), js));
}

}  // namespace
}  // namespace tide::sched
