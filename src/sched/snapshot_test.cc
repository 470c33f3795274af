#include "sched/snapshot.h"

#include <vector>

#include "gtest/gtest.h"

namespace tide::sched {
namespace {

TEST(CapacitySnapshotTest, SlotsCountWholeWorkersPerNode) {
  CapacitySnapshot s(2, 8);
  s.AddNode(1, 0, 8, 8);
  s.AddNode(2, 0, 8, 5);
  s.AddNode(3, 1, 8, 8);
  EXPECT_EQ(s.Slots(PoolBit(0), 4), 2 + 1);
  EXPECT_EQ(s.Slots(PoolBit(0) | PoolBit(1), 4), 2 + 1 + 2);
  EXPECT_EQ(s.Slots(PoolBit(1), 3), 2);
  EXPECT_EQ(s.Slots(PoolBit(0), 9), 0);
  EXPECT_EQ(s.total_free(), 21);
}

TEST(CapacitySnapshotTest, PlacesByBestFitAndMergesWorkersOnOneNode) {
  CapacitySnapshot s(1, 8);
  s.AddNode(1, 0, 8, 8);  // slot 0
  s.AddNode(2, 0, 8, 3);  // slot 1: the tightest fit for 2 GPUs
  s.AddNode(3, 0, 8, 6);  // slot 2
  std::vector<SlotShare> out;
  s.Place(PoolBit(0), 2, 1, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].slot, 1);
  out.clear();
  // Three 2-GPU workers: slot 1 has 1 left (no), slot 2 has 6 -> all three there.
  s.Place(PoolBit(0), 2, 3, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].slot, 2);
  EXPECT_EQ(out[0].workers, 3);
  EXPECT_EQ(s.free(2), 0);
}

TEST(CapacitySnapshotTest, TiesGoToTheLowestSlot) {
  CapacitySnapshot s(2, 8);
  s.AddNode(10, 1, 8, 8);
  s.AddNode(11, 0, 8, 8);
  std::vector<SlotShare> out;
  s.Place(PoolBit(0) | PoolBit(1), 8, 1, &out);
  EXPECT_EQ(out[0].slot, 0);
}

TEST(CapacitySnapshotTest, ForkRevertsChangesAndAddedNodes) {
  CapacitySnapshot s(1, 8);
  s.AddNode(1, 0, 8, 8);
  {
    CapacitySnapshot::Fork f(&s);
    s.Take(0, 8);
    s.AddNode(-1, 0, 8, 8);
    s.Take(1, 3);
    EXPECT_EQ(s.size(), 2);
    EXPECT_EQ(s.total_free(), 5);
  }
  EXPECT_EQ(s.size(), 1);
  EXPECT_EQ(s.free(0), 8);
  EXPECT_EQ(s.total_free(), 8);
  EXPECT_EQ(s.Slots(PoolBit(0), 8), 1);
}

TEST(CapacitySnapshotTest, CommittedForkKeepsChanges) {
  CapacitySnapshot s(1, 8);
  s.AddNode(1, 0, 8, 8);
  {
    CapacitySnapshot::Fork f(&s);
    s.Take(0, 4);
    f.Commit();
  }
  EXPECT_EQ(s.free(0), 4);
}

TEST(CapacitySnapshotTest, NestedForksUndoInnerThenOuter) {
  CapacitySnapshot s(1, 8);
  s.AddNode(1, 0, 8, 8);
  {
    CapacitySnapshot::Fork outer(&s);
    s.Take(0, 2);
    {
      CapacitySnapshot::Fork inner(&s);
      s.Take(0, 2);
      inner.Commit();  // folds into the outer fork
    }
    EXPECT_EQ(s.free(0), 4);
    {
      CapacitySnapshot::Fork inner(&s);
      s.Take(0, 4);
    }
    EXPECT_EQ(s.free(0), 4);
  }
  EXPECT_EQ(s.free(0), 8);
}

TEST(SlotIndexTest, FindsSlotsWhetherIdsCameInOrderOrNot) {
  SlotIndex in_order;
  in_order.Add(3, 0);
  in_order.Add(7, 1);
  in_order.Add(12, 2);
  EXPECT_EQ(in_order.Find(7), 1);
  EXPECT_EQ(in_order.Find(12), 2);
  EXPECT_EQ(in_order.Find(5), -1);
  EXPECT_EQ(in_order.Find(13), -1);
  // Booting nodes come after the ready ones, so their ids may be lower.
  SlotIndex mixed;
  mixed.Add(10, 0);
  mixed.Add(20, 1);
  mixed.Add(4, 2);
  mixed.Add(15, 3);
  EXPECT_EQ(mixed.Find(4), 2);
  EXPECT_EQ(mixed.Find(15), 3);
  EXPECT_EQ(mixed.Find(20), 1);
  EXPECT_FALSE(mixed.contains(11));
  mixed.clear();
  EXPECT_EQ(mixed.size(), 0u);
  EXPECT_EQ(mixed.Find(10), -1);
}

}  // namespace
}  // namespace tide::sched
