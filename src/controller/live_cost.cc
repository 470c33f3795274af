#include "controller/live_cost.h"

#include <algorithm>

#include "cost/ledger.h"

namespace tide::controller {

CostByTier SumBilledCost(const std::vector<BilledInterval>& billed, Timestamp now) {
  // A live interval is priced to `now` by closing it there; a gone one keeps
  // its end. Summarizing over all time then bills each exactly as the
  // contract says.
  cost::Ledger ledger;
  for (const BilledInterval& b : billed) {
    // The store does not know an instance's GPUs: the summary's GPU-hours
    // are not used here.
    const size_t h = ledger.OpenPriced(b.tier, b.price_per_hour, /*gpus=*/0, b.start);
    ledger.ClosePriced(h, b.end != kInfiniteFuture ? b.end : std::max(now, b.start));
  }
  const cost::CostSummary s = ledger.Summarize(kInfinitePast, kInfiniteFuture);
  auto tier = [&](model::Tier t) { return s.by_tier[static_cast<size_t>(t)]; };
  return CostByTier{.reserved = tier(model::Tier::kReserved),
                    .on_demand = tier(model::Tier::kOnDemand),
                    .spot = tier(model::Tier::kSpot)};
}

Result<CostByTier> LiveCost(Store* store, Timestamp now) {
  TIDE_ASSIGN_OR_RETURN(const auto billed, store->BilledIntervals());
  return SumBilledCost(billed, now);
}

}  // namespace tide::controller
