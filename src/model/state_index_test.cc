#include "model/state_index.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <vector>

#include "core/rng.h"
#include "gtest/gtest.h"

namespace tide::model {
namespace {

TEST(PosSetTest, EraseShiftMovesLaterPositionsDown) {
  Rng rng(3);
  for (int round = 0; round < 200; ++round) {
    PosSet s;
    std::set<size_t> want;
    const int n = 1 + static_cast<int>(rng.UniformInt(0, 300));
    for (int i = 0; i < n; ++i) {
      const auto p = static_cast<size_t>(rng.UniformInt(0, 400));
      s.insert(p);
      want.insert(p);
    }
    const auto at = static_cast<size_t>(rng.UniformInt(0, 410));
    s.EraseShift(at);
    std::set<size_t> shifted;
    for (size_t p : want) {
      if (p < at) shifted.insert(p);
      if (p > at) shifted.insert(p - 1);
    }
    std::vector<size_t> got;
    s.ForEach([&](size_t p) { got.push_back(p); });
    EXPECT_EQ(got, std::vector<size_t>(shifted.begin(), shifted.end())) << "round " << round << ", erased " << at;
    EXPECT_EQ(s.size(), shifted.size());
  }
}

// `nodes`: the first node id of the state (its jobs run on ids from there).
Job RandomJob(Rng& rng, JobId id, NodeId nodes = 1) {
  Job j;
  j.id = id;
  j.priority = static_cast<int>(rng.UniformInt(0, 2)) * 10;
  j.spec.submit = FromUnixSeconds(rng.UniformInt(0, 50));  // ties in submission are common
  const int s = static_cast<int>(rng.UniformInt(0, 3));
  j.state = s == 0 ? JobState::kPending : s == 1 ? JobState::kStarting : s == 2 ? JobState::kRunning : JobState::kStopping;
  j.expected_end = FromUnixSeconds(rng.UniformInt(0, 100));
  if (rng.UniformInt(0, 3) == 0) {
    j.spec.min_workers = 1;
    j.spec.max_workers = 3;
    j.spec.async = rng.Bernoulli(0.5);
    j.workers = static_cast<int>(rng.UniformInt(0, 3));  // 0: as submitted; else resized to this
  }
  // Where it runs, and whether consolidation could move it.
  j.spec.gpus_per_worker = static_cast<int>(rng.UniformInt(1, 4));
  j.spec.workers = static_cast<int>(rng.UniformInt(1, 2));
  j.spec.checkpoint.interval = Seconds(rng.UniformInt(0, 1) * 1800);
  j.spec.is_protected = rng.UniformInt(0, 5) == 0;
  j.started = FromUnixSeconds(rng.UniformInt(0, 40));
  if (j.state != JobState::kPending) {
    for (int64_t k = rng.UniformInt(0, 2); k > 0; --k) j.alloc.push_back({nodes + rng.UniformInt(0, 30), 1});
  }
  return j;
}

Node RandomNode(Rng& rng, NodeId id) {
  Node n;
  n.id = id;
  n.pool = static_cast<int>(rng.UniformInt(0, 2));
  n.gpus = rng.UniformInt(0, 1) == 0 ? 4 : 8;
  n.free_gpus = static_cast<int>(rng.UniformInt(0, n.gpus));
  const int s = static_cast<int>(rng.UniformInt(0, 2));
  n.state = s == 0 ? NodeState::kProvisioning : s == 1 ? NodeState::kReady : NodeState::kDraining;
  if (rng.UniformInt(0, 5) == 0) n.interrupt_at = FromUnixSeconds(1000);
  if (rng.UniformInt(0, 7) == 0) n.slice_free = {7};
  n.created = FromUnixSeconds(rng.UniformInt(0, 3));  // ties too
  return n;
}

// The index's free-GPU answers, against a count of the nodes themselves;
// its sets of elastic jobs, against the jobs.
void ExpectCountsOf(const ClusterState& state, const StateIndex& x) {
  for (size_t i = 0; i < state.jobs.size(); ++i) {
    const Job& j = state.jobs[i];
    const bool elastic = j.state != JobState::kPending && j.state != JobState::kCompleted && j.spec.elastic();
    EXPECT_EQ(x.elastic_async().contains(i), elastic && j.spec.async) << "job " << j.id;
    EXPECT_EQ(x.elastic_below_max().contains(i), elastic && j.Workers() < j.spec.MaxWorkers())
        << "job " << j.id << ": " << j.Workers() << " of " << j.spec.MaxWorkers() << " workers";
  }
  for (uint64_t mask : {0b001u, 0b010u, 0b101u, 0b111u}) {
    for (int g : {1, 2, 3, 4, 8}) {
      for (bool booting : {false, true}) {
        int64_t want = 0;
        for (const Node& n : state.nodes) {
          const bool counts = n.state == NodeState::kReady || (booting && n.state == NodeState::kProvisioning);
          if (counts && (mask >> n.pool & 1)) want += n.free_gpus / g;
        }
        EXPECT_EQ(x.FreeSlots(mask, g, booting), want) << "pools " << mask << ", " << g << " GPUs per worker";
      }
    }
  }
  for (int pool = 0; pool < 3; ++pool) {
    for (bool idle_too : {false, true}) {
      int want = 0;
      for (const Node& n : state.nodes) {
        if (n.pool != pool || n.state != NodeState::kReady || n.interrupt_at != kInfiniteFuture) continue;
        if (n.free_gpus < n.gpus || idle_too) want = std::max(want, n.free_gpus);
      }
      EXPECT_EQ(x.MostFree(pool, idle_too), want) << "pool " << pool << (idle_too ? ", idle too" : "");
    }
    int64_t staying_free = 0;
    for (const Node& n : state.nodes) {
      const bool usable = n.state == NodeState::kReady || n.state == NodeState::kProvisioning;
      if (n.pool == pool && usable && n.interrupt_at == kInfiniteFuture) staying_free += n.free_gpus;
    }
    EXPECT_EQ(x.staying_free(pool), staying_free) << "pool " << pool;
  }
}

// Consolidation's view (placement()), against the jobs and nodes themselves.
void ExpectPlacementOf(const ClusterState& state, const StateIndex& x) {
  std::set<std::tuple<NodeId, Timestamp, int>> want_settled, got_settled;
  for (const Node& n : state.nodes) {
    std::vector<uint32_t> want;
    bool all_could_move = true;
    Timestamp latest = kInfinitePast;
    const Job* lead = nullptr;
    for (size_t i = 0; i < state.jobs.size(); ++i) {
      const Job& j = state.jobs[i];
      if (j.state == JobState::kPending || j.state == JobState::kCompleted) continue;
      if (std::none_of(j.alloc.begin(), j.alloc.end(), [&](const NodeShare& sh) { return sh.node == n.id; })) continue;
      want.push_back(static_cast<uint32_t>(i));
      all_could_move &= j.state == JobState::kRunning && !j.spec.is_protected &&
                        j.spec.checkpoint.interval.count() > 0 && j.alloc.size() == 1;
      latest = std::max(latest, j.started);
      if (lead == nullptr || j.spec.gpus() > lead->spec.gpus() || (j.spec.gpus() == lead->spec.gpus() && j.id < lead->id)) {
        lead = &j;
      }
    }
    std::vector<uint32_t> got;
    if (const auto* on = x.JobsOn(n.id)) got.assign(on->begin(), on->end());
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want) << "jobs on node " << n.id;
    const bool in_use = n.state == NodeState::kReady && n.interrupt_at == kInfiniteFuture && n.slice_free.empty() &&
                        n.free_gpus != n.gpus;
    if (in_use && !want.empty() && all_could_move) want_settled.insert({n.id, latest, lead->spec.gpus_per_worker});
  }
  for (int p = 0; p < 3; ++p) {
    const auto* buckets = x.settled(p);
    if (buckets == nullptr) continue;
    for (size_t b = 0; b < buckets->size(); ++b) {
      for (const auto& s : (*buckets)[b]) {
        EXPECT_EQ(StateIndex::SettledBucket(s), static_cast<int>(b));
        EXPECT_EQ(state.nodes[x.NodePos(s.id)].pool, p);
        got_settled.insert({s.id, s.latest, s.lead_gpus_per_worker});
      }
    }
  }
  EXPECT_EQ(got_settled, want_settled);
  for (int p = 0; p < 3; ++p) {
    int64_t ready_free = 0;
    for (const Node& n : state.nodes) {
      if (n.pool == p && n.state == NodeState::kReady && n.interrupt_at == kInfiniteFuture) ready_free += n.free_gpus;
    }
    EXPECT_EQ(x.ReadyFree(p), ready_free) << "pool " << p;
  }
}

// Random changes, told to the index as the simulator tells it, agree with a
// fresh Build after every Sync.
TEST(StateIndexTest, KeptUpToDateMatchesAFreshBuild) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Rng rng(seed);
    const bool placement = seed > 30;  // the second half keeps consolidation's view too
    ClusterState state;
    JobId next_job = 1;
    // Small node ids (a table finds them) and large ones (a binary search).
    const NodeId first_node = seed % 2 == 0 ? 1 : NodeId{1} << 40;
    NodeId next_node = first_node;
    std::vector<NodeId> gone;  // ids erased or replaced
    for (int i = 0; i < 40; ++i) state.jobs.push_back(RandomJob(rng, next_job++, first_node));
    for (int i = 0; i < 20; ++i) state.nodes.push_back(RandomNode(rng, next_node++));
    StateIndex index = StateIndex::Build(state, placement);
    state.index = &index;
    ASSERT_EQ(IndexFor(state), &index);
    for (int step = 0; step < 600; ++step) {
      // Every step changes something: an empty list grows instead.
      // Some seeds also give a position a node of a new id, which may put
      // the ids out of order until it is erased.
      int op = static_cast<int>(rng.UniformInt(0, seed % 3 == 0 ? 8 : 7));
      if (state.jobs.empty() && op >= 1 && op <= 3) op = 0;
      if (state.nodes.empty() && op >= 5) op = 4;
      switch (op) {
        case 0:
          state.jobs.push_back(RandomJob(rng, next_job++, first_node));
          index.TouchJob(state.jobs.size() - 1);
          break;
        case 1:
          if (!state.jobs.empty()) {
            const auto pos = static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(state.jobs.size()) - 1));
            index.RemoveJob(pos);
            state.jobs[pos] = state.jobs.back();
            state.jobs.pop_back();
          }
          break;
        case 2:
        case 3:
          if (!state.jobs.empty()) {
            const auto pos = static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(state.jobs.size()) - 1));
            const JobId id = state.jobs[pos].id;
            state.jobs[pos] = RandomJob(rng, id, first_node);
            index.TouchJob(pos);
          }
          break;
        case 4:
          state.nodes.push_back(RandomNode(rng, next_node++));
          index.TouchNode(state.nodes.size() - 1);
          break;
        case 5:
          if (!state.nodes.empty()) {
            const auto pos = static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(state.nodes.size()) - 1));
            index.RemoveNode(pos);
            gone.push_back(state.nodes[pos].id);
            state.nodes.erase(state.nodes.begin() + static_cast<std::ptrdiff_t>(pos));
          }
          break;
        case 8:
          if (!state.nodes.empty()) {
            const auto pos = static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(state.nodes.size()) - 1));
            gone.push_back(state.nodes[pos].id);
            state.nodes[pos] = RandomNode(rng, next_node++);
            index.TouchNode(pos);
          }
          break;
        default:
          if (!state.nodes.empty()) {
            const auto pos = static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(state.nodes.size()) - 1));
            const NodeId id = state.nodes[pos].id;
            state.nodes[pos] = RandomNode(rng, id);
            index.TouchNode(pos);
          }
          break;
      }
      EXPECT_EQ(IndexFor(state), nullptr) << "a changed state must not be read through a stale index";
      if (rng.UniformInt(0, 4) == 0) {
        index.Sync(state);
        ASSERT_EQ(IndexFor(state), &index);
        ASSERT_EQ(index.Diff(state), "") << "seed " << seed << ", step " << step;
        ExpectCountsOf(state, index);
        if (placement) ExpectPlacementOf(state, index);
        for (size_t p = 0; p < state.nodes.size(); ++p) ASSERT_EQ(index.NodePos(state.nodes[p].id), static_cast<int>(p));
        ASSERT_EQ(index.NodePos(next_node), -1);
        for (const NodeId id : gone) ASSERT_EQ(index.NodePos(id), -1) << "seed " << seed << ", step " << step;
        EXPECT_EQ(index.nodes_in_id_order(), std::is_sorted(state.nodes.begin(), state.nodes.end(), [](const Node& a, const Node& b) { return a.id < b.id; }));
      }
    }
  }
}

