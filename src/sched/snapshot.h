// CapacitySnapshot: free GPUs per node, indexed for best-fit gang placement,
// with cheap what-if forks.
//
// Decision code never edits live state. The scheduler and the scale-up
// estimator copy the free capacity of the nodes they may use into a
// CapacitySnapshot, place jobs on it, and (for what-if questions) open a Fork:
// every change made while a Fork is alive is undone when it goes out of scope,
// unless it is committed. Template nodes added inside a fork disappear with it.
//
// Nodes are addressed by "slot" (0..size()-1, in the order they were added).
// Ties in best fit go to the lowest slot, so placement is deterministic.
#ifndef TIDE_SCHED_SNAPSHOT_H_
#define TIDE_SCHED_SNAPSHOT_H_

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/spare.h"
#include "model/cluster.h"

namespace tide::sched {

// A set of pools as a bit mask (ClusterSpec allows at most 64 pools).
using PoolMask = uint64_t;
inline constexpr int kMaxPools = 64;
inline PoolMask PoolBit(int pool) { return PoolMask{1} << pool; }

// `workers` workers of one job placed on the node in `slot`.
struct SlotShare {
  int slot = 0;
  int workers = 0;
};

// Node id -> slot. Built once per pass from nodes walked in id order (the
// drivers keep them so), which makes building it a push and a lookup a
// binary search; ids that come out of order are sorted once on first use.
class SlotIndex {
 public:
  void clear() {
    pairs_.clear();
    sorted_ = true;
  }
  void reserve(size_t n) { pairs_.reserve(n); }
  void Add(model::NodeId id, int slot) {
    sorted_ = sorted_ && (pairs_.empty() || pairs_.back().first < id);
    pairs_.emplace_back(id, slot);
  }
  // The node's slot, or -1.
  int Find(model::NodeId id) const {
    if (!sorted_) {
      std::sort(pairs_.begin(), pairs_.end());
      sorted_ = true;
    }
    auto it = std::lower_bound(pairs_.begin(), pairs_.end(), std::make_pair(id, -1));
    return it != pairs_.end() && it->first == id ? it->second : -1;
  }
  bool contains(model::NodeId id) const { return Find(id) >= 0; }
  size_t size() const { return pairs_.size(); }

 private:
  mutable std::vector<std::pair<model::NodeId, int>> pairs_;
  mutable bool sorted_ = true;
};

class CapacitySnapshot {
 public:
  // `max_gpus_per_node` bounds the free count of any node added later.
  CapacitySnapshot(int num_pools, int max_gpus_per_node);

  // Adds a node with `gpus` in total, `free` of them unallocated. Returns its
  // slot. Inside a Fork the node is removed again when the fork is reverted.
  int AddNode(model::NodeId id, int pool, int gpus, int free);

  // Appends `count` absent slots: places for nodes that a caller fills in
  // only if it needs them (Materialize). An absent slot holds nothing and is
  // never chosen. A pass over a large cluster gives its nodes slots in id
  // order this way without reading the many it never touches.
  void AddAbsent(int count);
  bool absent(int slot) const { return nodes_[slot].id == kAbsentId; }
  // Makes this snapshot what a new one given AddAbsent(count) would be,
  // keeping its memory: a pass builds its what-if in the last one's. Only
  // the slots filled since the last reset are read. Outside any fork.
  void ResetAbsent(int count);
  int num_pools() const { return num_pools_; }
  int max_gpus_per_node() const { return max_level_; }
  // Fills absent slot `slot` with a node, as AddNode would have. It is not
  // undone by a fork: it only says what is there.
  void Materialize(int slot, model::NodeId id, int pool, int gpus, int free);
  // Whether a fork is open (a Materialize then would outlive its undo).
  bool in_fork() const { return open_forks_ > 0; }

  // For a snapshot kept between passes (sched/kept_capacity.h), outside any
  // fork: the node in `slot` becomes the one given; or it is erased, and
  // every later slot moves down one.
  void Replace(int slot, model::NodeId id, int pool, int gpus, int free);
  void EraseSlot(int slot);

  // Room for `n` nodes, so that adding them does not reallocate.
  void reserve(size_t n) {
    nodes_.reserve(n);
    if ((n + 63) / 64 > stride_) Restride((n + 63) / 64);
  }
  int size() const { return static_cast<int>(nodes_.size()); }
  model::NodeId id(int slot) const { return nodes_[slot].id; }
  int pool(int slot) const { return nodes_[slot].pool; }
  int gpus(int slot) const { return nodes_[slot].gpus; }
  int free(int slot) const { return nodes_[slot].free; }
  int64_t total_free() const { return total_free_; }
  // Free GPUs on the nodes of one pool.
  int64_t pool_free(int pool) const { return pool_free_[pool]; }

  // How many workers of `gpus_per_worker` GPUs fit on the nodes of `pools`:
  // the sum of floor(free / gpus_per_worker). A gang of w workers fits
  // exactly when this is >= w. It may recount a pool's cached counts, so a
  // snapshot is read by one thread at a time (each pass builds its own).
  int64_t Slots(PoolMask pools, int gpus_per_worker) const;

  // Places `workers` workers by best fit (each on the node of `pools` with the
  // fewest free GPUs that still hold it). Requires Slots(...) >= workers.
  // Appends one SlotShare per node used.
  void Place(PoolMask pools, int gpus_per_worker, int workers, std::vector<SlotShare>* out);
  // The same, preferring pools in the order of `preference` (a list of
  // masks, most preferred first): a worker goes to a later group only when
  // no node of an earlier one holds it. Requires Slots(union) >= workers.
  void PlacePreferring(std::span<const PoolMask> preference, int gpus_per_worker, int workers,
                       std::vector<SlotShare>* out);

