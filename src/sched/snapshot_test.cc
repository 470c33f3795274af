#include "sched/snapshot.h"

#include <memory>
#include <vector>

#include "core/rng.h"
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

// Placing on listed slots with a limit per slot: each worker on the slot
// that may give the fewest GPUs and still holds it (lowest slot on a tie),
// never more than a slot's limit or its free GPUs, and only what was placed
// is taken.
TEST(CapacitySnapshotTest, PlacesOnSlotsWithinEachSlotsLimit) {
  CapacitySnapshot s(1, 8);
  s.AddNode(1, 0, 8, 8);  // slot 0: 8 free, but may give only 2
  s.AddNode(2, 0, 8, 4);  // slot 1: 4 free, may give all
  s.AddNode(3, 0, 8, 6);  // slot 2: 6 free, limit 9 (the free GPUs bound it)
  s.AddNode(4, 0, 8, 8);  // slot 3: not listed
  const std::vector<int> slots = {0, 1, 2};
  const std::vector<int> limit = {2, 4, 9};
  std::vector<SlotShare> out;
  // 2-GPU workers: slot 0 (2) first, then slot 1 twice (4, 2), then slot 2
  // three times; the eighth finds no room.
  EXPECT_EQ(s.PlaceOnSlots(slots, limit, 2, 8, &out), 6);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].slot, 0);
  EXPECT_EQ(out[0].workers, 1);
  EXPECT_EQ(out[1].slot, 1);
  EXPECT_EQ(out[1].workers, 2);
  EXPECT_EQ(out[2].slot, 2);
  EXPECT_EQ(out[2].workers, 3);
  EXPECT_EQ(s.free(0), 6);
  EXPECT_EQ(s.free(1), 0);
  EXPECT_EQ(s.free(2), 0);
  EXPECT_EQ(s.free(3), 8);
  // A tie goes to the lowest slot; a negative limit gives nothing.
  CapacitySnapshot t(1, 8);
  t.AddNode(1, 0, 8, 8);
  t.AddNode(2, 0, 8, 8);
  t.AddNode(3, 0, 8, 8);
  out.clear();
  const std::vector<int> tied = {2, 1, 0};
  EXPECT_EQ(t.PlaceOnSlots(tied, std::vector<int>{4, 4, -1}, 4, 1, &out), 1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].slot, 1);
  EXPECT_EQ(t.free(1), 4);
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

// Slots is kept as free counts change; it must equal the sum of
// floor(free / g) over the nodes, through adds, takes, gives, placements and
// forks that commit or revert, nested. A pool's count is made again when it
// is read after a node was added, so the checks come at random steps: runs of
// changes happen between reads, as while a pass builds its snapshot.
TEST(CapacitySnapshotTest, SlotsEqualTheSumOverNodesThroughEveryChange) {
  Rng rng(11);
  CapacitySnapshot s(3, 8);
  auto brute = [&](PoolMask pools, int g) {
    int64_t n = 0;
    for (int slot = 0; slot < s.size(); ++slot) {
      if (pools & PoolBit(s.pool(slot))) n += s.free(slot) / g;
    }
    return n;
  };
  auto check = [&](int step) {
    for (PoolMask pools = 1; pools < 8; ++pools) {
      for (int g = 1; g <= 9; ++g) ASSERT_EQ(s.Slots(pools, g), brute(pools, g)) << "step " << step;
    }
  };
  std::vector<std::unique_ptr<CapacitySnapshot::Fork>> forks;
  for (int step = 0; step < 3000; ++step) {
    const int op = static_cast<int>(rng.UniformInt(0, 9));
    if (op <= 1 || s.size() == 0) {
      const int gpus = static_cast<int>(rng.UniformInt(1, 8));
      const int pool = static_cast<int>(rng.UniformInt(0, 2)), free = static_cast<int>(rng.UniformInt(0, gpus));
      if (forks.empty() && rng.Bernoulli(0.3)) {
        s.AddAbsent(1);  // filled in later, as a sparse what-if does
        s.Materialize(s.size() - 1, step, pool, gpus, free);
      } else {
        s.AddNode(step, pool, gpus, free);
      }
    } else if (op <= 4) {
      const int slot = static_cast<int>(rng.UniformInt(0, s.size() - 1));
      if (s.free(slot) > 0) s.Take(slot, static_cast<int>(rng.UniformInt(1, s.free(slot))));
    } else if (op <= 6) {
      const int slot = static_cast<int>(rng.UniformInt(0, s.size() - 1));
      if (s.free(slot) < s.gpus(slot)) s.Give(slot, static_cast<int>(rng.UniformInt(1, s.gpus(slot) - s.free(slot))));
    } else if (op == 7) {
      const int g = static_cast<int>(rng.UniformInt(1, 4));
      const PoolMask pools = static_cast<PoolMask>(rng.UniformInt(1, 7));
      const int64_t fit = s.Slots(pools, g);
      std::vector<SlotShare> out;
      if (fit > 0) s.Place(pools, g, static_cast<int>(std::min<int64_t>(fit, rng.UniformInt(1, 5))), &out);
    } else if (op == 8 && forks.size() < 4) {
      forks.push_back(std::make_unique<CapacitySnapshot::Fork>(&s));
    } else if (!forks.empty()) {
      if (rng.Bernoulli(0.5)) forks.back()->Commit();
      forks.pop_back();
    }
    if (rng.Bernoulli(0.2)) check(step);
  }
  while (!forks.empty()) forks.pop_back();
  check(-1);
}

