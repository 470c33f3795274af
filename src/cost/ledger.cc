#include "cost/ledger.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace tide::cost {

size_t Ledger::Open(int pool, Timestamp start) {
  intervals_.push_back({pool, start, kInfiniteFuture});
  return intervals_.size() - 1;
}

void Ledger::Close(size_t handle, Timestamp end) { intervals_[handle].end = end; }

size_t Ledger::OpenPriced(model::Tier tier, double price_per_hour, int gpus, Timestamp start) {
  priced_.push_back({tier, price_per_hour, gpus, start, kInfiniteFuture});
  return priced_.size() - 1;
}

void Ledger::ClosePriced(size_t handle, Timestamp end) { priced_[handle].end = end; }

CostSummary Ledger::Summarize(Timestamp from, Timestamp until) const {
  // Sum whole node-seconds per pool first, so the result does not depend on
  // the order of intervals and carries no rounding from many small additions.
  const size_t pools = spec_ != nullptr ? spec_->pools.size() : 0;
  std::vector<int64_t> node_seconds(pools, 0);
  for (const auto& iv : intervals_) {
    const Timestamp a = std::max(iv.start, from);
    const Timestamp b = std::min(iv.end, until);
    if (b > a) node_seconds[iv.pool] += (b - a).count();
  }
  CostSummary s;
  s.by_pool.assign(pools, 0.0);
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
  // Only the live controller bills priced intervals; the simulator's sums
  // above and below stay exactly as they are without them.
  if (!priced_.empty()) SummarizePriced(from, until, &s);
  s.egress = egress_;
  s.total += egress_;
  return s;
}

void Ledger::SummarizePriced(Timestamp from, Timestamp until, CostSummary* s) const {
  // Whole seconds per (tier, price, GPUs), in that order: the same sum
  // whatever order the intervals came in.
  std::map<std::tuple<int, double, int>, int64_t> seconds;
  for (const auto& iv : priced_) {
    const Timestamp a = std::max(iv.start, from);
    const Timestamp b = std::min(iv.end, until);
    if (b > a) seconds[{static_cast<int>(iv.tier), iv.price_per_hour, iv.gpus}] += (b - a).count();
  }
  for (const auto& [key, n] : seconds) {
    const auto [tier, price_per_hour, gpus] = key;
    const double hours = static_cast<double>(n) / 3600.0;
    const double cost = hours * price_per_hour;
    s->total += cost;
    s->by_tier[tier] += cost;
    s->gpu_hours_paid += hours * gpus;
    s->gpu_hours_paid_by_tier[tier] += hours * gpus;
  }
}

}  // namespace tide::cost
