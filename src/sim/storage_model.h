// StorageModel: nodes loading from shared storage share its bandwidth
// (processor sharing, each capped by its own link), optionally at most K at
// a time in arrival order (staggering).
#ifndef TIDE_SIM_STORAGE_MODEL_H_
#define TIDE_SIM_STORAGE_MODEL_H_

#include <cstdint>
#include <deque>
#include <vector>

#include "core/time.h"
#include "model/cluster.h"
#include "sim/world.h"

namespace tide::sim {

class StorageModel {
 public:
  explicit StorageModel(const StorageOptions& o) : o_(o) {}
  bool enabled() const { return o_.load_gb > 0; }

  // A node starts (or queues) loading `gb` at `now`.
  void Start(model::NodeId node, Timestamp now);
  // Forget a node (released while loading).
  void Cancel(model::NodeId node, Timestamp now);
  // Nodes whose load is done by `now`, in completion order; advances the model.
  std::vector<model::NodeId> Complete(Timestamp now);
  // When the next load completes (kInfiniteFuture if none is loading).
  Timestamp NextCompletion() const;
  // Bumps whenever NextCompletion may have changed (for stale events).
  uint64_t epoch() const { return epoch_; }

 private:
  struct Loading {
    model::NodeId node;
    double remaining_gb;
  };
  void Advance(Timestamp now);
  double RatePerNode() const;
  void Admit();

  StorageOptions o_;
  std::vector<Loading> active_;
  std::deque<model::NodeId> waiting_;
  Timestamp last_ = kInfinitePast;
  uint64_t epoch_ = 0;
};

}  // namespace tide::sim

#endif  // TIDE_SIM_STORAGE_MODEL_H_