// A what-if built in the memory of the last (ResetAbsent) answers as one
// built new: the same counts and the same placements, through the same
// fills, templates, takes, gives and forks, however many slots each had.
TEST(CapacitySnapshotTest, ResetAbsentAnswersAsANewSnapshot) {
  Rng rng(29);
  CapacitySnapshot reused(3, 8);
  for (int round = 0; round < 60; ++round) {
    const int count = static_cast<int>(rng.UniformInt(0, round % 3 == 0 ? 300 : 40));
    reused.ResetAbsent(count);
    CapacitySnapshot fresh(3, 8);
    fresh.AddAbsent(count);
    std::vector<std::unique_ptr<CapacitySnapshot::Fork>> forks[2];
    auto check = [&](int step) {
      ASSERT_EQ(reused.size(), fresh.size()) << "round " << round << " step " << step;
      ASSERT_EQ(reused.total_free(), fresh.total_free()) << "round " << round << " step " << step;
      for (int p = 0; p < 3; ++p) ASSERT_EQ(reused.pool_free(p), fresh.pool_free(p));
      for (int slot = 0; slot < fresh.size(); ++slot) {
        ASSERT_EQ(reused.absent(slot), fresh.absent(slot)) << "slot " << slot;
        if (!fresh.absent(slot)) { ASSERT_EQ(reused.free(slot), fresh.free(slot)) << "slot " << slot; }
      }
      for (PoolMask pools = 1; pools < 8; ++pools) {
        for (int g = 1; g <= 8; ++g) ASSERT_EQ(reused.Slots(pools, g), fresh.Slots(pools, g));
      }
    };
    for (int step = 0; step < 300; ++step) {
      const int op = static_cast<int>(rng.UniformInt(0, 9));
      const int size = fresh.size();
      if (op <= 2 && size > 0) {  // fill an absent slot
        const int slot = static_cast<int>(rng.UniformInt(0, size - 1));
        const int gpus = static_cast<int>(rng.UniformInt(1, 8)), pool = static_cast<int>(rng.UniformInt(0, 2));
        const int free = static_cast<int>(rng.UniformInt(0, gpus));
        if (!fresh.absent(slot)) continue;
        for (CapacitySnapshot* s : {&reused, &fresh}) s->Materialize(slot, step, pool, gpus, free);
      } else if (op == 3) {  // a template for a node bought this pass
        const int pool = static_cast<int>(rng.UniformInt(0, 2));
        for (CapacitySnapshot* s : {&reused, &fresh}) s->AddNode(-step, pool, 8, 8);
      } else if (op <= 5 && size > 0) {
        const int slot = static_cast<int>(rng.UniformInt(0, size - 1));
        if (fresh.absent(slot)) continue;
        const bool take = rng.Bernoulli(0.5);
        const int room = take ? fresh.free(slot) : fresh.gpus(slot) - fresh.free(slot);
        if (room == 0) continue;
        const int k = static_cast<int>(rng.UniformInt(1, room));
        for (CapacitySnapshot* s : {&reused, &fresh}) take ? s->Take(slot, k) : s->Give(slot, k);
      } else if (op <= 7) {
        const int g = static_cast<int>(rng.UniformInt(1, 4));
        const PoolMask pools = static_cast<PoolMask>(rng.UniformInt(1, 7));
        const int64_t fit = fresh.Slots(pools, g);
        if (fit == 0) continue;
        const int w = static_cast<int>(std::min<int64_t>(fit, rng.UniformInt(1, 5)));
        std::vector<SlotShare> a, b;
        reused.Place(pools, g, w, &a);
        fresh.Place(pools, g, w, &b);
        ASSERT_EQ(a.size(), b.size());
        for (size_t i = 0; i < a.size(); ++i) {
          ASSERT_EQ(a[i].slot, b[i].slot) << "round " << round << " step " << step;
          ASSERT_EQ(a[i].workers, b[i].workers);
        }
      } else if (op == 8 && forks[0].size() < 3) {
        forks[0].push_back(std::make_unique<CapacitySnapshot::Fork>(&reused));
        forks[1].push_back(std::make_unique<CapacitySnapshot::Fork>(&fresh));
      } else if (!forks[0].empty()) {
        const bool commit = rng.Bernoulli(0.5);
        for (auto& f : forks) {
          if (commit) f.back()->Commit();
          f.pop_back();
        }
      }
      if (rng.Bernoulli(0.1)) check(step);
    }
    for (auto& f : forks) {
      while (!f.empty()) f.pop_back();
    }
    check(-1);
  }
}

