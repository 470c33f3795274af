#include "bound/bound.h"

#include <algorithm>
#include <tuple>

#include "core/strings.h"

namespace tide::bound {
namespace {

void MinInto(std::optional<double>* slot, double v) {
  if (!slot->has_value() || v < **slot) *slot = v;
}

// Adds `seconds` at `level` to a histogram that grows as levels appear.
void AddAt(std::vector<int64_t>* hist, int64_t level, int64_t seconds) {
  if (static_cast<int64_t>(hist->size()) <= level) hist->resize(level + 1, 0);
  (*hist)[level] += seconds;
}

}  // namespace

TierPrices CheapestPrices(const model::ClusterSpec& spec) {
  TierPrices p;
  for (const auto& pool : spec.pools) {
    if (pool.max_nodes <= 0 || pool.type.gpus <= 0) continue;
    const double per_gpu = pool.price_per_hour / pool.type.gpus;
    switch (pool.tier) {
      case model::Tier::kReserved:
        MinInto(&p.reserved, per_gpu);
        break;
      case model::Tier::kOnDemand:
        MinInto(&p.on_demand, per_gpu);
        break;
      case model::Tier::kSpot:
        MinInto(&p.spot, per_gpu);
        break;
    }
  }
  return p;
}

Result<DemandHistogram> BuildHistogram(Timestamp start, const std::vector<JobDemand>& jobs) {
  DemandHistogram h;
  h.start = start;
  h.end = start;
  // (time, change in non-preemptible GPUs, change in all GPUs)
  std::vector<std::tuple<Timestamp, int64_t, int64_t>> events;
  events.reserve(2 * jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobDemand& j = jobs[i];
    if (j.submit < start) {
      return absl::InvalidArgumentError(StrCat("job ", i, " is submitted at ", FormatTimestamp(j.submit),
                                               ", before the start ", FormatTimestamp(start)));
    }
    if (j.runtime.count() < 0 || j.gpus < 0) {
      return absl::InvalidArgumentError(StrCat("job ", i, " has a negative run time or GPU count"));
    }
    h.end = std::max(h.end, j.submit + j.runtime);
    if (j.runtime.count() == 0 || j.gpus == 0) continue;
    const int64_t np = j.spot_ok ? 0 : j.gpus;
    events.emplace_back(j.submit, np, j.gpus);
    events.emplace_back(j.submit + j.runtime, -np, -j.gpus);
    const int64_t gpu_seconds = j.gpus * j.runtime.count();
    (j.spot_ok ? h.gpu_seconds_spot_ok : h.gpu_seconds_np) += gpu_seconds;
  }
  std::sort(events.begin(), events.end());
  h.seconds_np.assign(1, 0);
  h.seconds_total.assign(1, 0);
  int64_t np = 0, total = 0;
  Timestamp at = start;
  for (const auto& [t, d_np, d_total] : events) {
    if (t > at) {
      AddAt(&h.seconds_np, np, (t - at).count());
      AddAt(&h.seconds_total, total, (t - at).count());
      at = t;
    }
    np += d_np;
    total += d_total;
    // A level reached only for an instant still counts as a peak.
    AddAt(&h.seconds_np, np, 0);
    AddAt(&h.seconds_total, total, 0);
  }
  // From the last completion (all demand gone) to the end of the window.
  AddAt(&h.seconds_np, 0, (h.end - at).count());
  AddAt(&h.seconds_total, 0, (h.end - at).count());
  return h;
}

namespace {

// The bases for which every GPU of demand has a tier to run on: [lo, hi].
struct Bases {
  int64_t lo = 0;
  int64_t hi = 0;
};

// Preemptible demand above the base takes the cheaper of spot and on-demand.
std::optional<double> PreemptiblePrice(const TierPrices& prices) {
  std::optional<double> p = prices.spot;
  if (prices.on_demand) MinInto(&p, *prices.on_demand);
  return p;
}

Result<Bases> FeasibleBases(const DemandHistogram& demand, const TierPrices& prices) {
  const int64_t peak_np = demand.PeakNp(), peak_total = demand.PeakTotal();
  Bases b;
  if (!prices.on_demand) b.lo = std::max(b.lo, peak_np);
  if (!PreemptiblePrice(prices)) b.lo = std::max(b.lo, peak_total);
  b.hi = prices.reserved ? peak_total : 0;
  if (b.lo > b.hi) {
    const bool np_stuck = !prices.on_demand && peak_np > 0;
    return absl::FailedPreconditionError(StrCat("no pool can run the ", np_stuck ? "non-preemptible" : "preemptible",
                                                " demand (", np_stuck ? peak_np : peak_total,
                                                " GPUs at the peak): the configuration has no reserved",
                                                np_stuck ? " or on-demand pool" : ", on-demand or spot pool"));
  }
  return b;
}

// The cheapest base in [lo, hi] (ties: the smaller) and its figures.
Bound Sweep(const DemandHistogram& demand, const TierPrices& prices, int64_t lo, int64_t hi) {
  const std::optional<double> preemptible = PreemptiblePrice(prices);
  const bool to_spot = prices.spot && preemptible == prices.spot;
  const int64_t peak_np = demand.PeakNp(), peak_total = demand.PeakTotal();
  const double r = prices.reserved.value_or(0), o = prices.on_demand.value_or(0), p = preemptible.value_or(0);
  const int64_t span = demand.Span();
  // GPU-seconds above a base of R, updated as R grows by one: on-demand loses
  // the time non-preemptible demand exceeds R; the preemptible overflow loses
  // the time the base reaches past non-preemptible demand into the rest.
  int64_t od = demand.gpu_seconds_np, over = demand.gpu_seconds_spot_ok;
  int64_t np_above = span - demand.seconds_np[0], total_above = span - demand.seconds_total[0];
  Bound best;
  bool found = false;
  for (int64_t base = 0; base <= hi; ++base) {
    if (base >= lo) {
      const double cost =
          (r * static_cast<double>(base * span) + o * static_cast<double>(od) + p * static_cast<double>(over)) / 3600.0;
      if (!found || cost < best.total) {
        found = true;
        best.reserved_gpus = base;
        best.total = cost;
        best.reserved_gpu_hours = static_cast<double>(base * span) / 3600.0;
        best.on_demand_gpu_hours = static_cast<double>(od) / 3600.0;
        best.spot_gpu_hours = static_cast<double>(over) / 3600.0;
      }
    }
    od -= np_above;
    over -= total_above - np_above;
    if (base + 1 <= peak_np) np_above -= demand.seconds_np[base + 1];
    if (base + 1 <= peak_total) total_above -= demand.seconds_total[base + 1];
  }
  best.start = demand.start;
  best.end = demand.end;
  best.peak_gpus = peak_total;
  best.peak_np_gpus = peak_np;
  best.demand_gpu_hours = static_cast<double>(demand.gpu_seconds_np + demand.gpu_seconds_spot_ok) / 3600.0;
  best.prices = prices;
  best.reserved_cost = r * best.reserved_gpu_hours;
  best.on_demand_cost = o * best.on_demand_gpu_hours;
  best.spot_cost = p * best.spot_gpu_hours;
  if (!to_spot) {  // the preemptible overflow runs on demand
    best.on_demand_gpu_hours += best.spot_gpu_hours;
    best.on_demand_cost += best.spot_cost;
    best.spot_gpu_hours = 0;
    best.spot_cost = 0;
  }
  return best;
}

}  // namespace

Result<Bound> ComputeBound(const DemandHistogram& demand, const TierPrices& prices) {
  TIDE_ASSIGN_OR_RETURN(Bases b, FeasibleBases(demand, prices));
  return Sweep(demand, prices, b.lo, b.hi);
}

Result<Bound> BoundAtReserved(const DemandHistogram& demand, const TierPrices& prices, int64_t reserved_gpus) {
  TIDE_ASSIGN_OR_RETURN(Bases b, FeasibleBases(demand, prices));
  if (reserved_gpus > 0 && !prices.reserved) {
    return absl::FailedPreconditionError(StrCat("a reserved base of ", reserved_gpus, " GPUs, but no reserved pool"));
  }
  if (reserved_gpus < b.lo) {
    return absl::FailedPreconditionError(
        StrCat("a reserved base of ", reserved_gpus, " GPUs leaves demand (up to ", b.lo, " GPUs) no tier can run"));
  }
  return Sweep(demand, prices, reserved_gpus, reserved_gpus);
}

int64_t ConfiguredReservedGpus(const model::ClusterSpec& spec) {
  int64_t gpus = 0;
  for (const auto& pool : spec.pools) {
    if (pool.tier == model::Tier::kReserved) gpus += int64_t{pool.min_nodes} * pool.type.gpus;
  }
  return gpus;
}

}  // namespace tide::bound
