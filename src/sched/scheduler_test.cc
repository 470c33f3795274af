#include "sched/scheduler.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "model/state_index.h"
#include "sched/kept_capacity.h"
#include "sched/scheduler_expect.h"
#include "testutil/builders.h"

namespace tide::sched {
namespace {

using model::NodeShare;
using model::Tier;
using testing::At;
using testing::BootingNode;
using testing::Pending;
using testing::ReadyNode;
using testing::AddRunning;

class SchedulerTest : public ::testing::Test {
 protected:
  SchedulerTest() : spec_(testing::Spec({testing::Pool("p8", 8, Tier::kOnDemand, 100, 0, 50)})) {
    state_.spec = &spec_;
  }

  std::vector<model::JobId> Started(const SchedulerOutput& out) {
    std::vector<model::JobId> ids;
    for (const auto& p : out.placements) ids.push_back(p.job);
    return ids;
  }

  model::ClusterSpec spec_;
  model::ClusterState state_;
};

TEST_F(SchedulerTest, StartsInPriorityThenSubmissionOrder) {
  state_.nodes = {ReadyNode(1, 0, 8, 8)};
  state_.jobs = {Pending(1, 8, 1, /*submit=*/0, 3600, /*class normal*/ 1),
                 Pending(2, 8, 1, /*submit=*/5, 3600, /*class high*/ 0)};
  const auto out = Scheduler({}).Schedule(state_, At(10));
  EXPECT_EQ(Started(out), std::vector<model::JobId>({2}));
}

TEST_F(SchedulerTest, GangStartsWholeOrNotAtAll) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 4)};
  state_.jobs = {Pending(1, 8, 2)};  // needs two whole nodes; only one is free
  EXPECT_TRUE(Scheduler({}).Schedule(state_, At(0)).placements.empty());

  state_.nodes[1].free_gpus = 8;
  const auto out = Scheduler({}).Schedule(state_, At(0));
  ASSERT_EQ(out.placements.size(), 1u);
  int workers = 0;
  for (const auto& sh : out.placements[0].shares) workers += sh.workers;
  EXPECT_EQ(workers, 2);
}

TEST_F(SchedulerTest, BestFitKeepsWholeNodesFree) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 2)};
  state_.jobs = {Pending(1, 2, 1), Pending(2, 8, 1, 1)};
  const auto out = Scheduler({}).Schedule(state_, At(0));
  ASSERT_EQ(out.placements.size(), 2u);
  EXPECT_EQ(out.placements[0].shares, std::vector<NodeShare>({{2, 1}}));  // the 2-GPU job on the 2-GPU hole
  EXPECT_EQ(out.placements[1].shares, std::vector<NodeShare>({{1, 1}}));
}

TEST_F(SchedulerTest, BackfillsAJobThatEndsBeforeTheHeadCanStart) {
  // Node 1 runs a job until t=1000; node 2 has 4 free GPUs.
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  AddRunning(&state_, Pending(100, 8, 1), {{1, 1}}, 1000);
  AddRunning(&state_, Pending(101, 4, 1), {{2, 1}}, 2000);
  // The head needs 2 whole nodes: it can start at t=2000 (shadow time).
  state_.jobs.push_back(Pending(1, 8, 2, 0));
  state_.jobs.push_back(Pending(3, 4, 1, 1, /*runtime=*/5000));  // would hold node 2 past 2000: may not
  state_.jobs.push_back(Pending(2, 4, 1, 2, /*runtime=*/500));   // ends at 500 < 2000: may go
  const auto out = Scheduler({}).Schedule(state_, At(0));
  EXPECT_EQ(out.head, 1);
  EXPECT_EQ(out.shadow_time, At(2000));
  ASSERT_EQ(Started(out), std::vector<model::JobId>({2}));
  EXPECT_TRUE(out.placements[0].backfilled);
}