// A snapshot kept between passes (sched/kept_capacity.h) has nodes replaced
// and erased in place. Through random changes it answers as a snapshot made
// afresh of the same nodes: the same counts, and best fit picks the same node.
TEST(CapacitySnapshotTest, ReplacedAndErasedSlotsAnswerAsAFreshSnapshot) {
  Rng rng(17);
  struct N {
    model::NodeId id;
    int pool, gpus, free;
  };
  for (int round = 0; round < 40; ++round) {
    CapacitySnapshot snap(3, 8);
    std::vector<N> nodes;
    model::NodeId next = 1;
    // Some rounds grow past a few words of slots per level.
    const int grow = round % 4 == 0 ? 8 : 0;
    for (int step = 0; step < 400; ++step) {
      const int op = std::max(0, static_cast<int>(rng.UniformInt(0, 3 + grow)) - grow);
      if (op == 0 || nodes.size() < 3) {
        // Full nodes are common, and take no room in the levels' words.
        const int gpus = rng.UniformInt(0, 1) == 0 ? 4 : 8;
        const int free = rng.UniformInt(0, 1) == 0 ? 0 : static_cast<int>(rng.UniformInt(0, gpus));
        N n{next++, static_cast<int>(rng.UniformInt(0, 2)), gpus, free};
        snap.AddNode(n.id, n.pool, n.gpus, n.free);
        nodes.push_back(n);
      } else if (op == 1) {
        const int s = static_cast<int>(rng.UniformInt(0, static_cast<int64_t>(nodes.size()) - 1));
        snap.EraseSlot(s);
        nodes.erase(nodes.begin() + s);
      } else if (op == 2) {
        const int s = static_cast<int>(rng.UniformInt(0, static_cast<int64_t>(nodes.size()) - 1));
        const int gpus = rng.UniformInt(0, 1) == 0 ? 4 : 8;
        nodes[s] = {nodes[s].id, static_cast<int>(rng.UniformInt(0, 2)), gpus, static_cast<int>(rng.UniformInt(0, gpus))};
        snap.Replace(s, nodes[s].id, nodes[s].pool, nodes[s].gpus, nodes[s].free);
      } else {
        const int s = static_cast<int>(rng.UniformInt(0, static_cast<int64_t>(nodes.size()) - 1));
        const int free = static_cast<int>(rng.UniformInt(0, nodes[s].gpus));
        snap.Take(s, nodes[s].free - free);
        nodes[s].free = free;
      }
      CapacitySnapshot fresh(3, 8);
      for (const N& n : nodes) fresh.AddNode(n.id, n.pool, n.gpus, n.free);
      ASSERT_EQ(snap.size(), fresh.size());
      ASSERT_EQ(snap.total_free(), fresh.total_free()) << "round " << round << ", step " << step;
      for (PoolMask mask = 1; mask < 8; ++mask) {
        for (int g = 1; g <= 8; ++g) {
          ASSERT_EQ(snap.Slots(mask, g), fresh.Slots(mask, g)) << "round " << round << ", step " << step;
          if (fresh.Slots(mask, g) == 0) continue;
          CapacitySnapshot::Fork a(&snap), b(&fresh);
          std::vector<SlotShare> x, y;
          snap.Place(mask, g, 1, &x);
          fresh.Place(mask, g, 1, &y);
          ASSERT_EQ(x[0].slot, y[0].slot) << "round " << round << ", step " << step << ", pools " << mask << ", g " << g;
        }
      }
    }
  }
}

// Slots of full nodes past the levels' words: erasing one moves no bit of
// any level (the words of the next level start right after a level's).
TEST(CapacitySnapshotTest, ErasingAFullSlotPastTheLevelsWordsMovesNoBit) {
  // One pool, so level f's word follows level f-1's. Slots 0-63 fit the
  // levels' one word each; slots 64-70 are full and widen nothing.
  CapacitySnapshot snap(1, 8);
  for (int i = 0; i < 71; ++i) snap.AddNode(1 + i, 0, 8, i < 10 ? 2 : i == 20 ? 3 : 0);
  snap.EraseSlot(70);
  std::vector<SlotShare> got;
  snap.Place(PoolBit(0), 3, 1, &got);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(snap.id(got[0].slot), 21);  // the node with 3 GPUs free, still
  got.clear();
  snap.Place(PoolBit(0), 2, 1, &got);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(snap.id(got[0].slot), 1);
  EXPECT_EQ(snap.Slots(PoolBit(0), 1), 2 * 9);  // nine nodes with 2 left
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
