// SliceSnapshot: the partly used GPUs of MIG nodes, for placing GPU slices.
//
// It works beside a CapacitySnapshot, which counts each node's fully free
// GPUs: a slice that takes a fully free GPU takes one GPU there too.
// Where a slice of `units` goes, in order of preference (this packs slices
// to limit fragmentation and avoids reconfiguring GPUs):
//   1. a sliced GPU already in use with room for it, the fullest first;
//   2. a free GPU already laid out for slices;
//   3. a free GPU in whole-GPU layout, which must be reconfigured first.
// Ties go to the lowest node slot, then the lowest GPU. The simulator applies
// the same rule to pick the actual GPU, so what-if and reality agree.
#ifndef TIDE_SCHED_SLICES_H_
#define TIDE_SCHED_SLICES_H_

#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "model/cluster.h"
#include "sched/snapshot.h"

namespace tide::sched {

class SliceSnapshot {
 public:
  // Adds a MIG node; `slot` is its slot in `capacity`. GPUs in `partial` are
  // (gpu, free units) of sliced GPUs in use; `free_sliced` counts its fully
  // free GPUs laid out for slices.
  void AddNode(int slot, int pool, int units_per_gpu, std::vector<std::pair<int, int>> partial, int free_sliced);
  // Adds every MIG node of `state` that `slot_of` maps to a slot below `slots`.
  void AddFrom(const model::ClusterState& state, const SlotIndex& slot_of, int slots = 1 << 30);

  struct Pick {
    int node = -1;    // index in this snapshot
    int slot = -1;    // slot in the CapacitySnapshot
    int gpu = -1;     // GPU index for partial GPUs; -1 for a free GPU
    bool reconfigure = false;
  };
  // The best place for one slice of `units` on nodes of `pools`, given the
  // free GPUs `capacity` counts.
  std::optional<Pick> Find(PoolMask pools, int units, const CapacitySnapshot& capacity) const;
  // Takes it (and, for a free GPU, one GPU from `capacity`).
  void Take(const Pick& pick, int units, CapacitySnapshot* capacity);

  int size() const { return static_cast<int>(nodes_.size()); }

 private:
  struct Gpu {
    int gpu;
    int free;
  };
  struct Entry {
    int slot;
    int pool;
    int units;
    std::vector<Gpu> partial;
    int free_sliced;
    int next_gpu;  // index given to GPUs taken from the free ones
  };
  std::vector<Entry> nodes_;
};

}  // namespace tide::sched

#endif  // TIDE_SCHED_SLICES_H_
