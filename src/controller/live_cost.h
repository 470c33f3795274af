// What the live controller has spent: the intervals the store billed
// (Store::BilledIntervals), summed by cost::Ledger, the simulator's ledger,
// so that a simulated run and a live one add up cost the same way.
#ifndef TIDE_CONTROLLER_LIVE_COST_H_
#define TIDE_CONTROLLER_LIVE_COST_H_

#include <vector>

#include "controller/store.h"
#include "core/status.h"
#include "core/time.h"

namespace tide::controller {

// The cost of `billed` by tier, in the instances' price units: a gone
// instance's whole interval, and a live one's from its start to `now`
// (nothing for one that starts after `now`). Each is billed at the price
// it was bought at. A gone instance counts in full even if `now` is before
// its end, so the total never shrinks (tide_cost_total is a counter). Pure.
CostByTier SumBilledCost(const std::vector<BilledInterval>& billed, Timestamp now);

// SumBilledCost of `store`'s billed intervals; the store's errors as they
// come.
Result<CostByTier> LiveCost(Store* store, Timestamp now);

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_LIVE_COST_H_
