#include "sched/kept_capacity.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/rng.h"
#include "gtest/gtest.h"
#include "model/state_index.h"
#include "sched/scheduler.h"
#include "sched/scheduler_expect.h"
#include "testutil/builders.h"

namespace tide::sched {
namespace {

using model::ClusterState;
using model::JobState;
using model::Node;
using model::NodeState;
using testing::At;

// What the kept snapshot must hold: a slot per node, at its position, with
// the free GPUs of the ready ones; and the same worker counts as a snapshot
// made afresh of the ready nodes.
void ExpectKeptMatches(const model::ClusterSpec& spec, const ClusterState& state, CapacitySnapshot* kept) {
  ASSERT_EQ(kept->size(), static_cast<int>(state.nodes.size()));
  CapacitySnapshot fresh(static_cast<int>(spec.pools.size()), spec.MaxGpusPerNode());
  for (size_t p = 0; p < state.nodes.size(); ++p) {
    const Node& n = state.nodes[p];
    const int s = static_cast<int>(p);
    const int free = n.state == NodeState::kReady ? n.free_gpus : 0;
    EXPECT_EQ(kept->id(s), n.id) << "slot " << s;
    EXPECT_EQ(kept->pool(s), n.pool) << "slot " << s;
    EXPECT_EQ(kept->gpus(s), n.gpus) << "slot " << s;
    EXPECT_EQ(kept->free(s), free) << "slot " << s;
    fresh.AddNode(n.id, n.pool, n.gpus, free);
  }
  EXPECT_EQ(kept->total_free(), fresh.total_free());
  for (PoolMask mask = 1; mask < PoolBit(static_cast<int>(spec.pools.size())); ++mask) {
    for (int g = 1; g <= 8; ++g) EXPECT_EQ(kept->Slots(mask, g), fresh.Slots(mask, g)) << "pools " << mask << ", g " << g;
  }
  // Best fit picks the same nodes: place one worker of each size on both.
  for (int g = 1; g <= 8; ++g) {
    const PoolMask all = PoolBit(static_cast<int>(spec.pools.size())) - 1;
    if (fresh.Slots(all, g) < 1) continue;
    CapacitySnapshot::Fork a(kept), b(&fresh);
    std::vector<SlotShare> x, y;
    kept->Place(all, g, 1, &x);
    fresh.Place(all, g, 1, &y);
    ASSERT_EQ(x.size(), 1u);
    ASSERT_EQ(y.size(), 1u);
    EXPECT_EQ(kept->id(x[0].slot), fresh.id(y[0].slot)) << "g " << g;
  }
}

// Passes over a changing cluster, told to the index as the simulator tells
// it: the kept snapshot catches up from the index's events (it is read
// afresh only once), holds what the nodes say before every pass, and gives
// the decisions a snapshot made for the pass gives.
TEST(KeptCapacityTest, FollowsTheIndexAndDecidesAsAFreshSnapshot) {
  const model::ClusterSpec spec = testing::RandomSpec();
  int placed = 0, erased = 0, reserved = 0;
  size_t largest = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    ClusterState state = testing::RandomState(&spec, seed);
    model::StateIndex index = model::StateIndex::Build(state);
    state.index = &index;
    KeptCapacity kept;
    const Scheduler scheduler(SchedulerOptions{});
    Rng rng(seed);
    model::NodeId next_id = state.nodes.empty() ? 1 : state.nodes.back().id + 1;
    for (int step = 0; step < 60; ++step) {
      const Timestamp now = At(3600 + 60 * step);
      const std::string where = "seed " + std::to_string(seed) + ", step " + std::to_string(step);
      ASSERT_EQ(model::IndexFor(state), &index) << where;
      const SchedulerOutput want = scheduler.Schedule(state, now);
      const SchedulerOutput got = scheduler.Schedule(state, now, &kept);
      ExpectSameDecisions(got, want, where);
      // The pass left the kept snapshot as it found it.
      ExpectKeptMatches(spec, state, kept.Sync(spec, index));
      ASSERT_EQ(kept.Diff(index), "") << where;
      ExpectSameDecisions(scheduler.Schedule(state, now, &kept), want, where + ", again");
      placed += static_cast<int>(want.placements.size());
      reserved += want.head >= 0;
      // Start what was placed.
      for (const auto& p : want.placements) {
        for (size_t j = 0; j < state.jobs.size(); ++j) {
          model::Job& job = state.jobs[j];
          if (job.id != p.job) continue;
          job.state = JobState::kRunning;
          job.alloc.assign(p.shares.begin(), p.shares.end());
          job.started = now;
          job.expected_end = now + job.spec.runtime;
          index.TouchJob(j);
          for (const auto& sh : p.shares) {
            const int pos = index.NodePos(sh.node);
            ASSERT_GE(pos, 0);
            state.nodes[pos].free_gpus -= sh.workers * job.spec.gpus_per_worker;
            index.TouchNode(static_cast<size_t>(pos));
          }
        }
      }
      // And change the nodes: one appended, erased or changed at a time. The
      // cluster grows past 64 nodes (a word of slots per level), and many
      // nodes hold no GPU free for the kept snapshot (booting, draining).
      for (int k = static_cast<int>(rng.UniformInt(1, 5)); k > 0; --k) {
        const int op = std::max(0, static_cast<int>(rng.UniformInt(-2, 3)));
        if (op == 0 || state.nodes.empty()) {
          const int pool = static_cast<int>(rng.UniformInt(0, static_cast<int64_t>(spec.pools.size()) - 1));
          const int gpus = spec.pools[pool].type.gpus;
          state.nodes.push_back(rng.UniformInt(0, 1) == 0 ? testing::ReadyNode(next_id, pool, gpus, gpus)
                                                          : testing::BootingNode(next_id, pool, gpus, 3600));
          ++next_id;
          index.TouchNode(state.nodes.size() - 1);
        } else if (op == 1) {
          const auto pos = static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(state.nodes.size()) - 1));
          index.RemoveNode(pos);
          state.nodes.erase(state.nodes.begin() + static_cast<std::ptrdiff_t>(pos));
          ++erased;
        } else {
          const auto pos = static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(state.nodes.size()) - 1));
          Node& n = state.nodes[pos];
          n.state = op == 2 ? NodeState::kReady : NodeState::kDraining;
          n.free_gpus = static_cast<int>(rng.UniformInt(0, n.gpus));
          index.TouchNode(pos);
        }
        // The index may be synced between passes too (the autoscaler's pass
        // syncs it): a node read anew, then one before it erased.
        if (rng.UniformInt(0, 1) == 0) index.Sync(state);
      }
      index.Sync(state);
    }
    EXPECT_EQ(kept.rebuilds(), 1) << "seed " << seed << ": the kept snapshot was read afresh again";
    EXPECT_GE(kept.catch_ups(), 59);  // one Sync a step at least, the first a read afresh
    largest = std::max(largest, state.nodes.size());
  }
  EXPECT_GT(placed, 300);
  EXPECT_GT(erased, 300);
  EXPECT_GT(reserved, 50);
  EXPECT_GT(largest, 100u);
}

