#include "sched/scheduler.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "sched/eligibility.h"
#include "sched/kept_capacity.h"
#include "sched/queue.h"
#include "sched/slices.h"
#include "sched/snapshot.h"
#include "model/state_index.h"

namespace tide::sched {
namespace {

using model::ClusterState;
using model::Job;
using model::JobState;
using model::Node;
using model::NodeState;

using Release = ScheduleScratch::Release;

// GPUs per slot, with the slots written listed: every other entry is 0, and
// Clear makes all of them 0 again without a pass over the array.
class SlotGpus {
 public:
  // An array of at least `size` zeros, in `kept`'s memory if it has some.
  SlotGpus(std::unique_ptr<SlotGpusMemory> kept, size_t size)
      : m_(kept != nullptr ? std::move(kept) : std::make_unique<SlotGpusMemory>()) {
    resize(size);
  }
  size_t size() const { return m_->gpus.size(); }
  void resize(size_t size) {
    if (m_->gpus.size() < size) m_->gpus.resize(size, 0);
  }
  int operator[](size_t slot) const { return m_->gpus[slot]; }
  int& at(size_t slot) {
    m_->written.push_back(static_cast<uint32_t>(slot));
    return m_->gpus[slot];
  }
  // Every entry back to 0; the memory, for the next.
  std::unique_ptr<SlotGpusMemory> Clear() && {
    for (const uint32_t s : m_->written) m_->gpus[s] = 0;
    m_->written.clear();
    return std::move(m_);
  }

 private:
  std::unique_ptr<SlotGpusMemory> m_;
};

// The pool of each slot: the snapshot's, and after its slots those of
// `extra` (nodes a reservation reads that the snapshot does not hold).
class SlotPools {
 public:
  SlotPools(const CapacitySnapshot* snap, const std::vector<int>* extra) : snap_(snap), extra_(extra) {}
  int operator()(int slot) const {
    return slot < snap_->size() ? snap_->pool(slot) : (*extra_)[static_cast<size_t>(slot - snap_->size())];
  }

 private:
  const CapacitySnapshot* snap_;
  const std::vector<int>* extra_;
};

// What the cluster will look like for the head job at its shadow time.
class Reservation {
 public:
  // `free_at`: each slot's free GPUs at the shadow time; `cap`: how many
  // workers of the head's shape they hold on its pools.
  Reservation(PoolMask mask, int g, int w, Timestamp shadow, SlotGpus free_at, int64_t cap, SlotPools pool_of)
      : mask_(mask), g_(g), w_(w), shadow_(shadow), free_at_(std::move(free_at)), pool_of_(pool_of), cap_(cap) {}

  Timestamp shadow() const { return shadow_; }

  // True when starting `job` now on `shares` leaves the head able to start at
  // the shadow time. If so, records the job's use of the shadow-time capacity.
  bool Admit(const Job& job, const std::vector<SlotShare>& shares, Timestamp now) {
    if (now + job.spec.runtime <= shadow_) return true;  // gone before the head starts
    int64_t lost = 0;
    for (const auto& sh : shares) {
      if (!(mask_ & PoolBit(pool_of_(sh.slot)))) continue;
      const int before = free_at_[sh.slot];
      const int after = before - sh.workers * job.spec.gpus_per_worker;
      lost += before / g_ - after / g_;
    }
    if (cap_ - lost < w_) return false;
    for (const auto& sh : shares) free_at_.at(sh.slot) -= sh.workers * job.spec.gpus_per_worker;
    cap_ -= lost;
    return true;
  }
  // The per-slot array's memory, all 0 again.
  std::unique_ptr<SlotGpusMemory> Clear() && { return std::move(free_at_).Clear(); }

