// SimProvider: the simulated cloud. It decides how long each bought node takes
// to boot, drawing from the pool's boot-delay distribution with a seeded RNG.
#ifndef TIDE_SIM_SIM_PROVIDER_H_
#define TIDE_SIM_SIM_PROVIDER_H_

#include "core/rng.h"
#include "core/time.h"
#include "model/cluster.h"

namespace tide::sim {

class SimProvider {
 public:
  explicit SimProvider(uint64_t seed) : rng_(seed) {}
  // A boot delay for one node of `pool`, in [min, max] of its distribution.
  Duration BootDelay(const model::NodePool& pool);

 private:
  Rng rng_;
};

}  // namespace tide::sim

#endif  // TIDE_SIM_SIM_PROVIDER_H_
