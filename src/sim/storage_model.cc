#include "sim/storage_model.h"

#include <algorithm>
#include <cmath>

namespace tide::sim {

double StorageModel::RatePerNode() const {
  if (active_.empty()) return 0;
  return std::min(o_.node_gbps, o_.bandwidth_gbps / static_cast<double>(active_.size()));
}

void StorageModel::Advance(Timestamp now) {
  if (last_ != kInfinitePast && now > last_) {
    const double moved = RatePerNode() * static_cast<double>((now - last_).count());
    for (auto& l : active_) l.remaining_gb -= moved;
  }
  last_ = now;
}

void StorageModel::Admit() {
  while (!waiting_.empty() && (o_.max_concurrent <= 0 || static_cast<int>(active_.size()) < o_.max_concurrent)) {
    active_.push_back({waiting_.front(), o_.load_gb});
    waiting_.pop_front();
  }
}

void StorageModel::Start(model::NodeId node, Timestamp now) {
  Advance(now);
  waiting_.push_back(node);
  Admit();
  ++epoch_;
}

void StorageModel::Cancel(model::NodeId node, Timestamp now) {
  Advance(now);
  std::erase_if(active_, [&](const Loading& l) { return l.node == node; });
  std::erase(waiting_, node);
  Admit();
  ++epoch_;
}

std::vector<model::NodeId> StorageModel::Complete(Timestamp now) {
  Advance(now);
  // NextCompletion rounds up to a whole second, so a finished load is at or below zero.
  constexpr double kDone = 1e-9;
  std::vector<model::NodeId> done;
  for (const auto& l : active_) {
    if (l.remaining_gb <= kDone) done.push_back(l.node);
  }
  if (!done.empty()) {
    std::erase_if(active_, [](const Loading& l) { return l.remaining_gb <= kDone; });
    Admit();
    ++epoch_;
  }
  return done;
}

Timestamp StorageModel::NextCompletion() const {
  if (active_.empty()) return kInfiniteFuture;
  double least = active_.front().remaining_gb;
  for (const auto& l : active_) least = std::min(least, l.remaining_gb);
  const double rate = RatePerNode();
  if (rate <= 0) return kInfiniteFuture;
  const double secs = std::max(0.0, least / rate);
  return last_ + Seconds(static_cast<int64_t>(std::ceil(secs - 1e-9)));
}

}  // namespace tide::sim
