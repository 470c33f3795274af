#include "sim/storage_model.h"

#include <vector>

#include "gtest/gtest.h"
#include "testutil/builders.h"

namespace tide::sim {
namespace {

using testing::At;
using Ids = std::vector<model::NodeId>;

// 200 GB per node; 10 GB/s shared, 2.5 GB/s per node.
StorageOptions Options(int max_concurrent = 0) {
  StorageOptions o;
  o.load_gb = 200;
  o.bandwidth_gbps = 10;
  o.node_gbps = 2.5;
  o.max_concurrent = max_concurrent;
  return o;
}

TEST(StorageModelTest, EnabledOnlyWithSomethingToLoad) {
  EXPECT_TRUE(StorageModel(Options()).enabled());
  StorageOptions off = Options();
  off.load_gb = 0;
  EXPECT_FALSE(StorageModel(off).enabled());
}

TEST(StorageModelTest, NothingLoading) {
  StorageModel m(Options());
  EXPECT_EQ(m.NextCompletion(), kInfiniteFuture);
  EXPECT_TRUE(m.Complete(At(100)).empty());
  EXPECT_EQ(m.NextCompletion(), kInfiniteFuture);
}

TEST(StorageModelTest, OneNodeAloneLoadsAtItsOwnLinkSpeed) {
  StorageModel m(Options());
  m.Start(1, At(0));
  EXPECT_EQ(m.NextCompletion(), At(80));  // 200 GB at 2.5 GB/s
  EXPECT_TRUE(m.Complete(At(79)).empty());
  EXPECT_EQ(m.NextCompletion(), At(80));
  EXPECT_EQ(m.Complete(At(80)), Ids({1}));
  EXPECT_EQ(m.NextCompletion(), kInfiniteFuture);
  EXPECT_TRUE(m.Complete(At(200)).empty());  // reported once
}

TEST(StorageModelTest, NodesLoadingTogetherShareTheBandwidth) {
  struct Case {
    int nodes;
    int64_t seconds;
  };
  for (const Case& c : std::vector<Case>{
           {1, 80},   // 2.5 GB/s: its own link
           {4, 80},   // 10 / 4 = 2.5 GB/s each: still the link
           {5, 100},  // 2 GB/s each
           {8, 160},  // 1.25 GB/s each
           {16, 320},
       }) {
    SCOPED_TRACE(c.nodes);
    StorageModel m(Options());
    Ids all;
    for (int i = 1; i <= c.nodes; ++i) {
      m.Start(i, At(1000));
      all.push_back(i);
    }
    EXPECT_EQ(m.NextCompletion(), At(1000 + c.seconds));
    EXPECT_TRUE(m.Complete(At(1000 + c.seconds - 1)).empty());
    EXPECT_EQ(m.Complete(At(1000 + c.seconds)), all);
    EXPECT_EQ(m.NextCompletion(), kInfiniteFuture);
  }
}

TEST(StorageModelTest, ALaterArrivalSlowsTheOthers) {
  StorageModel m(Options());
  m.Start(1, At(0));  // alone: 100 GB done by 40 s
  for (int i = 2; i <= 8; ++i) m.Start(i, At(40));
  // Eight share 10 GB/s: node 1's last 100 GB take 80 s.
  EXPECT_EQ(m.NextCompletion(), At(120));
  EXPECT_EQ(m.Complete(At(120)), Ids({1}));
  // The other seven have 100 GB left at 10/7 GB/s each: 70 s.
  EXPECT_EQ(m.NextCompletion(), At(190));
  EXPECT_EQ(m.Complete(At(190)), Ids({2, 3, 4, 5, 6, 7, 8}));
}

TEST(StorageModelTest, StaggeringLetsTheFirstFinishEarlier) {
  // Eight nodes, at most four at a time: the first four load at their link
  // speed (80 s); the rest start as they finish.
  StorageModel m(Options(/*max_concurrent=*/4));
  for (int i = 1; i <= 8; ++i) m.Start(i, At(0));
  EXPECT_EQ(m.NextCompletion(), At(80));
  EXPECT_EQ(m.Complete(At(80)), Ids({1, 2, 3, 4}));
  EXPECT_EQ(m.NextCompletion(), At(160));
  EXPECT_EQ(m.Complete(At(160)), Ids({5, 6, 7, 8}));
  EXPECT_EQ(m.NextCompletion(), kInfiniteFuture);
}

TEST(StorageModelTest, StaggeringAdmitsInArrivalOrderOneSlotAtATime) {
  StorageModel m(Options(/*max_concurrent=*/1));
  m.Start(3, At(0));
  m.Start(1, At(10));
  m.Start(2, At(20));
  EXPECT_EQ(m.NextCompletion(), At(80));
  EXPECT_EQ(m.Complete(At(80)), Ids({3}));
  EXPECT_EQ(m.NextCompletion(), At(160));
  EXPECT_EQ(m.Complete(At(160)), Ids({1}));
  EXPECT_EQ(m.NextCompletion(), At(240));
  EXPECT_EQ(m.Complete(At(240)), Ids({2}));
}

TEST(StorageModelTest, CancelFreesTheShare) {
  StorageModel m(Options());
  for (int i = 1; i <= 8; ++i) m.Start(i, At(0));
  EXPECT_EQ(m.NextCompletion(), At(160));
  // At 80 s each has 100 GB left; four go, and the other four get 2.5 GB/s.
  for (int i = 5; i <= 8; ++i) m.Cancel(i, At(80));
  EXPECT_EQ(m.NextCompletion(), At(120));
  EXPECT_EQ(m.Complete(At(120)), Ids({1, 2, 3, 4}));
  EXPECT_EQ(m.NextCompletion(), kInfiniteFuture);
}

TEST(StorageModelTest, CancelAdmitsTheNextWaitingNode) {
  StorageModel m(Options(/*max_concurrent=*/1));
  m.Start(1, At(0));
  m.Start(2, At(0));
  m.Start(3, At(0));
  m.Cancel(2, At(10));  // waiting: just forgotten
  EXPECT_EQ(m.NextCompletion(), At(80));
  m.Cancel(1, At(20));  // loading: node 3 takes the slot at 20 s
  EXPECT_EQ(m.NextCompletion(), At(100));
  EXPECT_EQ(m.Complete(At(100)), Ids({3}));
  EXPECT_EQ(m.NextCompletion(), kInfiniteFuture);
}

TEST(StorageModelTest, CancelOfTheLastLoadEmptiesTheModel) {
  StorageModel m(Options());
  m.Start(1, At(0));
  m.Cancel(1, At(30));
  EXPECT_EQ(m.NextCompletion(), kInfiniteFuture);
  EXPECT_TRUE(m.Complete(At(80)).empty());
  // A later load starts afresh.
  m.Start(2, At(500));
  EXPECT_EQ(m.NextCompletion(), At(580));
}

TEST(StorageModelTest, EpochChangesWhenTheNextCompletionMay) {
  StorageModel m(Options());
  uint64_t e = m.epoch();
  m.Start(1, At(0));
  EXPECT_NE(m.epoch(), e);
  e = m.epoch();
  m.Start(2, At(0));
  EXPECT_NE(m.epoch(), e);

  // Reading the model, or completing nothing, leaves it.
  e = m.epoch();
  (void)m.NextCompletion();
  EXPECT_TRUE(m.Complete(At(10)).empty());
  EXPECT_EQ(m.epoch(), e);

  m.Cancel(2, At(10));
  EXPECT_NE(m.epoch(), e);
  e = m.epoch();
  EXPECT_EQ(m.Complete(m.NextCompletion()), Ids({1}));
  EXPECT_NE(m.epoch(), e);
}

TEST(StorageModelTest, CompletionTimesAreWholeSecondsRoundedUp) {
  StorageOptions o = Options();
  o.load_gb = 201;  // 80.4 s at 2.5 GB/s
  StorageModel m(o);
  m.Start(1, At(0));
  EXPECT_EQ(m.NextCompletion(), At(81));
  EXPECT_TRUE(m.Complete(At(80)).empty());
  EXPECT_EQ(m.Complete(At(81)), Ids({1}));
}

}  // namespace
}  // namespace tide::sim
