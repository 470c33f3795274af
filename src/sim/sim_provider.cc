#include "sim/sim_provider.h"

#include <algorithm>
#include <cmath>

namespace tide::sim {

Duration SimProvider::BootDelay(const model::NodePool& pool) {
  const model::BootDelay& b = pool.boot_delay;
  switch (b.kind) {
    case model::BootDelay::Kind::kFixed:
      return b.min;
    case model::BootDelay::Kind::kUniform:
      return Seconds(rng_.UniformInt(b.min.count(), b.max.count()));
    case model::BootDelay::Kind::kLogNormal: {
      const double s = rng_.LogNormal(static_cast<double>(b.median.count()), b.sigma);
      const double c = std::clamp(s, static_cast<double>(b.min.count()), static_cast<double>(b.max.count()));
      return Seconds(static_cast<int64_t>(std::llround(c)));
    }
  }
  return b.min;
}

}  // namespace tide::sim