  // Places up to `workers` workers on the given slots only, by best fit, and
  // returns how many it placed. Slot slots[i] gives at most limit[i] of its
  // free GPUs (fewer if it has fewer): each worker goes to the slot with the
  // fewest GPUs it may give that still hold one, the lowest slot on a tie.
  // Takes what it placed; appends one SlotShare per slot used.
  int PlaceOnSlots(std::span<const int> slots, std::span<const int> limit, int gpus_per_worker, int workers,
                   std::vector<SlotShare>* out);

  // Allocates or frees GPUs on one node. Requires 0 <= free - gpus <= node gpus.
  void Take(int slot, int gpus) { SetFree(slot, nodes_[slot].free - gpus); }
  void Give(int slot, int gpus) { SetFree(slot, nodes_[slot].free + gpus); }

  // An RAII what-if scope. Changes made while it is the innermost live fork are
  // undone on destruction unless Commit() was called. Forks nest.
  class Fork {
   public:
    explicit Fork(CapacitySnapshot* snap);
    ~Fork();
    Fork(const Fork&) = delete;
    Fork& operator=(const Fork&) = delete;
    // Keeps the changes (they become part of the enclosing fork, if any).
    void Commit() { committed_ = true; }

   private:
    CapacitySnapshot* snap_;
    size_t journal_mark_;
    size_t node_mark_;
    bool committed_ = false;
  };

 private:
  struct NodeEntry {
    model::NodeId id;
    int pool;
    int gpus;
    int free;
  };
  static constexpr model::NodeId kAbsentId = INT64_MIN;
  struct Change {
    int slot;
    int old_free;
  };

  void SetFree(int slot, int value);
  // Adds `sign` times the workers of every size that `free` GPUs of `pool`
  // hold; nothing while the pool's counts are stale (they are made again).
  void CountSlots(int pool, int free, int sign);
  // CountSlots(pool, from, -1) then CountSlots(pool, to, +1), in one walk.
  void MoveSlots(int pool, int from, int to);
  // Sets slot `slot` to the node given, enters its free GPUs in the levels and marks its pool's counts stale.
  void Fill(int slot, model::NodeId id, int pool, int gpus, int free);
  // Finds the best-fit slot for one worker, or -1.
  int BestFit(PoolMask pools, int gpus_per_worker) const;

  int num_pools_;
  int max_level_;
  std::vector<NodeEntry> nodes_;
  // Level `l` = pool * (max_level_ + 1) + free: the slots of that pool with
  // that many free GPUs (1 or more: a full node is in none), as a bit set
  // of `stride_` words at level_words_[l * stride_]: insert and erase in
  // constant time, and the lowest slot found from a word that no lower slot
  // can be in. All levels share one array, which grows (re-laid out) when a
  // slot beyond it is inserted: snapshots are built on every decision, and
  // a set per level was an allocation per level.
  void LevelInsert(int level, int slot) {
    const size_t w = static_cast<size_t>(slot) >> 6;
    if (w >= stride_) Restride(w + 1);
    level_words_[static_cast<size_t>(level) * stride_ + w] |= uint64_t{1} << (slot & 63);
    LevelMeta& m = level_meta_[level];
    m.first = std::min(m.first, w);
    ++m.size;
  }
  void LevelErase(int level, int slot) {
    level_words_[static_cast<size_t>(level) * stride_ + (static_cast<size_t>(slot) >> 6)] &=
        ~(uint64_t{1} << (slot & 63));
    --level_meta_[level].size;
  }
  bool LevelEmpty(int level) const { return level_meta_[level].size == 0; }
  // The lowest slot of a level. Requires !LevelEmpty(level).
  int LevelMin(int level) const {
    LevelMeta& m = level_meta_[level];
    const uint64_t* words = &level_words_[static_cast<size_t>(level) * stride_];
    while (words[m.first] == 0) ++m.first;
    return static_cast<int>(m.first * 64 + static_cast<size_t>(__builtin_ctzll(words[m.first])));
  }
  void Restride(size_t min_words);

  struct LevelMeta {
    size_t first = SIZE_MAX;  // no word before this one holds a slot
    int64_t size = 0;
  };
  std::vector<uint64_t> level_words_;
  mutable std::vector<LevelMeta> level_meta_;
  size_t stride_ = 0;
  // slots_[pool * (max_level_ + 1) + g] = Slots(that pool, g), kept as free
  // counts change: a pass asks Slots for each of 100,000 waiting jobs. A
  // node added (AddNode, Materialize) only marks its pool's row stale; the
  // row is counted again from the levels' sizes when Slots next reads it.
  // Building a snapshot of hundreds of nodes thus counts each row once, not
  // once per node.
  mutable std::vector<int64_t> slots_;
  mutable PoolMask stale_pools_ = 0;
  // Counts pool `pool`'s row of slots_ from the sizes of its levels.
  void RecountSlots(int pool) const;
  // quotient_[free * quotient_stride_ + g] = free / g, without dividing: a
  // table shared by every snapshot of nodes of up to 64 GPUs.
  const int* quotient_ = nullptr;
  int quotient_stride_ = 0;
  std::vector<int> own_quotient_;  // for larger nodes
  PoolMask nonempty_pools_ = 0;
  int64_t total_free_ = 0;
  std::vector<int64_t> pool_free_;
  int open_forks_ = 0;
  std::vector<Change> journal_;
  // Once ResetAbsent has been called: the slots filled since, for the next.
  bool track_filled_ = false;
  std::vector<int> filled_;
};

// A what-if's memory, kept from one pass for the next (ResetAbsent).
using SnapshotSpare = Spare<CapacitySnapshot>;

}  // namespace tide::sched

#endif  // TIDE_SCHED_SNAPSHOT_H_