 private:
  PoolMask mask_;
  int g_, w_;
  Timestamp shadow_;
  SlotGpus free_at_;
  SlotPools pool_of_;  // of snapshot and vector owned by Schedule()
  int64_t cap_ = 0;
};

// Shapes (pools, GPUs per worker) that did not fit in a pass, with the fewest
// workers that did not. Placements only take capacity during a pass, so a
// later job of a shape needing at least as many does not fit either: it is
// skipped without a look, which keeps a pass over a long queue cheap.
class NoFit {
 public:
  bool Covers(PoolMask pools, int g, int workers) const {
    for (const Shape& s : few_) {
      if (s.pools == pools && s.g == g) return workers >= s.fewest;
    }
    if (many_.empty()) return false;
    const auto it = many_.find({pools, g});
    return it != many_.end() && workers >= it->second;
  }
  void Add(PoolMask pools, int g, int workers) {
    // A queue has a few shapes: they are looked through in a list, and put
    // in a hash map only once there are many (no allocation in most passes).
    for (Shape& s : few_) {
      if (s.pools == pools && s.g == g) {
        s.fewest = std::min(s.fewest, workers);
        return;
      }
    }
    if (few_.size() < kFew) {
      few_.push_back({pools, g, workers});
      return;
    }
    auto [it, fresh] = many_.try_emplace({pools, g}, workers);
    if (!fresh) it->second = std::min(it->second, workers);
  }

