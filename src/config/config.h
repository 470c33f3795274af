// Configuration: one YAML file describing the cluster (instance types, pools,
// prices), priority classes, the simulation and every policy's options.
// docs/configuration.md is the reference; every default is the mission's
// number. Errors name the file, line, column and field:
//   cluster.yaml:14:16: pools[1].max_nodes: must be >= min_nodes (2), got 1
#ifndef TIDE_CONFIG_CONFIG_H_
#define TIDE_CONFIG_CONFIG_H_

#include <string>

#include "autoscale/policy.h"
#include "config/live.h"
#include "core/status.h"
#include "core/time.h"
#include "model/cluster.h"
#include "sim/world.h"

namespace tide::config {

// Defaults for jobs whose trace does not say (native traces may override
// them per job).
struct JobDefaults {
  model::JobPhases phases;
  model::CheckpointPolicy checkpoint;
};

struct SimulationSettings {
  uint64_t seed = 1;
  // Time zero for traces whose times are relative.
  Timestamp start = FromUnixSeconds(1767571200);  // 2026-01-05T00:00:00Z, a Monday
  // Multi-GPU jobs in ITP/Philly/native `gpus` are split into workers of at
  // most this many GPUs; 0 = the largest node of any pool.
  int gpus_per_worker_max = 0;
  // SWF traces count processors: a job of P processors asks for
  // ceil(P / swf_procs_per_gpu) GPUs.
  int swf_procs_per_gpu = 1;
  // The simulated world: spot behaviour, shared storage, elastic scaling.
  sim::WorldOptions world;
};

struct Config {
  std::string source;  // the file it came from
  model::ClusterSpec cluster;
  autoscale::PolicyDefaults policies;
  SimulationSettings simulation;
  JobDefaults jobs;
  LiveSettings live;  // `tide run` only
  // The time zone of the report's time axes and the live page (an IANA
  // name); empty: policies.tide.schedule.time_zone if set, else UTC.
  std::string time_zone;
  // The zone to show times in, by that rule.
  std::string DisplayTimeZone() const {
    if (!time_zone.empty()) return time_zone;
    return policies.tide.schedule.time_zone_name.empty() ? "UTC" : policies.tide.schedule.time_zone_name;
  }
};

// InvalidArgument ("unknown time zone 'X'; ...") unless `name` is an IANA
// time zone the tz database knows.
Status CheckTimeZone(const std::string& name);

// Reads and validates a configuration file.
Result<Config> LoadConfig(const std::string& path);
// The same, from text; `name` stands for the file in error messages.
Result<Config> ParseConfig(const std::string& text, const std::string& name);

}  // namespace tide::config

#endif  // TIDE_CONFIG_CONFIG_H_