TEST_F(SchedulerTest, WorksOutTheReservationOnlyWhenALaterJobCouldStart) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  AddRunning(&state_, Pending(100, 8, 1), {{1, 1}}, 1000);
  AddRunning(&state_, Pending(101, 4, 1), {{2, 1}}, 2000);
  state_.jobs.push_back(Pending(1, 8, 2, 0));
  state_.jobs.push_back(Pending(2, 8, 1, 1));  // blocked too: nothing is checked against the head
  const auto out = Scheduler({}).Schedule(state_, At(0));
  EXPECT_TRUE(out.placements.empty());
  EXPECT_EQ(out.head, -1);
  EXPECT_EQ(out.shadow_time, kInfiniteFuture);
}

TEST_F(SchedulerTest, AJobThatCanNeverFitLeavesTheReservationToTheNextBlockedJob) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  AddRunning(&state_, Pending(100, 8, 1), {{1, 1}}, 1000);
  AddRunning(&state_, Pending(101, 4, 1), {{2, 1}}, 2000);
  state_.jobs.push_back(Pending(1, 8, 3, 0));                    // 3 nodes: never fits here
  state_.jobs.push_back(Pending(2, 8, 2, 1));                    // fits at t=2000: the head
  state_.jobs.push_back(Pending(3, 4, 1, 2, /*runtime=*/5000));  // would delay job 2
  state_.jobs.push_back(Pending(4, 4, 1, 3, /*runtime=*/500));   // ends before t=2000
  const auto out = Scheduler({}).Schedule(state_, At(0));
  EXPECT_EQ(out.head, 2);
  EXPECT_EQ(out.shadow_time, At(2000));
  EXPECT_EQ(Started(out), std::vector<model::JobId>({4}));
}

TEST_F(SchedulerTest, BackfillsOnCapacityTheHeadDoesNotNeed) {
  // Three nodes; the head needs 2 whole nodes at t=1000; the third node's
  // spare GPUs can take a long job without delaying it.
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8), ReadyNode(3, 0, 8, 8)};
  AddRunning(&state_, Pending(100, 8, 1), {{1, 1}}, 1000);
  AddRunning(&state_, Pending(101, 8, 1), {{2, 1}}, 1000);
  AddRunning(&state_, Pending(102, 4, 1), {{3, 1}}, 9000);
  state_.jobs.push_back(Pending(1, 8, 2, 0));
  state_.jobs.push_back(Pending(2, 4, 1, 1, /*runtime=*/50000));
  const auto out = Scheduler({}).Schedule(state_, At(0));
  EXPECT_EQ(out.shadow_time, At(1000));
  EXPECT_EQ(Started(out), std::vector<model::JobId>({2}));
}

TEST_F(SchedulerTest, NoBackfillWhenDisabled) {
  state_.nodes = {ReadyNode(1, 0, 8, 8), ReadyNode(2, 0, 8, 8)};
  AddRunning(&state_, Pending(100, 8, 1), {{1, 1}}, 1000);
  state_.jobs.push_back(Pending(1, 8, 2, 0));
  state_.jobs.push_back(Pending(2, 4, 1, 1, /*runtime=*/10));
  SchedulerOptions o;
  o.backfill = false;
  EXPECT_TRUE(Scheduler(o).Schedule(state_, At(0)).placements.empty());
}

TEST_F(SchedulerTest, BootingNodesCountTowardTheShadowTime) {
  // The head needs 2 nodes: one is free now, one is booting until t=300.
  // A long job must not take the free node, or the head would wait for it.
  state_.nodes = {ReadyNode(1, 0, 8, 8), BootingNode(2, 0, 8, 300)};
  state_.jobs = {Pending(1, 8, 2, 0), Pending(2, 8, 1, 1, /*runtime=*/5000), Pending(3, 8, 1, 2, /*runtime=*/200)};
  const auto out = Scheduler({}).Schedule(state_, At(0));
  EXPECT_EQ(out.shadow_time, At(300));
  EXPECT_EQ(Started(out), std::vector<model::JobId>({3}));
}

