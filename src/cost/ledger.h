// Ledger: what capacity cost, billed per second from the moment a node is
// requested until it is released, at its pool's hourly price.
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
  std::vector<double> by_pool;
  double gpu_hours_paid = 0;
  std::array<double, model::kNumTiers> gpu_hours_paid_by_tier{};
  double egress = 0;  // data transfer between regions (included in total)
};

class Ledger {
 public:
  explicit Ledger(const model::ClusterSpec* spec) : spec_(spec) {}

  // Opens a billing interval for a node; returns its handle.
  size_t Open(int pool, Timestamp start);
  // Closes it (the node was released or failed).
  void Close(size_t handle, Timestamp end);

  // Data transfer charged to the run of a job.
  void AddEgress(double amount) { egress_ += amount; }
  double egress() const { return egress_; }

  // Everything billed in [from, until]: open intervals are billed up to
  // `until`, and nothing after `until` is billed.
  CostSummary Summarize(Timestamp from, Timestamp until) const;

 private:
  struct Interval {
    int pool;
    Timestamp start;
    Timestamp end;
  };
  const model::ClusterSpec* spec_;
  std::vector<Interval> intervals_;
  double egress_ = 0;
};

}  // namespace tide::cost

#endif  // TIDE_COST_LEDGER_H_