 private:
  static constexpr size_t kFew = 16;
  struct Shape {
    PoolMask pools;
    int g;
    int fewest;
  };
  absl::InlinedVector<Shape, kFew> few_;
  absl::flat_hash_map<std::pair<PoolMask, int>, int> many_;
};

}  // namespace

SchedulerOutput Scheduler::Schedule(const ClusterState& state, Timestamp now, KeptCapacity* kept) const {
  SchedulerOutput out;
  const model::ClusterSpec& spec = *state.spec;
  const int num_pools = static_cast<int>(spec.pools.size());
  const int max_gpus = std::max(1, spec.MaxGpusPerNode());

  bool any_mig = false;
  for (const auto& p : spec.pools) any_mig |= p.mig.enabled();
  auto placeable_state = [&](NodeState st) {
    return st == NodeState::kReady || (st == NodeState::kProvisioning && options_.place_on_provisioning);
  };
  auto placeable = [&](const Node& n) { return placeable_state(n.state); };
  // A driver's index answers what this pass would otherwise scan every node
  // and job for (model/state_index.h); the decisions are the same. Slices
  // read every node's GPUs, so a cluster with MIG pools scans.
  const model::StateIndex* idx = any_mig ? nullptr : model::IndexFor(state);
  if (idx != nullptr && !idx->nodes_in_id_order()) idx = nullptr;
  if (!any_mig) {
    // Nothing is free: nothing can start, and no snapshot is needed to say so.
    bool any_free = false;
    if (idx != nullptr) {
      any_free = !idx->ready_free().empty() || (options_.place_on_provisioning && !idx->booting_free().empty());
    } else {
      for (const auto& n : state.nodes) any_free |= n.free_gpus > 0 && placeable(n);
    }
    if (!any_free) return out;
  }
  std::vector<const Job*> active;  // scanned only without an index
  // The lists' memory from an earlier pass, given back when this one returns.
  std::unique_ptr<ScheduleScratch> scratch = scratch_.Take();
  if (scratch == nullptr) scratch = std::make_unique<ScheduleScratch>();
  scratch->pending.clear();
  scratch->releases.clear();
  absl::Cleanup give_back = [&] { scratch_.Give(std::move(scratch)); };
  std::vector<const Job*>& pending = scratch->pending;
  if (idx != nullptr) {
    pending.reserve(idx->pending().size());
    for (const auto& q : idx->pending()) pending.push_back(&state.jobs[q.pos]);
  } else {
    pending = PendingInQueueOrder(state, &active);
  }
  if (pending.empty()) return out;
  std::optional<EligibilityMemo> own_memo;
  EligibilityMemo& eligible = kept != nullptr ? *kept->Eligibility(spec) : own_memo.emplace(spec);
  // With backfill, a pass in which no waiting job fits now places nothing and
  // reserves nothing (a reservation is worked out only once a later job
  // fits). The index's counts of free GPUs say whether any fits, without a
  // snapshot: most passes that find nothing to start end here.
  if (idx != nullptr && options_.backfill) {
    bool any_fits = false;
    NoFit failed;
    for (const Job* job : pending) {
      if (job->spec.slice_units > 0) {
        any_fits = true;  // slices are placed GPU by GPU: the counts do not tell
        break;
      }
      const PoolMask mask = eligible(job->spec);
      const int g = job->spec.gpus_per_worker, need = job->spec.MinWorkers();
      if (failed.Covers(mask, g, need)) continue;
      if (idx->FreeSlots(mask, g, options_.place_on_provisioning) >= need) {
        any_fits = true;
        break;
      }
      failed.Add(mask, g, need);
    }
    if (!any_fits) return out;
  }

  // A driver's kept snapshot has a slot for every node, at its position, with
  // the free GPUs of the ready ones: what this pass would make, and more.
  // The pass places inside a fork, undone when it returns.
  CapacitySnapshot* kept_snap =
      idx != nullptr && kept != nullptr && !options_.place_on_provisioning ? kept->Sync(spec, *idx) : nullptr;
  std::optional<CapacitySnapshot> own_snap;
  if (kept_snap == nullptr) own_snap.emplace(num_pools, max_gpus);
  CapacitySnapshot& snap = kept_snap != nullptr ? *kept_snap : *own_snap;
  std::optional<CapacitySnapshot::Fork> pass_fork;
  if (kept_snap != nullptr) pass_fork.emplace(kept_snap);
  std::vector<int> extra_pools;  // of the slots after the snapshot's (SlotPools)
  std::vector<const Node*> nodes, joining;
  // With an index: the placeable nodes with a GPU free get snapshot slots, in
  // id order; a pass only takes GPUs, so no other node could hold a worker.
  // Nodes that only a reservation reads (busy now, or joining later) get
  // slots after them when it first asks (`extra_slot`). In a kept snapshot
  // every node already has its slot, at its position.
  std::vector<size_t> snap_pos;  // the node position of each snapshot slot
  if (kept_snap == nullptr && idx != nullptr) {
    const size_t count =
        idx->ready_free().size() + (options_.place_on_provisioning ? idx->booting_free().size() : 0);
    snap_pos.reserve(count);
    snap.reserve(count);
    auto add = [&](size_t p) {
      const auto& n = idx->node(p);  // the index's compact record of it
      snap.AddNode(n.id, n.pool, n.gpus, n.free);
      snap_pos.push_back(p);
    };
    if (options_.place_on_provisioning) {
      std::vector<size_t> ready, booting;
      idx->ready_free().ForEach([&](size_t p) { ready.push_back(p); });
      idx->booting_free().ForEach([&](size_t p) { booting.push_back(p); });
      std::vector<size_t> both(ready.size() + booting.size());
      std::merge(ready.begin(), ready.end(), booting.begin(), booting.end(), both.begin());
      for (size_t p : both) add(p);
    } else {
      idx->ready_free().ForEach(add);
    }
  } else if (kept_snap == nullptr) {
    // Placeable nodes get snapshot slots in id order; nodes that will join
    // later (booting, when we may not place on them) get slots after them.
    nodes.reserve(state.nodes.size());
    for (const auto& n : state.nodes) nodes.push_back(&n);
    auto by_id = [](const Node* a, const Node* b) { return a->id < b->id; };
    if (!std::is_sorted(nodes.begin(), nodes.end(), by_id)) std::sort(nodes.begin(), nodes.end(), by_id);
    snap.reserve(nodes.size());
    for (const Node* n : nodes) {
      if (placeable(*n)) {
        snap.AddNode(n->id, n->pool, n->gpus, n->free_gpus);
      } else if (n->state == NodeState::kProvisioning) {
        joining.push_back(n);
      }
    }
  }
  const int placeable_slots = snap.size();
  for (const Node* n : joining) extra_pools.push_back(n->pool);
  const SlotPools pool_at(&snap, &extra_pools);
  // With an index, the slot of the node at a position, made on first use for
  // a node outside the snapshot.
  std::vector<int> slot_at;
  auto extra_slot = [&](size_t pos) {
    if (kept_snap != nullptr) return static_cast<int>(pos);
    if (slot_at.empty()) {
      slot_at.assign(state.nodes.size(), -1);
      for (size_t s = 0; s < snap_pos.size(); ++s) slot_at[snap_pos[s]] = static_cast<int>(s);
    }
    if (slot_at[pos] < 0) {
      slot_at[pos] = snap.size() + static_cast<int>(extra_pools.size());
      extra_pools.push_back(idx->node(pos).pool);
    }
    return slot_at[pos];
  };
  // Node id -> slot, of placeable and joining nodes: only blocked jobs and
  // slices read it, so it is built on first use.
  std::optional<SlotIndex> slot_index;
  auto node_slots = [&]() -> const SlotIndex& {
    if (!slot_index) {
      slot_index.emplace();
      slot_index->reserve(static_cast<size_t>(snap.size()) + extra_pools.size());
      for (int s = 0; s < placeable_slots; ++s) slot_index->Add(snap.id(s), s);
      for (size_t i = 0; i < joining.size(); ++i) slot_index->Add(joining[i]->id, placeable_slots + static_cast<int>(i));
    }
    return *slot_index;
  };
  // Every node that is or will be usable, with all its GPUs free: whether a
  // blocked job could ever fit. Built only when a reservation is worked out.
  std::optional<CapacitySnapshot> full_snap;
  auto ever_slots = [&](PoolMask mask, int g) -> int64_t {
    if (idx != nullptr) return idx->EverSlots(mask, g);
    if (!full_snap) {
      full_snap.emplace(num_pools, max_gpus);
      for (const Node* n : nodes) {
        if (placeable(*n) || n->state == NodeState::kProvisioning) full_snap->AddNode(n->id, n->pool, n->gpus, n->gpus);
      }
    }
    return full_snap->Slots(mask, g);
  };
  SliceSnapshot slices;
  if (any_mig) slices.AddFrom(state, node_slots(), placeable_slots);
  if (snap.total_free() == 0 && !any_mig) return out;

  // Releases in time order, gathered only if some job is blocked, and put in
  // order only as far as a reservation reads them: the head usually fits
  // after a few, and a full sort of every running job would cost more than
  // the rest of the pass. `heap` holds what is not yet in `sorted`. A job's
  // release names its node, which is looked up only when it comes out of the
  // heap; releases on nodes that are not placeable are dropped then. The
  // order among releases at one instant does not matter: a reservation takes
  // them all before it looks.
  struct Due {
    Timestamp time;
    model::NodeId node;  // -1: `slot` is set (a joining node)
    int slot;
    int gpus;
  };
  auto later = [](const Due& a, const Due& b) {
    return a.time != b.time ? a.time > b.time : a.node != b.node ? a.node > b.node : a.slot > b.slot;
  };
  std::optional<std::vector<Due>> heap;
  std::vector<Release>& sorted = scratch->releases;
  // With an index, releases come in time order without a heap: the jobs by
  // expected end, merged with the joining nodes by the time they join.
  // A job's record and its shares lie apart, in no order: the job kAhead
  // ends ahead is asked for memory as each end is read.
  constexpr int kAhead = 4;
  std::optional<absl::btree_set<model::StateIndex::End>::const_iterator> next_end, ahead_end;
  std::optional<std::vector<std::pair<Timestamp, size_t>>> joins;  // (time, node position), sorted
  size_t next_join = 0;
  auto indexed_release_at = [&](size_t i) -> const Release* {
    const auto& ends = idx->ends();
    if (!joins) {
      joins.emplace();
      if (!options_.place_on_provisioning) {
        idx->booting().ForEach([&](size_t p) { joins->emplace_back(std::max(state.nodes[p].ready_at, now), p); });
        std::sort(joins->begin(), joins->end());
      }
      next_end = ends.begin();
      ahead_end = ends.begin();
      for (int k = 0; k < kAhead && *ahead_end != ends.end(); ++k) ++*ahead_end;
    }
    auto& e = *next_end;
    auto& ahead = *ahead_end;
    while (sorted.size() <= i && (e != ends.end() || next_join < joins->size())) {
      const Timestamp end_at = e != ends.end() ? std::max(e->at, now) : kInfiniteFuture;
      if (next_join < joins->size() && (*joins)[next_join].first <= end_at) {
        const auto [at, p] = (*joins)[next_join++];
        sorted.push_back({at, extra_slot(p), idx->node(p).gpus});
        continue;
      }
      if (ahead != ends.end()) {
        const Job& later = state.jobs[(ahead++)->pos];
        __builtin_prefetch(&later.alloc);
        __builtin_prefetch(&later.spec.gpus_per_worker);  // another line of the record
      }
      const Job& j = state.jobs[(e++)->pos];
      for (const auto& sh : j.alloc) {
        if (sh.units > 0) continue;  // a slice frees a whole GPU only sometimes; not counted
        const int p = idx->NodePos(sh.node);  // reads the index's record of the node: not the node's
        if (p < 0 || !placeable_state(idx->node(p).state)) continue;
        sorted.push_back({end_at, extra_slot(static_cast<size_t>(p)), sh.workers * j.spec.gpus_per_worker});
      }
    }
    return i < sorted.size() ? &sorted[i] : nullptr;
  };
  auto release_at = [&](size_t i) -> const Release* {
    if (idx != nullptr) return indexed_release_at(i);
    if (!heap) {
      heap.emplace();
      for (const Job* jp : active) {
        const Job& j = *jp;
        const Timestamp at = std::max(j.expected_end, now);
        for (const auto& sh : j.alloc) {
          if (sh.units > 0) continue;  // a slice frees a whole GPU only sometimes; not counted
          heap->push_back({at, sh.node, -1, sh.workers * j.spec.gpus_per_worker});
        }
      }
      for (size_t i = 0; i < joining.size(); ++i) {
        heap->push_back(
            {std::max(joining[i]->ready_at, now), -1, placeable_slots + static_cast<int>(i), joining[i]->gpus});
      }
      std::make_heap(heap->begin(), heap->end(), later);
    }
    while (sorted.size() <= i && !heap->empty()) {
      std::pop_heap(heap->begin(), heap->end(), later);
      const Due r = heap->back();
      heap->pop_back();
      const int slot = r.node < 0 ? r.slot : node_slots().Find(r.node);
      if (slot < 0 || (r.node >= 0 && slot >= placeable_slots)) continue;
      sorted.push_back({r.time, slot, r.gpus});
    }
    return i < sorted.size() ? &sorted[i] : nullptr;
  };

  // The reservation for a blocked job, or nullopt if it cannot fit even once
  // everything running has ended and everything booting has joined.
  auto reserve = [&](const Job& job, PoolMask mask) -> std::optional<Reservation> {
    const int g = job.spec.gpus_per_worker, w = job.spec.MinWorkers();
    if (ever_slots(mask, g) < w) return std::nullopt;
    // Free GPUs per slot, read from the slots with some: in a kept snapshot,
    // only a node with a GPU free when the pass began can have one now (a
    // pass only takes GPUs), and most nodes have none.
    auto slots = [&]() { return static_cast<size_t>(snap.size()) + extra_pools.size(); };
    SlotGpus free_at(free_at_.Take(), slots());
    int64_t cap = 0;
    auto read_free = [&](int s) {
      if (const int f = snap.free(s); f > 0) {
        free_at.at(static_cast<size_t>(s)) = f;
        if (mask & PoolBit(snap.pool(s))) cap += f / g;
      }
    };
    if (kept_snap != nullptr) {
      idx->ready_free().ForEach([&](size_t p) { read_free(static_cast<int>(p)); });
    } else {
      for (int s = 0; s < placeable_slots; ++s) read_free(s);
    }
    const Release* r = release_at(0);
    for (size_t i = 0; r != nullptr;) {
      const Timestamp t = r->time;
      for (; r != nullptr && r->time == t; r = release_at(++i)) {
        const int s = r->slot;
        if (static_cast<size_t>(s) >= free_at.size()) free_at.resize(slots());  // a slot made since
        const bool counts = mask & PoolBit(pool_at(s));
        int& f = free_at.at(static_cast<size_t>(s));
        if (counts) cap -= f / g;
        f += r->gpus;
        if (counts) cap += f / g;
      }
      if (cap >= w) return Reservation(mask, g, w, t, std::move(free_at), cap, pool_at);
    }
    free_at_.Give(std::move(free_at).Clear());
    return std::nullopt;
  };

  // The head's reservation is worked out only when a later job could start
  // now and must be checked against it: in most passes none can, and the
  // releases need not be gathered. `blocked` holds, in queue order, the
  // blocked jobs seen since: the first whose reservation exists becomes the
  // head, as if each had tried when it was reached (nothing was placed in
  // between, so the snapshot is the same). Without backfill the first
  // reservation ends the pass, so it is worked out at once.
  std::optional<Reservation> head;
  std::vector<std::pair<const Job*, PoolMask>> blocked;
  auto settle_head = [&]() {
    for (size_t i = 0; !head && i < blocked.size(); ++i) {
      head = reserve(*blocked[i].first, blocked[i].second);
      if (head) {
        out.head = blocked[i].first->id;
        out.shadow_time = head->shadow();
      }
    }
    blocked.clear();
  };
  std::vector<SlotShare> shares;
  auto emit = [&](const Job& job, bool backfilled) {
    Placement p;
    p.job = job.id;
    p.backfilled = backfilled;
    for (const auto& sh : shares) p.shares.push_back({snap.id(sh.slot), sh.workers});
    out.placements.push_back(std::move(p));
  };

  // A job of a shape that did not fit could not reserve either: skipped.
  NoFit no_fit;
  for (const Job* job : pending) {
    if (snap.total_free() == 0 && !any_mig) break;
    if (job->spec.slice_units > 0) {
      // Slices never hold a reservation; behind a head they may take only
      // what leaves the head's start alone.
      settle_head();
      std::vector<model::NodeShare> ns;
      CapacitySnapshot::Fork fork(&snap);
      const SliceSnapshot before = slices;
      if (!PlaceSliceJob(spec, job->spec, &slices, &snap, &ns)) continue;
      bool ok = true;
      if (head) {
        std::vector<SlotShare> whole;
        for (const auto& sh : ns) {
          if (sh.gpu < 0) whole.push_back({node_slots().Find(sh.node), 1});
        }
        ok = head->Admit(*job, whole, now);
      }
      if (!ok) {
        slices = before;
        continue;
      }
      fork.Commit();
      Placement p;
      p.job = job->id;
      p.backfilled = head.has_value();
      p.shares = std::move(ns);
      out.placements.push_back(std::move(p));
      continue;
    }
    const PoolMask mask = eligible(job->spec);
    const int g = job->spec.gpus_per_worker;
    if (no_fit.Covers(mask, g, job->spec.MinWorkers())) continue;
    // An elastic job starts with as many workers as fit, up to its requested
    // size and at least its minimum; any other job needs its whole gang.
    const int64_t slots = snap.Slots(mask, g);
    const int w = static_cast<int>(std::min<int64_t>(job->spec.workers, slots));
    if (w >= job->spec.MinWorkers()) {
      settle_head();
      shares.clear();
      const PoolPreference preference = PlacementPreference(spec, job->spec, mask, options_.egress_aware);
      if (!head) {
        snap.PlacePreferring(preference, g, w, &shares);
        emit(*job, false);
        continue;
      }
      CapacitySnapshot::Fork fork(&snap);
      snap.PlacePreferring(preference, g, w, &shares);
      if (head->Admit(*job, shares, now)) {
        fork.Commit();
        emit(*job, true);
      }
      continue;
    }
    no_fit.Add(mask, g, job->spec.MinWorkers());
    if (!head) {
      blocked.emplace_back(job, mask);
      if (!options_.backfill) {
        settle_head();
        if (head) break;
      }
    }
  }
  if (head) free_at_.Give(std::move(*head).Clear());
  return out;
}

}  // namespace tide::sched
