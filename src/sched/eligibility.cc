#include "sched/eligibility.h"

namespace tide::sched {

bool Eligible(const model::NodePool& pool, const model::JobSpec& job) {
  if (pool.type.gpus < job.gpus_per_worker) return false;
  if (pool.tier == model::Tier::kSpot && (!job.preemptible || job.is_protected)) return false;
  return true;
}

std::vector<PoolMask> PlacementPreference(const model::ClusterSpec& spec, const model::JobSpec& job,
                                          bool data_first) {
  using model::Tier;
  const Tier order_preemptible[] = {Tier::kSpot, Tier::kReserved, Tier::kOnDemand};
  const Tier order_other[] = {Tier::kReserved, Tier::kOnDemand, Tier::kSpot};
  const Tier* order = job.preemptible && !job.is_protected ? order_preemptible : order_other;
  std::vector<PoolMask> groups;
  for (int i = 0; i < model::kNumTiers; ++i) {
    PoolMask near = 0, far = 0;
    for (size_t p = 0; p < spec.pools.size(); ++p) {
      if (spec.pools[p].tier != order[i] || !Eligible(spec.pools[p], job)) continue;
      const bool home = !data_first || job.data_region.empty() || spec.pools[p].region == job.data_region;
      (home ? near : far) |= PoolBit(static_cast<int>(p));
    }
    if (near != 0) groups.push_back(near);
    if (far != 0) groups.push_back(far);
  }
  return groups;
}

PoolMask EligiblePools(const model::ClusterSpec& spec, const model::JobSpec& job) {
  PoolMask mask = 0;
  for (size_t p = 0; p < spec.pools.size(); ++p) {
    if (Eligible(spec.pools[p], job)) mask |= PoolBit(static_cast<int>(p));
  }
  return mask;
}

}  // namespace tide::sched
