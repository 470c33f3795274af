// Ledger: what capacity cost, billed per second from the moment a node is
// requested until it is released, at its pool's hourly price (the simulator)
// or at the price it was bought at (the live controller's instances).
#ifndef TIDE_COST_LEDGER_H_
#define TIDE_COST_LEDGER_H_

#include <array>
#include <vector>

#include "core/time.h"
#include "model/cluster.h"

namespace tide::cost {

struct CostSummary {
  double total = 0;
  std::array<double, model::kNumTiers> by_tier{};  // indexed by model::Tier
  std::vector<double> by_pool;  // by pool index; priced intervals are in no pool
  double gpu_hours_paid = 0;
  std::array<double, model::kNumTiers> gpu_hours_paid_by_tier{};
  double egress = 0;  // data transfer between regions (included in total)
};

// Not thread-safe. Handles are indexes, never reused.
class Ledger {
 public:
  // Bills pools of `spec` (which must outlive the ledger) by index.
  explicit Ledger(const model::ClusterSpec* spec) : spec_(spec) {}
  // Bills priced intervals only (OpenPriced): Open must not be called, and
  // Summarize's by_pool is empty.
  Ledger() = default;

  // Opens a billing interval for a node of pool `pool` (an index of the
  // spec's pools), at the pool's price; returns its handle.
  size_t Open(int pool, Timestamp start);
  // Closes it (the node was released or failed).
  void Close(size_t handle, Timestamp end);

  // Opens a billing interval at its own `tier` and `price_per_hour`
  // (currency units, >= 0) for `gpus` GPUs: the price an instance was bought
  // at stands even if the configuration's price changes later. Returns its
  // handle, for ClosePriced (not Close).
  size_t OpenPriced(model::Tier tier, double price_per_hour, int gpus, Timestamp start);
  void ClosePriced(size_t handle, Timestamp end);

  // Data transfer charged to the run of a job.
  void AddEgress(double amount) { egress_ += amount; }
  double egress() const { return egress_; }

  // Everything billed in [from, until]: open intervals are billed up to
  // `until`, and nothing after `until` is billed. Pool intervals and priced
  // ones add up the same way: whole seconds are summed per price (pool, or
  // tier, price and GPUs) before they are priced, so the result does not
  // depend on the order the intervals were opened in.
  CostSummary Summarize(Timestamp from, Timestamp until) const;

 private:
  struct Interval {
    int pool;
    Timestamp start;
    Timestamp end;
  };
  struct PricedInterval {
    model::Tier tier;
    double price_per_hour;
    int gpus;
    Timestamp start;
    Timestamp end;
  };
  // Adds the priced intervals' cost and GPU-hours in [from, until] to `s`.
  void SummarizePriced(Timestamp from, Timestamp until, CostSummary* s) const;

  const model::ClusterSpec* spec_ = nullptr;
  std::vector<Interval> intervals_;
  std::vector<PricedInterval> priced_;
  double egress_ = 0;
};

}  // namespace tide::cost

#endif  // TIDE_COST_LEDGER_H_