TEST_F(SchedulerTest, AJobThatCanNeverFitDoesNotBlockTheQueue) {
  state_.nodes = {ReadyNode(1, 0, 8, 8)};
  state_.jobs = {Pending(1, 8, 4, 0), Pending(2, 8, 1, 1, 99999)};  // 4 nodes needed, 1 exists
  const auto out = Scheduler({}).Schedule(state_, At(0));
  EXPECT_EQ(out.head, -1);
  EXPECT_EQ(Started(out), std::vector<model::JobId>({2}));
}

TEST_F(SchedulerTest, PlacesOnBootingNodesOnlyWhenAllowed) {
  state_.nodes = {BootingNode(1, 0, 8, 300)};
  state_.jobs = {Pending(1, 8, 1)};
  EXPECT_TRUE(Scheduler({}).Schedule(state_, At(0)).placements.empty());
  SchedulerOptions o;
  o.place_on_provisioning = true;
  EXPECT_EQ(Scheduler(o).Schedule(state_, At(0)).placements.size(), 1u);
}

TEST_F(SchedulerTest, WorkersNeedAWholeNodeEach) {
  spec_ = testing::Spec({testing::Pool("p4", 4, Tier::kOnDemand, 50, 0, 50)});
  state_.spec = &spec_;
  state_.nodes = {ReadyNode(1, 0, 4, 4), ReadyNode(2, 0, 4, 4)};
  state_.jobs = {Pending(1, 8, 1)};  // an 8-GPU worker cannot split over two 4-GPU nodes
  EXPECT_TRUE(Scheduler({}).Schedule(state_, At(0)).placements.empty());
}

TEST_F(SchedulerTest, DrainingNodesTakeNothing) {
  state_.nodes = {ReadyNode(1, 0, 8, 8)};
  state_.nodes[0].state = model::NodeState::kDraining;
  state_.jobs = {Pending(1, 1, 1)};
  EXPECT_TRUE(Scheduler({}).Schedule(state_, At(0)).placements.empty());
}

// A driver's state index (model/state_index.h) changes how a pass finds what
// it reads, never what it decides: on random clusters, every option set
// gives the same placements, head and shadow time with and without one.
TEST(SchedulerIndexTest, SameDecisionsWithAndWithoutAnIndex) {
  const model::ClusterSpec spec = testing::RandomSpec();
  int placed = 0, reserved = 0;
  // One scheduler per variant that decides on every cluster in turn: what it
  // keeps between passes (memory only) must not change a decision.
  std::vector<Scheduler> long_lived;
  for (int variant = 0; variant < 4; ++variant) {
    SchedulerOptions o;
    o.backfill = variant % 2 == 0;
    o.place_on_provisioning = variant >= 2;
    long_lived.emplace_back(o);
  }
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    model::ClusterState state = testing::RandomState(&spec, seed);
    for (int variant = 0; variant < 4; ++variant) {
      const Scheduler scheduler(long_lived[variant].options());
      state.index = nullptr;
      const SchedulerOutput scanned = scheduler.Schedule(state, At(3600));
      const model::StateIndex index = model::StateIndex::Build(state);
      state.index = &index;
      ASSERT_EQ(model::IndexFor(state), &index);
      const SchedulerOutput indexed = scheduler.Schedule(state, At(3600));
      const std::string where = "seed " + std::to_string(seed) + ", variant " + std::to_string(variant);
      ExpectSameDecisions(indexed, scanned, where);
      // And with a kept snapshot (sched/kept_capacity.h; its own test follows it through changes).
      KeptCapacity kept;
      ExpectSameDecisions(scheduler.Schedule(state, At(3600), &kept), scanned, where + ", kept");
      ExpectSameDecisions(long_lived[variant].Schedule(state, At(3600), &kept), scanned, where + ", long-lived");
      placed += static_cast<int>(scanned.placements.size());
      reserved += scanned.head >= 0;
    }
  }
  // The random clusters exercise both placement and reservations.
  EXPECT_GT(placed, 500);
  EXPECT_GT(reserved, 100);
}

}  // namespace
}  // namespace tide::sched
