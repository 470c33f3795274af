#include "sched/snapshot.h"

#include <algorithm>
#include <cassert>

#include "absl/container/flat_hash_map.h"

namespace tide::sched {

namespace {

constexpr int kSharedQuotients = 64;  // nodes of up to this many GPUs use the shared table

const int* SharedQuotients() {
  static const std::vector<int> table = [] {
    std::vector<int> t(static_cast<size_t>(kSharedQuotients + 1) * (kSharedQuotients + 1), 0);
    for (int f = 0; f <= kSharedQuotients; ++f) {
      for (int g = 1; g <= kSharedQuotients; ++g) t[static_cast<size_t>(f) * (kSharedQuotients + 1) + g] = f / g;
    }
    return t;
  }();
  return table.data();
}

}  // namespace

CapacitySnapshot::CapacitySnapshot(int num_pools, int max_gpus_per_node)
    : num_pools_(num_pools),
      max_level_(max_gpus_per_node),
      level_meta_(static_cast<size_t>(num_pools) * (max_gpus_per_node + 1)),
      slots_(static_cast<size_t>(num_pools) * (max_gpus_per_node + 1), 0),
      pool_free_(num_pools, 0) {
  assert(num_pools <= kMaxPools);
  if (max_level_ <= kSharedQuotients) {
    quotient_ = SharedQuotients();
    quotient_stride_ = kSharedQuotients + 1;
  } else {
    own_quotient_.assign(static_cast<size_t>(max_level_ + 1) * (max_level_ + 1), 0);
    for (int f = 0; f <= max_level_; ++f) {
      for (int g = 1; g <= max_level_; ++g) own_quotient_[static_cast<size_t>(f) * (max_level_ + 1) + g] = f / g;
    }
    quotient_ = own_quotient_.data();
    quotient_stride_ = max_level_ + 1;
  }
}

void CapacitySnapshot::Restride(size_t min_words) {
  const size_t stride = std::max(min_words, stride_ * 2);
  std::vector<uint64_t> words(level_meta_.size() * stride, 0);
  for (size_t l = 0; l < level_meta_.size(); ++l) {
    std::copy_n(level_words_.begin() + static_cast<std::ptrdiff_t>(l * stride_), stride_,
                words.begin() + static_cast<std::ptrdiff_t>(l * stride));
  }
  level_words_ = std::move(words);
  stride_ = stride;
}

int CapacitySnapshot::AddNode(model::NodeId id, int pool, int gpus, int free) {
  assert(pool >= 0 && pool < num_pools_);
  assert(gpus <= max_level_ && free >= 0 && free <= gpus);
  const int slot = size();
  nodes_.emplace_back();
  Fill(slot, id, pool, gpus, free);
  return slot;
}

void CapacitySnapshot::Fill(int slot, model::NodeId id, int pool, int gpus, int free) {
  nodes_[slot] = {id, pool, gpus, free};
  if (track_filled_) filled_.push_back(slot);
  // A full node is in no level: best fit never looks for 0 free GPUs, and
  // most nodes of a busy cluster are full.
  if (free > 0) {
    LevelInsert(pool * (max_level_ + 1) + free, slot);
    stale_pools_ |= PoolBit(pool);
  }
  nonempty_pools_ |= PoolBit(pool);
  total_free_ += free;
  pool_free_[pool] += free;
}

void CapacitySnapshot::AddAbsent(int count) {
  nodes_.resize(nodes_.size() + static_cast<size_t>(std::max(0, count)), NodeEntry{kAbsentId, 0, 0, 0});
  // Room in the levels for every slot there is now.
  if (const size_t words = (nodes_.size() + 63) / 64; words > stride_) Restride(words);
}

void CapacitySnapshot::ResetAbsent(int count) {
  assert(open_forks_ == 0);
  // Every slot with a GPU free was filled since the last reset (a fork that
  // dropped a node left its slot past the end, or refilled it).
  for (const int slot : filled_) {
    if (slot >= size() || absent(slot)) continue;
    NodeEntry& n = nodes_[slot];
    if (n.free > 0) LevelErase(n.pool * (max_level_ + 1) + n.free, slot);
    n = NodeEntry{kAbsentId, 0, 0, 0};
  }
  filled_.clear();
  track_filled_ = true;
  // Slots past `count` were filled (templates) and are absent now.
  nodes_.resize(static_cast<size_t>(std::max(0, count)), NodeEntry{kAbsentId, 0, 0, 0});
  if (const size_t words = (nodes_.size() + 63) / 64; words > stride_) Restride(words);
  for (auto& m : level_meta_) m = LevelMeta{};
  std::fill(slots_.begin(), slots_.end(), 0);
  std::fill(pool_free_.begin(), pool_free_.end(), 0);
  stale_pools_ = 0;
  nonempty_pools_ = 0;
  total_free_ = 0;
  journal_.clear();
}

void CapacitySnapshot::Materialize(int slot, model::NodeId id, int pool, int gpus, int free) {
  assert(absent(slot) && pool >= 0 && pool < num_pools_ && gpus <= max_level_ && free >= 0 && free <= gpus);
  Fill(slot, id, pool, gpus, free);
}

void CapacitySnapshot::Replace(int slot, model::NodeId id, int pool, int gpus, int free) {
  assert(open_forks_ == 0 && pool >= 0 && pool < num_pools_ && gpus <= max_level_ && free >= 0 && free <= gpus);
  SetFree(slot, 0);
  NodeEntry& n = nodes_[slot];
  n.id = id;
  n.pool = pool;
  n.gpus = gpus;
  nonempty_pools_ |= PoolBit(pool);
  SetFree(slot, free);
}

void CapacitySnapshot::EraseSlot(int slot) {
  assert(open_forks_ == 0 && slot >= 0 && slot < size());
  if (nodes_[slot].free > 0) SetFree(slot, 0);
  nodes_.erase(nodes_.begin() + slot);
  // Every level's bits above `slot` move down one. A slot past the levels'
  // words (nodes with no GPU free do not widen them) has none above it.
  const size_t w0 = static_cast<size_t>(slot) >> 6;
  if (w0 >= stride_) return;
  const int b = slot & 63;
  const uint64_t below = b == 0 ? 0 : ~uint64_t{0} >> (64 - b);
  for (size_t l = 0; l < level_meta_.size(); ++l) {
    LevelMeta& m = level_meta_[l];
    if (m.size == 0) continue;
    uint64_t* words = &level_words_[l * stride_];
    const uint64_t x = words[w0];
    words[w0] = (x & below) | (b == 63 ? 0 : (x >> (b + 1)) << b);
    for (size_t w = w0 + 1; w < stride_; ++w) {
      words[w - 1] |= (words[w] & 1) << 63;
      words[w] >>= 1;
    }
    if (m.first != SIZE_MAX && m.first > w0) --m.first;  // still no slot before it
  }
}

void CapacitySnapshot::SetFree(int slot, int value) {
  NodeEntry& n = nodes_[slot];
  assert(value >= 0 && value <= n.gpus);
  if (value == n.free) return;
  if (open_forks_ > 0) journal_.push_back({slot, n.free});
  const int base = n.pool * (max_level_ + 1);
  if (n.free > 0) LevelErase(base + n.free, slot);
  if (value > 0) LevelInsert(base + value, slot);
  MoveSlots(n.pool, n.free, value);
  total_free_ += value - n.free;
  pool_free_[n.pool] += value - n.free;
  n.free = value;
}

void CapacitySnapshot::CountSlots(int pool, int free, int sign) {
  if (stale_pools_ & PoolBit(pool)) return;  // counted again when read
  int64_t* row = &slots_[static_cast<size_t>(pool) * (max_level_ + 1)];
  const int* q = &quotient_[static_cast<size_t>(free) * quotient_stride_];
  for (int g = 1; g <= free; ++g) row[g] += sign * q[g];
}

void CapacitySnapshot::MoveSlots(int pool, int from, int to) {
  if (stale_pools_ & PoolBit(pool)) return;  // counted again when read
  int64_t* row = &slots_[static_cast<size_t>(pool) * (max_level_ + 1)];
  // quotient_ holds f / g = 0 for g > f, so one walk to the larger does both.
  const int* was = &quotient_[static_cast<size_t>(from) * quotient_stride_];
  const int* now = &quotient_[static_cast<size_t>(to) * quotient_stride_];
  const int top = std::max(from, to);
  for (int g = 1; g <= top; ++g) row[g] += now[g] - was[g];
}

void CapacitySnapshot::RecountSlots(int pool) const {
  const size_t base = static_cast<size_t>(pool) * (max_level_ + 1);
  int64_t* row = &slots_[base];
  std::fill_n(row, max_level_ + 1, 0);
  for (int f = 1; f <= max_level_; ++f) {
    const int64_t count = level_meta_[base + f].size;
    if (count == 0) continue;
    const int* q = &quotient_[static_cast<size_t>(f) * quotient_stride_];
    for (int g = 1; g <= f; ++g) row[g] += count * q[g];
  }
  stale_pools_ &= ~PoolBit(pool);
}

int64_t CapacitySnapshot::Slots(PoolMask pools, int gpus_per_worker) const {
  if (gpus_per_worker <= 0 || gpus_per_worker > max_level_) return 0;
  int64_t slots = 0;
  PoolMask m = pools & nonempty_pools_;
  for (PoolMask stale = m & stale_pools_; stale != 0; stale &= stale - 1) RecountSlots(__builtin_ctzll(stale));
  while (m) {
    const int p = __builtin_ctzll(m);
    m &= m - 1;
    slots += slots_[static_cast<size_t>(p) * (max_level_ + 1) + gpus_per_worker];
  }
  return slots;
}

int CapacitySnapshot::BestFit(PoolMask pools, int gpus_per_worker) const {
  PoolMask live = pools & nonempty_pools_;
  for (int f = gpus_per_worker; f <= max_level_; ++f) {
    int best = -1;
    PoolMask m = live;
    while (m) {
      const int p = __builtin_ctzll(m);
      m &= m - 1;
      const int level = p * (max_level_ + 1) + f;
      if (!LevelEmpty(level)) {
        const int m = LevelMin(level);
        if (best < 0 || m < best) best = m;
      }
    }
    if (best >= 0) return best;
  }
  return -1;
}

void CapacitySnapshot::Place(PoolMask pools, int gpus_per_worker, int workers, std::vector<SlotShare>* out) {
  PlacePreferring(std::span<const PoolMask>(&pools, 1), gpus_per_worker, workers, out);
}

void CapacitySnapshot::PlacePreferring(std::span<const PoolMask> preference, int gpus_per_worker, int workers,
                                       std::vector<SlotShare>* out) {
  constexpr size_t kScanShares = 16;
  const size_t first = out->size();
  absl::flat_hash_map<int, size_t> index;  // slot -> share, once there are many
  for (int w = 0; w < workers; ++w) {
    int slot = -1;
    for (PoolMask group : preference) {
      slot = BestFit(group, gpus_per_worker);
      if (slot >= 0) break;
    }
    assert(slot >= 0 && "Place() called without enough Slots()");
    if (slot < 0) return;
    Take(slot, gpus_per_worker);
    // Best fit fills a node before it moves on, so the share to extend is
    // nearly always the last; a large gang spread over many nodes looks the
    // others up by slot instead of scanning them.
    if (out->size() > first && out->back().slot == slot) {
      ++out->back().workers;
      continue;
    }
    if (out->size() - first < kScanShares) {
      auto it = std::find_if(out->begin() + static_cast<long>(first), out->end(),
                             [&](const SlotShare& x) { return x.slot == slot; });
      if (it != out->end()) {
        ++it->workers;
        continue;
      }
    } else {
      if (index.empty()) {
        for (size_t i = first; i < out->size(); ++i) index.emplace((*out)[i].slot, i);
      }
      if (auto it = index.find(slot); it != index.end()) {
        ++(*out)[it->second].workers;
        continue;
      }
      index.emplace(slot, out->size());
    }
    out->push_back({slot, 1});
  }
}

int CapacitySnapshot::PlaceOnSlots(std::span<const int> slots, std::span<const int> limit, int gpus_per_worker,
                                   int workers, std::vector<SlotShare>* out) {
  assert(limit.size() == slots.size());
  // What each slot may give, worked out once: a list of its own, not the
  // snapshot's levels, since the limits are not free counts.
  struct Usable {
    int slot;
    int gpus;
  };
  std::vector<Usable> usable;
  usable.reserve(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    const int g = std::min(nodes_[slots[i]].free, std::max(0, limit[i]));
    if (g >= gpus_per_worker) usable.push_back({slots[i], g});
  }
  const size_t first = out->size();
  int placed = 0;
  for (; placed < workers; ++placed) {
    Usable* best = nullptr;
    for (Usable& u : usable) {
      if (u.gpus >= gpus_per_worker &&
          (best == nullptr || u.gpus < best->gpus || (u.gpus == best->gpus && u.slot < best->slot))) {
        best = &u;
      }
    }
    if (best == nullptr) break;
    best->gpus -= gpus_per_worker;
    auto it = std::find_if(out->begin() + static_cast<std::ptrdiff_t>(first), out->end(),
                           [&](const SlotShare& x) { return x.slot == best->slot; });
    if (it == out->end()) {
      out->push_back({best->slot, 1});
    } else {
      ++it->workers;
    }
  }
  for (size_t i = first; i < out->size(); ++i) Take((*out)[i].slot, (*out)[i].workers * gpus_per_worker);
  return placed;
}

CapacitySnapshot::Fork::Fork(CapacitySnapshot* snap)
    : snap_(snap), journal_mark_(snap->journal_.size()), node_mark_(snap->nodes_.size()) {
  ++snap_->open_forks_;
}

CapacitySnapshot::Fork::~Fork() {
  CapacitySnapshot& s = *snap_;
  --s.open_forks_;
  if (committed_) {
    if (s.open_forks_ == 0) s.journal_.clear();
    return;
  }
  // Undo free-count changes newest first, without journaling the undo.
  const int saved = s.open_forks_;
  s.open_forks_ = 0;
  while (s.journal_.size() > journal_mark_) {
    const Change c = s.journal_.back();
    s.journal_.pop_back();
    s.SetFree(c.slot, c.old_free);
  }
  // Then drop the nodes added inside the fork.
  while (s.nodes_.size() > node_mark_) {
    const int slot = static_cast<int>(s.nodes_.size()) - 1;
    const NodeEntry& n = s.nodes_.back();
    if (n.free > 0) s.LevelErase(n.pool * (s.max_level_ + 1) + n.free, slot);
    s.CountSlots(n.pool, n.free, -1);
    s.total_free_ -= n.free;
    s.pool_free_[n.pool] -= n.free;
    s.nodes_.pop_back();
  }
  s.open_forks_ = saved;
}

}  // namespace tide::sched
