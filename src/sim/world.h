// The simulated world beyond the decision core: how spot capacity behaves,
// how fast shared storage loads new nodes, and how elastic jobs scale.
// These describe the cluster's environment, not a policy; config/ fills them
// from the `simulation:` section.
#ifndef TIDE_SIM_WORLD_H_
#define TIDE_SIM_WORLD_H_

#include <string>
#include <vector>

#include "core/time.h"
#include "trace/spot.h"

namespace tide::sim {

struct SpotOptions {
  // Each spot node is reclaimed after an exponentially distributed time with
  // this mean (0: never). The Bamboo traces (AWS p3, g4dn, 2020) show 1.6-1.8
  // hours per node in a volatile period; 2 hours is the default.
  Duration mean_time_to_interrupt = Hours(2);
  // The provider's warning before it reclaims a node (AWS and GCP: about 2 minutes).
  Duration notice = Minutes(2);
  // A real availability series (../shared/traces/spot-bamboo). When it is
  // set, spot nodes beyond `available x scale` cannot be created, and nodes
  // above it are reclaimed (with notice) when it drops. It repeats over
  // the simulation. config::ReadSupplyTraces fills it (and supply_source)
  // from the trace the configuration names; parsing leaves it empty.
  std::vector<trace::SupplyPoint> supply;
  std::string supply_source;  // the trace as the configuration names it, for reports
  double supply_scale = 1.0;
};

// Shared storage (a parallel file system) that new nodes load a checkpoint
// or dataset from before they are useful (MISSION section 4). Off when
// load_gb is 0.
struct StorageOptions {
  double load_gb = 0;            // per node that joins
  double bandwidth_gbps = 10;    // aggregate, GB/s, shared by nodes loading at once
  double node_gbps = 2.5;        // one node's cap, GB/s (its network)
  bool prefetch = false;         // start loading when the node is requested, during boot
  int max_concurrent = 0;        // stagger: at most this many load at once (0: all)
};

struct ElasticOptions {
  // Throughput of an elastic job with w workers, relative to its requested
  // size n: (w / n)^exponent. 1.0 is linear scaling.
  double scaling_exponent = 0.9;
  // The re-rendezvous pause of a resize.
  Duration resize_pause = Seconds(60);
};

struct WorldOptions {
  SpotOptions spot;
  StorageOptions storage;
  ElasticOptions elastic;
};

}  // namespace tide::sim

#endif  // TIDE_SIM_WORLD_H_
