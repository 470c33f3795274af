#include "sched/eligibility.h"

#include <algorithm>

#include "sched/slices.h"

namespace tide::sched {
namespace {

int PriorityValue(const model::ClusterSpec& spec, const model::JobSpec& job) {
  const auto& classes = spec.priority_classes;
  return job.priority_class >= 0 && job.priority_class < static_cast<int>(classes.size())
             ? classes[job.priority_class].value
             : 0;
}

// The pool's own rules, kept inline for EligiblePools's loop.
inline bool PoolAllows(const model::NodePool& pool, const model::JobSpec& job, int priority) {
  if (pool.type.gpus < job.gpus_per_worker) return false;
  if (priority < pool.min_priority) return false;
  // A slice goes on a MIG pool that offers its profile, or takes a whole GPU elsewhere.
  if (job.slice_units > 0 && pool.mig.enabled() && !pool.mig.Offers(job.slice_units)) return false;
  if (pool.tier == model::Tier::kSpot && (!job.preemptible || job.is_protected)) return false;
  if (!job.gpu_models.empty() &&
      std::find(job.gpu_models.begin(), job.gpu_models.end(), pool.type.gpu_model) == job.gpu_models.end()) {
    return false;
  }
  return true;
}

}  // namespace

bool Eligible(const model::ClusterSpec& spec, int p, const model::JobSpec& job, int priority) {
  return job.MayUsePool(p) && PoolAllows(spec.pools[static_cast<size_t>(p)], job, priority);
}

bool Eligible(const model::NodePool& pool, const model::JobSpec& job, int priority) {
  return PoolAllows(pool, job, priority);
}

PoolPreference PlacementPreference(const model::ClusterSpec& spec, const model::JobSpec& job, bool data_first) {
  return PlacementPreference(spec, job, EligiblePools(spec, job), data_first);
}

PoolPreference PlacementPreference(const model::ClusterSpec& spec, const model::JobSpec& job, PoolMask eligible,
                                   bool data_first) {
  using model::Tier;
  const Tier order_preemptible[] = {Tier::kSpot, Tier::kReserved, Tier::kOnDemand};
  const Tier order_other[] = {Tier::kReserved, Tier::kOnDemand, Tier::kSpot};
  const Tier* order = job.preemptible && !job.is_protected ? order_preemptible : order_other;
  // The eligible pools by tier, and those in the job's data region.
  PoolMask by_tier[model::kNumTiers] = {};
  PoolMask home = eligible;
  const bool by_region = data_first && !job.data_region.empty();
  if (by_region) home = 0;
  for (PoolMask m = eligible; m != 0; m &= m - 1) {
    const int p = __builtin_ctzll(m);
    const model::NodePool& pool = spec.pools[static_cast<size_t>(p)];
    by_tier[static_cast<int>(pool.tier)] |= PoolBit(p);
    if (by_region && pool.region == job.data_region) home |= PoolBit(p);
  }
  PoolPreference groups;
  for (int i = 0; i < model::kNumTiers; ++i) {
    const PoolMask tier = by_tier[static_cast<int>(order[i])];
    if (const PoolMask near = tier & home; near != 0) groups.push_back(near);
    if (const PoolMask far = tier & ~home; far != 0) groups.push_back(far);
  }
  return groups;
}

PoolMask MigPools(const model::ClusterSpec& spec, PoolMask mask) {
  PoolMask out = 0;
  for (size_t p = 0; p < spec.pools.size(); ++p) {
    if ((mask & PoolBit(static_cast<int>(p))) && spec.pools[p].mig.enabled()) out |= PoolBit(static_cast<int>(p));
  }
  return out;
}

bool PlaceSliceJob(const model::ClusterSpec& spec, const model::JobSpec& job, SliceSnapshot* slices,
                   CapacitySnapshot* capacity, std::vector<model::NodeShare>* out) {
  const PoolMask mask = EligiblePools(spec, job);
  const PoolMask mig = MigPools(spec, mask), whole = mask & ~mig;
  // Dry run on copies first, so a job that does not fit changes nothing.
  SliceSnapshot s = *slices;
  CapacitySnapshot::Fork fork(capacity);
  std::vector<model::NodeShare> shares;
  std::vector<SlotShare> placed;
  for (int w = 0; w < job.workers; ++w) {
    if (auto pick = s.Find(mig, job.slice_units, *capacity)) {
      s.Take(*pick, job.slice_units, capacity);
      shares.push_back(
          {capacity->id(pick->slot), 1, static_cast<int16_t>(pick->gpu), static_cast<int16_t>(job.slice_units)});
      continue;
    }
    if (capacity->Slots(whole, 1) < 1) return false;
    placed.clear();
    capacity->Place(whole, 1, 1, &placed);
    shares.push_back({capacity->id(placed[0].slot), 1});
  }
  fork.Commit();
  *slices = std::move(s);
  out->insert(out->end(), shares.begin(), shares.end());
  return true;
}

PoolMask EligiblePools(const model::ClusterSpec& spec, const model::JobSpec& job) {
  PoolMask mask = 0;
  const int priority = PriorityValue(spec, job);
  for (size_t p = 0; p < spec.pools.size(); ++p) {
    if (job.MayUsePool(static_cast<int>(p)) && PoolAllows(spec.pools[p], job, priority)) {
      mask |= PoolBit(static_cast<int>(p));
    }
  }
  return mask;
}

PoolMask EligibilityMemo::Of(int gpus_per_worker, int priority_class, int slice_units, bool preemptible,
                             bool is_protected, bool restricted, const model::JobSpec& job) {
  // The key packs every field Eligible reads of a job; one out of its range
  // (or a restricted job) is worked out directly.
  if (restricted || gpus_per_worker < 0 || gpus_per_worker >= (1 << 24) || priority_class < -1 ||
      priority_class >= (1 << 19) || slice_units < 0 || slice_units >= 256) {
    return EligiblePools(*spec_, job);
  }
  const uint64_t key = static_cast<uint64_t>(gpus_per_worker) | static_cast<uint64_t>(priority_class + 1) << 24 |
                       static_cast<uint64_t>(slice_units) << 44 | uint64_t{preemptible} << 52 |
                       uint64_t{is_protected} << 53;
  if (key == last_key_) return last_mask_;
  auto [it, fresh] = masks_.try_emplace(key, 0);
  if (fresh) it->second = EligiblePools(*spec_, job);
  last_key_ = key;
  last_mask_ = it->second;
  return it->second;
}

int64_t WorkersAtMax(const model::ClusterSpec& spec, PoolMask mask, int gpus_per_worker) {
  int64_t workers = 0;
  for (size_t p = 0; p < spec.pools.size(); ++p) {
    if (!(mask & PoolBit(static_cast<int>(p)))) continue;
    workers += int64_t{spec.pools[p].max_nodes} * (spec.pools[p].type.gpus / std::max(1, gpus_per_worker));
  }
  return workers;
}

bool CouldEverRun(const model::ClusterSpec& spec, const model::JobSpec& job) {
  const PoolMask mask = EligiblePools(spec, job);
  return mask != 0 && WorkersAtMax(spec, mask, job.gpus_per_worker) >= job.MinWorkers();
}

}  // namespace tide::sched
