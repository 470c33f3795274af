#include "sim/result.h"

#include <algorithm>
#include <cmath>

namespace tide::sim {

Percentiles ComputePercentiles(std::vector<int64_t>* values) {
  Percentiles p;
  auto& v = *values;
  p.count = static_cast<int64_t>(v.size());
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto rank = [&](double q) {
    const auto n = static_cast<double>(v.size());
    size_t idx = static_cast<size_t>(std::ceil(q * n));
    idx = std::clamp<size_t>(idx, 1, v.size());
    return v[idx - 1];
  };
  double sum = 0;
  for (auto x : v) sum += static_cast<double>(x);
  p.mean = sum / static_cast<double>(v.size());
  p.p50 = rank(0.50);
  p.p95 = rank(0.95);
  p.p99 = rank(0.99);
  p.max = v.back();
  return p;
}

}  // namespace tide::sim
