// Sweeps for `tide plan`: a grid of configuration changes, each simulated
// over the same workload, to read off the cost and queue-wait curve.
//
//   reserved[:POOL]=V   the reserved pool's size (the first reserved pool)
//   max[:POOL]=V        a pool's max_nodes (the first non-reserved pool)
//   spot-share=V        tide's target share of spot in elastic capacity
//   threshold=V         tide's pending-job threshold
//   grace=V             tide's pending grace (a duration)
//   idle=V              tide's idle release time (a duration)
// Values: a list (10,12,14) or a range (0..20:5). Several sweeps multiply.
#ifndef TIDE_SWEEP_SWEEP_H_
#define TIDE_SWEEP_SWEEP_H_

#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/status.h"

namespace tide::sweep {

struct Setting {
  std::string name;   // "reserved", "max", "spot-share", ...
  std::string pool;   // for reserved / max; empty: the default pool
  std::string value;  // as written
};

// One point of the grid: one value of each sweep.
struct SweepPoint {
  std::vector<Setting> settings;
  std::string Label() const;  // "reserved=10 max=10"
};

// Parses `--sweep` arguments into the grid (in order; the last sweep
// varies fastest). InvalidArgument names the bad argument.
Result<std::vector<SweepPoint>> ExpandSweeps(const std::vector<std::string>& sweeps);

// Applies a point to a copy of the configuration. InvalidArgument if a pool
// or value does not fit it.
Status Apply(const SweepPoint& point, config::Config* config);

}  // namespace tide::sweep

#endif  // TIDE_SWEEP_SWEEP_H_