TEST(StateIndexTest, AnswersTheQuestionsOfAPass) {
  ClusterState state;
  auto node = [&](NodeId id, int pool, NodeState s, int free) {
    Node n;
    n.id = id;
    n.pool = pool;
    n.gpus = 8;
    n.free_gpus = free;
    n.state = s;
    state.nodes.push_back(n);
  };
  node(1, 0, NodeState::kReady, 8);
  node(2, 0, NodeState::kReady, 0);
  node(3, 1, NodeState::kProvisioning, 8);
  node(5, 1, NodeState::kDraining, 3);
  auto job = [&](JobId id, int priority, int64_t submit, JobState s, int64_t end) {
    Job j;
    j.id = id;
    j.priority = priority;
    j.spec.submit = FromUnixSeconds(submit);
    j.state = s;
    j.expected_end = FromUnixSeconds(end);
    state.jobs.push_back(j);
  };
  job(7, 0, 10, JobState::kPending, 0);
  job(8, 5, 20, JobState::kPending, 0);
  job(9, 0, 5, JobState::kRunning, 300);
  job(10, 0, 5, JobState::kStopping, 100);
  job(11, 0, 10, JobState::kPending, 0);
  const StateIndex x = StateIndex::Build(state);
  std::vector<JobId> pending;
  for (const auto& q : x.pending()) pending.push_back(q.id);
  EXPECT_EQ(pending, (std::vector<JobId>{8, 7, 11}));
  std::vector<JobId> ends;
  for (const auto& e : x.ends()) ends.push_back(e.id);
  EXPECT_EQ(ends, (std::vector<JobId>{10, 9}));
  EXPECT_TRUE(x.ready_free().contains(0));
  EXPECT_FALSE(x.ready_free().contains(1));
  EXPECT_TRUE(x.idle().contains(0));
  EXPECT_TRUE(x.booting_free().contains(2));
  EXPECT_EQ(x.live(1), 2);
  // Nodes 1, 2 (pool 0) and 3 (pool 1) are ready or booting; the draining one is not.
  EXPECT_EQ(x.EverSlots(0b01, 8), 2);
  EXPECT_EQ(x.EverSlots(0b11, 4), 6);
  // Free now: node 1 (idle); node 3 is booting, node 5 draining.
  EXPECT_EQ(x.FreeSlots(0b01, 8, false), 1);
  EXPECT_EQ(x.FreeSlots(0b11, 4, false), 2);
  EXPECT_EQ(x.FreeSlots(0b11, 4, true), 4);
  EXPECT_EQ(x.MostFree(0, false), 0);  // node 2, the partly used one, is full
  EXPECT_EQ(x.MostFree(0, true), 8);
  EXPECT_TRUE(x.nodes_in_id_order());
  EXPECT_EQ(x.NodePos(5), 3);
  EXPECT_EQ(x.NodePos(4), -1);
}

