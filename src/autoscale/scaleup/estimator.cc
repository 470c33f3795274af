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
                                            sched::SliceSnapshot* slices, model::NodeId* next_template_id) const {
  const model::NodePool& p = spec.pools[pool];
  ScaleUpOption opt;
  opt.pool = pool;
  const int first_new_slot = snap->size();
  std::vector<sched::SlotShare> shares;
  auto add_nodes = [&](int k) {
    for (int i = 0; i < k; ++i) {
      const int slot = snap->AddNode((*next_template_id)--, pool, p.type.gpus, p.type.gpus);
      // A MIG pool's new node comes up laid out for slices.
      if (p.mig.enabled()) slices->AddNode(slot, pool, p.mig.units_per_gpu, {}, p.type.gpus);
    }
    opt.nodes += k;
  };
  auto served = [&](size_t i, int workers, double useful) {
    opt.served.emplace_back(static_cast<int>(i), workers);
    opt.useful_gpus += useful;
    // A job that moves no data costs no egress anywhere (ClusterSpec::EgressCost).
    if (egress_aware_ && demands[i].moves_data) {
      const double hours = std::max(1.0, static_cast<double>(demands[i].job->spec.runtime.count()) / 3600.0);
      opt.egress_per_hour += spec.EgressCost(demands[i].job->spec, pool) / hours;
    }
  };

  for (size_t i = 0; i < demands.size(); ++i) {
    // No room for another node and no GPU free anywhere: no later demand can
    // be served (a MIG pool may still fit slices on partly used GPUs). A pass
    // over 100,000 waiting jobs stops here rather than look at each.
    if (!p.mig.enabled() && opt.nodes >= max_new_nodes && snap->total_free() == 0) break;
    const Demand& d = demands[i];
    if (d.workers_left <= 0 || !(d.pools & sched::PoolBit(pool))) continue;
    if (d.slice_units > 0 && p.mig.enabled()) {
      const model::JobSpec& js = d.job->spec;
      // Slices: on the pool's GPUs with room, else on new nodes, all workers or none.
      const double share = static_cast<double>(js.slice_units) / p.mig.units_per_gpu;
      sched::SliceSnapshot s = *slices;
      sched::CapacitySnapshot::Fork fork(snap);
      const int nodes_before = opt.nodes;
      double useful = 0;
      int placed = 0;
      for (; placed < d.workers_left; ++placed) {
        auto pick = s.Find(sched::PoolBit(pool), js.slice_units, *snap);
        if (!pick && opt.nodes < max_new_nodes) {
          const int slot = snap->AddNode((*next_template_id)--, pool, p.type.gpus, p.type.gpus);
          s.AddNode(slot, pool, p.mig.units_per_gpu, {}, p.type.gpus);
          ++opt.nodes;
          pick = s.Find(sched::PoolBit(pool), js.slice_units, *snap);
        }
        if (!pick) break;
        s.Take(*pick, js.slice_units, snap);
        if (pick->slot >= first_new_slot) useful += share;
      }
      if (placed < d.workers_left) {
        opt.nodes = nodes_before;  // the fork drops the nodes it added
        continue;
      }
      fork.Commit();
      *slices = std::move(s);
      served(i, placed, useful);
      continue;
    }
    const int g = d.gpus_per_worker;
    const double per_worker = d.slice_units > 0 ? static_cast<double>(d.slice_units) / 7 : g;
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
    int on_new = 0;
    for (const auto& sh : shares) on_new += sh.slot >= first_new_slot ? sh.workers : 0;
    served(i, place, on_new * per_worker);
  }
  opt.new_gpus = int64_t{opt.nodes} * p.type.gpus;
  opt.cost_per_hour = opt.nodes * p.price_per_hour;
  return opt;
}

}  // namespace tide::autoscale
