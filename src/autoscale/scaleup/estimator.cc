#include "autoscale/scaleup/estimator.h"

#include <algorithm>
#include <limits>

namespace tide::autoscale {

double ScaleUpOption::CostPerUsedGpuHour() const {
  if (useful_gpus <= 0) return nodes == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return (cost_per_hour + egress_per_hour) / static_cast<double>(useful_gpus);
}

double ScaleUpOption::Waste() const {
  if (new_gpus <= 0) return 0.0;
  return 1.0 - static_cast<double>(useful_gpus) / static_cast<double>(new_gpus);
}

ScaleUpOption BinpackingEstimator::Estimate(const model::ClusterSpec& spec, int pool, int max_new_nodes,
                                            const std::vector<Demand>& demands, sched::CapacitySnapshot* snap,
                                            model::NodeId* next_template_id) const {
  const model::NodePool& p = spec.pools[pool];
  ScaleUpOption opt;
  opt.pool = pool;
  const int first_new_slot = snap->size();
  std::vector<sched::SlotShare> shares;
  auto add_nodes = [&](int k) {
    for (int i = 0; i < k; ++i) snap->AddNode((*next_template_id)--, pool, p.type.gpus, p.type.gpus);
    opt.nodes += k;
  };

  for (size_t i = 0; i < demands.size(); ++i) {
    const Demand& d = demands[i];
    if (d.workers_left <= 0 || !(d.pools & sched::PoolBit(pool))) continue;
    const int g = d.job->spec.gpus_per_worker;
    const int per_node = p.type.gpus / g;
    if (per_node <= 0) continue;
    const int64_t have = snap->Slots(d.pools, g);
    const int64_t missing = std::max<int64_t>(0, d.workers_left - have);
    const int64_t need_nodes = (missing + per_node - 1) / per_node;
    const int room = max_new_nodes - opt.nodes;
    int place = d.workers_left;
    if (need_nodes > room) {
      if (gang_aware_) continue;  // never half a gang
      place = static_cast<int>(std::min<int64_t>(d.workers_left, have + int64_t{room} * per_node));
      if (place <= 0) continue;
      add_nodes(room);
    } else {
      add_nodes(static_cast<int>(need_nodes));
    }
    shares.clear();
    snap->Place(d.pools, g, place, &shares);
    opt.served.emplace_back(static_cast<int>(i), place);
    if (egress_aware_) {
      const double hours = std::max(1.0, static_cast<double>(d.job->spec.runtime.count()) / 3600.0);
      opt.egress_per_hour += spec.EgressCost(d.job->spec, pool) / hours;
    }
  }
  for (int s = first_new_slot; s < snap->size(); ++s) {
    opt.useful_gpus += snap->gpus(s) - snap->free(s);
    opt.new_gpus += snap->gpus(s);
  }
  opt.cost_per_hour = opt.nodes * p.price_per_hour;
  return opt;
}

}  // namespace tide::autoscale