// A reader that fell further behind than the events kept reads every node again.
TEST(KeptCapacityTest, ReadsAfreshWhenTheEventsItMissedAreGone) {
  const model::ClusterSpec spec = testing::RandomSpec();
  ClusterState state = testing::RandomState(&spec, 7);
  model::StateIndex index = model::StateIndex::Build(state);
  state.index = &index;
  KeptCapacity kept;
  ASSERT_NE(kept.Sync(spec, index), nullptr);
  ASSERT_FALSE(state.nodes.empty());
  // More changes than the index keeps events of.
  for (int i = 0; i < 70000; ++i) {
    Node& n = state.nodes[static_cast<size_t>(i) % state.nodes.size()];
    n.state = NodeState::kReady;
    n.free_gpus = (n.free_gpus + 1) % (n.gpus + 1);
    index.TouchNode(static_cast<size_t>(i) % state.nodes.size());
    index.Sync(state);
  }
  ExpectKeptMatches(spec, state, kept.Sync(spec, index));
  EXPECT_EQ(kept.rebuilds(), 2);
  // Caught up, it follows from events again.
  state.nodes[0].free_gpus = 0;
  index.TouchNode(0);
  index.Sync(state);
  ExpectKeptMatches(spec, state, kept.Sync(spec, index));
  EXPECT_EQ(kept.rebuilds(), 2);
  EXPECT_EQ(kept.catch_ups(), 1);
}

// The memo of eligible pools is the driver's for as long as it hands in one
// spec, and is made anew for another: masks from one spec never answer for
// a spec whose pools differ.
TEST(KeptCapacityTest, KeepsItsEligibilityMemoForOneSpecOnly) {
  model::ClusterSpec spec = testing::RandomSpec();
  KeptCapacity kept;
  EligibilityMemo* memo = kept.Eligibility(spec);
  EXPECT_EQ(kept.Eligibility(spec), memo);
  model::JobSpec job;
  job.gpus_per_worker = 1;
  job.workers = 1;
  job.priority_class = spec.default_priority_class;
  EXPECT_EQ((*memo)(job), EligiblePools(spec, job));
  // Another spec, with no pool a job may use: the memo must not answer from
  // the first.
  model::ClusterSpec other = spec;
  for (auto& p : other.pools) p.type.gpus = 0;
  EligibilityMemo* again = kept.Eligibility(other);
  EXPECT_EQ((*again)(job), EligiblePools(other, job));
  EXPECT_EQ((*again)(job), PoolMask{0});
  EXPECT_NE(EligiblePools(spec, job), PoolMask{0});
}

}  // namespace
}  // namespace tide::sched
