#include "sched/slices.h"

#include <algorithm>

namespace tide::sched {

void SliceSnapshot::AddNode(int slot, int pool, int units_per_gpu, std::vector<std::pair<int, int>> partial,
                            int free_sliced) {
  Entry e{slot, pool, units_per_gpu, {}, free_sliced, 1000};
  for (auto [gpu, free] : partial) e.partial.push_back({gpu, free});
  nodes_.push_back(std::move(e));
}

void SliceSnapshot::AddFrom(const model::ClusterState& state, const SlotIndex& slot_of, int slots) {
  if (std::none_of(state.spec->pools.begin(), state.spec->pools.end(), [](const auto& p) { return p.mig.enabled(); })) {
    return;  // no pool slices: nothing to read
  }
  std::vector<std::pair<int, const model::Node*>> nodes;  // (slot, node)
  for (const auto& n : state.nodes) {
    if (!state.spec->pools[n.pool].mig.enabled()) continue;
    const int slot = slot_of.Find(n.id);
    if (slot < 0 || slot >= slots) continue;
    nodes.emplace_back(slot, &n);
  }
  std::sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [slot, n] : nodes) {
    const int units = state.spec->pools[n->pool].mig.units_per_gpu;
    std::vector<std::pair<int, int>> partial;
    int free_sliced = 0;
    for (size_t g = 0; g < n->slice_free.size(); ++g) {
      const bool is_sliced = g < n->sliced.size() && n->sliced[g];
      if (n->slice_free[g] == units) {
        free_sliced += is_sliced;
      } else if (is_sliced && n->slice_free[g] > 0) {
        partial.emplace_back(static_cast<int>(g), n->slice_free[g]);
      }
    }
    AddNode(slot, n->pool, units, std::move(partial), free_sliced);
  }
}

std::optional<SliceSnapshot::Pick> SliceSnapshot::Find(PoolMask pools, int units,
                                                        const CapacitySnapshot& capacity) const {
  Pick best;
  int best_free = 1 << 30;
  // 1. Sliced GPUs in use, fullest first.
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Entry& e = nodes_[i];
    if (!(pools & PoolBit(e.pool))) continue;
    for (const Gpu& g : e.partial) {
      if (g.free >= units && g.free < best_free) {
        best = {static_cast<int>(i), e.slot, g.gpu, false};
        best_free = g.free;
      }
    }
  }
  if (best.node >= 0) return best;
  // 2. A free GPU already sliced, then 3. one to reconfigure.
  for (bool reconfigure : {false, true}) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      const Entry& e = nodes_[i];
      if (!(pools & PoolBit(e.pool)) || units > e.units) continue;
      const int free = capacity.free(e.slot);
      const int sliced_free = std::min(e.free_sliced, free);
      if ((!reconfigure && sliced_free > 0) || (reconfigure && free > sliced_free)) {
        return Pick{static_cast<int>(i), e.slot, -1, reconfigure};
      }
    }
  }
  return std::nullopt;
}

void SliceSnapshot::Take(const Pick& pick, int units, CapacitySnapshot* capacity) {
  Entry& e = nodes_[pick.node];
  if (pick.gpu >= 0) {
    for (Gpu& g : e.partial) {
      if (g.gpu == pick.gpu) g.free -= units;
    }
    std::erase_if(e.partial, [](const Gpu& g) { return g.free == 0; });
    return;
  }
  capacity->Take(pick.slot, 1);
  if (!pick.reconfigure && e.free_sliced > 0) --e.free_sliced;
  if (units < e.units) e.partial.push_back({e.next_gpu++, e.units - units});
}

}  // namespace tide::sched
