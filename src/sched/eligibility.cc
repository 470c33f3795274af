#include "sched/eligibility.h"

namespace tide::sched {

bool Eligible(const model::NodePool& pool, const model::JobSpec& job) {
  if (pool.type.gpus < job.gpus_per_worker) return false;
  if (pool.tier == model::Tier::kSpot && (!job.preemptible || job.is_protected)) return false;
  return true;
}

PoolMask EligiblePools(const model::ClusterSpec& spec, const model::JobSpec& job) {
  PoolMask mask = 0;
  for (size_t p = 0; p < spec.pools.size(); ++p) {
    if (Eligible(spec.pools[p], job)) mask |= PoolBit(static_cast<int>(p));
  }
  return mask;
}

}  // namespace tide::sched
