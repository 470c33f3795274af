#include "sched/kept_capacity.h"

#include <algorithm>
#include <cassert>
#include <span>

#include "core/strings.h"

namespace tide::sched {

void KeptCapacity::Rebuild(const model::ClusterSpec& spec, const model::StateIndex& index) {
  num_pools_ = static_cast<int>(spec.pools.size());
  max_gpus_ = std::max(1, spec.MaxGpusPerNode());
  snap_.emplace(num_pools_, max_gpus_);
  snap_->reserve(index.node_count());
  for (size_t p = 0; p < index.node_count(); ++p) {
    const auto& n = index.node(p);
    snap_->AddNode(n.id, n.pool, n.gpus, FreeOf(n));
  }
  index_ = &index;
  seq_ = index.node_events_end();
  ++rebuilds_;
}

CapacitySnapshot* KeptCapacity::Sync(const model::ClusterSpec& spec, const model::StateIndex& index) {
  std::span<const model::StateIndex::NodeEvent> events;
  if (!snap_ || index_ != &index || num_pools_ != static_cast<int>(spec.pools.size()) ||
      max_gpus_ != std::max(1, spec.MaxGpusPerNode()) || !index.NodeEventsSince(seq_, &events)) {
    Rebuild(spec, index);
    return &*snap_;
  }
  ++catch_ups_;
  // Replay the events in order: an erased node's slot goes at once (later
  // slots move down with the index's positions); a changed one is noted, and
  // read at the end from where it is then. Positions at or past the
  // snapshot's end are nodes appended since, read at the end too.
  changed_slots_.clear();
  for (const auto& e : events) {
    const int pos = static_cast<int>(e.pos);
    if (pos >= snap_->size()) continue;
    if (!e.erased) {
      changed_slots_.push_back(pos);
      continue;
    }
    snap_->EraseSlot(pos);
    size_t kept = 0;
    for (int s : changed_slots_) {
      if (s != pos) changed_slots_[kept++] = s > pos ? s - 1 : s;
    }
    changed_slots_.resize(kept);
  }
  for (int s : changed_slots_) {
    const auto& n = index.node(static_cast<size_t>(s));
    if (n.id != snap_->id(s) || n.pool != snap_->pool(s) || n.gpus != snap_->gpus(s)) {
      snap_->Replace(s, n.id, n.pool, n.gpus, FreeOf(n));
    } else {
      snap_->Take(s, snap_->free(s) - FreeOf(n));
    }
  }
  for (size_t p = static_cast<size_t>(snap_->size()); p < index.node_count(); ++p) {
    const auto& n = index.node(p);
    snap_->AddNode(n.id, n.pool, n.gpus, FreeOf(n));
  }
  seq_ = index.node_events_end();
  assert(snap_->size() == static_cast<int>(index.node_count()));
  return &*snap_;
}

std::string KeptCapacity::Diff(const model::StateIndex& index) {
  if (!snap_) return "";
  CapacitySnapshot& kept = *snap_;
  if (kept.size() != static_cast<int>(index.node_count())) {
    return StrCat("the kept snapshot has ", kept.size(), " slots for ", index.node_count(), " nodes");
  }
  CapacitySnapshot fresh(num_pools_, max_gpus_);
  for (int s = 0; s < kept.size(); ++s) {
    const auto& n = index.node(static_cast<size_t>(s));
    if (kept.id(s) != n.id || kept.pool(s) != n.pool || kept.gpus(s) != n.gpus || kept.free(s) != FreeOf(n)) {
      return StrCat("slot ", s, " holds node ", kept.id(s), " (pool ", kept.pool(s), ", ", kept.free(s), " of ",
                    kept.gpus(s), " GPUs free), not node ", n.id, " (pool ", n.pool, ", ", FreeOf(n), " of ", n.gpus,
                    ")");
    }
    fresh.AddNode(n.id, n.pool, n.gpus, FreeOf(n));
  }
  for (int p = 0; p < num_pools_; ++p) {
    for (int g = 1; g <= max_gpus_; ++g) {
      const int64_t want = fresh.Slots(PoolBit(p), g);
      if (kept.Slots(PoolBit(p), g) != want) {
        return StrCat("pool ", p, " holds ", kept.Slots(PoolBit(p), g), " workers of ", g, " GPUs, not ", want);
      }
      if (want == 0) continue;
      CapacitySnapshot::Fork a(&kept), b(&fresh);
      std::vector<SlotShare> x, y;
      kept.Place(PoolBit(p), g, 1, &x);
      fresh.Place(PoolBit(p), g, 1, &y);
      if (x[0].slot != y[0].slot) {
        return StrCat("best fit for ", g, " GPUs in pool ", p, " picks slot ", x[0].slot, ", not ", y[0].slot);
      }
    }
  }
  return "";
}

}  // namespace tide::sched
