#include "sched/eligibility.h"

namespace tide::sched {

PoolMask EligiblePools(const model::ClusterSpec& spec, const model::JobSpec& job) {
  PoolMask mask = 0;
  for (size_t p = 0; p < spec.pools.size(); ++p) {
    if (spec.pools[p].type.gpus >= job.gpus_per_worker) mask |= PoolBit(static_cast<int>(p));
  }
  return mask;
}

}  // namespace tide::sched
