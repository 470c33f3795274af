#include "cost/ledger.h"

#include <algorithm>

namespace tide::cost {

size_t Ledger::Open(int pool, Timestamp start) {
  intervals_.push_back({pool, start, kInfiniteFuture});
  return intervals_.size() - 1;
}

void Ledger::Close(size_t handle, Timestamp end) { intervals_[handle].end = end; }

CostSummary Ledger::Summarize(Timestamp from, Timestamp until) const {
  // Sum whole node-seconds per pool first, so the result does not depend on
  // the order of intervals and carries no rounding from many small additions.
  std::vector<int64_t> node_seconds(spec_->pools.size(), 0);
  for (const auto& iv : intervals_) {
    const Timestamp a = std::max(iv.start, from);
    const Timestamp b = std::min(iv.end, until);
    if (b > a) node_seconds[iv.pool] += (b - a).count();
  }
  CostSummary s;
  s.by_pool.assign(spec_->pools.size(), 0.0);
  for (size_t p = 0; p < node_seconds.size(); ++p) {
    const model::NodePool& pool = spec_->pools[p];
    const double hours = static_cast<double>(node_seconds[p]) / 3600.0;
    const double cost = hours * pool.price_per_hour;
    const int tier = static_cast<int>(pool.tier);
    s.by_pool[p] = cost;
    s.total += cost;
    s.by_tier[tier] += cost;
    s.gpu_hours_paid += hours * pool.type.gpus;
    s.gpu_hours_paid_by_tier[tier] += hours * pool.type.gpus;
  }
  s.egress = egress_;
  s.total += egress_;
  return s;
}

}  // namespace tide::cost