TEST(StateIndexTest, FindsNodesWhoseIdsAreOutOfOrder) {
  // Small ids are found in a table; large ones by a hash map, or by a binary
  // search once they increase with position.
  for (const NodeId base : {NodeId{0}, NodeId{1} << 40}) {
    ClusterState state;
    for (NodeId id : {5, 3, 9}) {
      Node n;
      n.id = base + id;
      n.gpus = 8;
      n.state = NodeState::kReady;
      state.nodes.push_back(n);
    }
    StateIndex x = StateIndex::Build(state);
    EXPECT_FALSE(x.nodes_in_id_order());
    EXPECT_EQ(x.NodePos(base + 5), 0);
    EXPECT_EQ(x.NodePos(base + 3), 1);
    EXPECT_EQ(x.NodePos(base + 9), 2);
    EXPECT_EQ(x.NodePos(base + 4), -1);
    // Without node 3 the ids increase again.
    x.RemoveNode(1);
    state.nodes.erase(state.nodes.begin() + 1);
    x.Sync(state);
    EXPECT_TRUE(x.nodes_in_id_order());
    EXPECT_EQ(x.NodePos(base + 5), 0);
    EXPECT_EQ(x.NodePos(base + 9), 1);
    EXPECT_EQ(x.NodePos(base + 3), -1);
    EXPECT_EQ(x.NodePos(base + 10), -1);
    EXPECT_EQ(x.Diff(state), "");
  }
}

TEST(StateIndexTest, SaysWhetherEveryNodeItReadHadAKnownPool) {
  ClusterState state;
  for (int pool : {0, 1}) {
    Node n;
    n.id = pool + 1;
    n.pool = pool;
    n.gpus = 8;
    n.state = NodeState::kReady;
    state.nodes.push_back(n);
  }
  StateIndex x = StateIndex::Build(state);
  EXPECT_TRUE(x.pools_within(2));
  EXPECT_FALSE(x.pools_within(1));
  // A node changed to a pool past the spec's, then a terminated one with a
  // negative pool: each is remembered, also after it is gone.
  state.nodes[1].pool = 2;
  x.TouchNode(1);
  x.Sync(state);
  EXPECT_FALSE(x.pools_within(2));
  EXPECT_TRUE(x.pools_within(3));
  Node bad;
  bad.id = 9;
  bad.pool = -1;
  bad.state = NodeState::kTerminated;
  state.nodes.push_back(bad);
  x.TouchNode(2);
  x.Sync(state);
  EXPECT_FALSE(x.pools_within(3));
  x.RemoveNode(2);
  state.nodes.pop_back();
  x.Sync(state);
  EXPECT_FALSE(x.pools_within(3));
}

}  // namespace
}  // namespace tide::model
