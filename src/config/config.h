// Configuration: one YAML file describing the cluster (instance types, pools,
// prices), priority classes, the simulation and every policy's options.
// docs/configuration.md is the reference; every default is the mission's
// number. Errors name the file, line, column and field:
//   cluster.yaml:14:16: pools[1].max_nodes: must be >= min_nodes (2), got 1
#ifndef TIDE_CONFIG_CONFIG_H_
#define TIDE_CONFIG_CONFIG_H_

#include <optional>
#include <string>
#include <vector>

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

// The spot supply trace `simulation.spot.supply` names. Parsing only records
// it; ReadSupplyTraces reads it into the world's spot supply series.
struct SupplyTraceFile {
  std::string path;              // resolved against the configuration's folder
  std::string source;            // as written in the configuration
  std::string format = "auto";   // simulation.spot.supply_format
  // Where it is named, "cluster.yaml:4:13: simulation.spot.supply": the
  // start of any error about the trace.
  std::string where;
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
  // Its spot supply series stays empty until ReadSupplyTraces.
  sim::WorldOptions world;
  std::optional<SupplyTraceFile> supply_trace;  // none: no supply trace
};

struct Config {
  std::string source;  // the file it came from
  model::ClusterSpec cluster;
  autoscale::PolicyDefaults policies;
  SimulationSettings simulation;
  JobDefaults jobs;
  LiveSettings live;  // `tide run` only
  // Things the file says in a way that still works but has changed, one
  // line each, "cluster.yaml:14:5: live.slurm.classes is now
  // live.jobs.classes; ...": the commands print them ("tide: note: ...").
  std::vector<std::string> notes;
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

// Reads and validates a configuration file, then the files it names
// (ReadSupplyTraces). NotFound if the file cannot be opened;
// InvalidArgument, naming the file, line, column and field, if it or a file
// it names is not valid.
Result<Config> LoadConfig(const std::string& path);
// Parses and validates configuration text; `name` stands for the file in
// error messages, and relative paths count from its folder. Reads no
// file: a spot supply trace is only recorded (SimulationSettings::
// supply_trace); ReadSupplyTraces loads it.
Result<Config> ParseConfig(const std::string& text, const std::string& name);
// Reads the spot supply trace the configuration names, if any, into
// config->simulation.world.spot (supply, supply_source). InvalidArgument
// "<config>:<line>:<col>: simulation.spot.supply: <trace>:<line>: <what>"
// if it cannot be read or does not parse; `config` is then unchanged.
Status ReadSupplyTraces(Config* config);

}  // namespace tide::config

#endif  // TIDE_CONFIG_CONFIG_H_
