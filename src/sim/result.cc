#include "sim/result.h"

#include <algorithm>
#include <cmath>

namespace tide::sim {

Percentiles ComputePercentiles(std::vector<int64_t>* values) {
  Percentiles p;
  auto& v = *values;
  p.count = static_cast<int64_t>(v.size());
  if (v.empty()) return p;
  // Nearest rank, 1-based: the value a sort would put at ceil(q * n). Each
  // rank is selected from what lies above the one before, not sorted: a
  // simulation's million waits take a fraction of the time.
  auto rank = [&](double q) {
    const auto n = static_cast<double>(v.size());
    return std::clamp<size_t>(static_cast<size_t>(std::ceil(q * n)), 1, v.size()) - 1;
  };
  auto from = v.begin();
  auto select = [&](size_t at) {
    const auto it = v.begin() + static_cast<std::ptrdiff_t>(at);
    if (it >= from) {
      std::nth_element(from, it, v.end());
      from = it + 1;
    }
    return *it;
  };
  p.p50 = select(rank(0.50));
  p.p95 = select(rank(0.95));
  p.p99 = select(rank(0.99));
  p.max = select(v.size() - 1);
  // Whole seconds: their sum in a double is exact in any order (below 2^53).
  double sum = 0;
  for (auto x : v) sum += static_cast<double>(x);
  p.mean = sum / static_cast<double>(v.size());
  return p;
}

}  // namespace tide::sim
