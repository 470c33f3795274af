// The `live:` section of a configuration: how `tide run` reaches the
// workload manager, the cloud, Prometheus and its own state. The simulator
// ignores it. docs/live.md is the reference.
#ifndef TIDE_CONFIG_LIVE_H_
#define TIDE_CONFIG_LIVE_H_

#include <string>
#include <vector>

#include "core/time.h"

namespace tide::config {

// A rule that gives Slurm jobs a tide priority class: by partition, by QOS,
// or both (both must match). The first matching rule wins.
struct ClassRule {
  std::string partition;  // empty: any
  std::string qos;        // empty: any
  std::string priority_class;
};

struct SlurmSettings {
  // SLURM_CONF for every Slurm command (empty: Slurm's own default).
  std::string conf;
  // Directory holding squeue, sinfo, scontrol and scancel (empty: PATH).
  std::string bin_dir;
  Duration timeout = Seconds(30);
  // Each pool's Slurm nodes, as a host list ("gpu[1-8]"), by pool name.
  std::vector<std::pair<std::string, std::string>> pool_nodes;
  std::vector<ClassRule> classes;
  // A job whose comment contains this is protected (never interrupted).
  std::string protect_comment = "tide:protected";
  // Sent to the batch step before tide interrupts a job; the job then has
  // `checkpoint_grace` to save and exit before it is requeued.
  std::string checkpoint_signal = "USR1";
  Duration checkpoint_grace = Seconds(60);
};

struct ProviderSettings {
  std::string kind = "local";  // local | exec
  // local: where instance records live, which slurmd to start.
  std::string state_dir;  // empty: <state file's directory>/local-provider
  std::string slurmd = "/usr/sbin/slurmd";
  // exec: argv arrays.
  std::vector<std::string> create, destroy, list, interruptions;
  Duration timeout = Seconds(60);
};

struct MetricsSettings {
  std::string prometheus;  // base URL; empty: no utilization data
  std::string metric = "DCGM_FI_DEV_GPU_UTIL";
  std::string node_label = "Hostname";
  std::string job_label = "hpc_job";
  double scale = 100;
};

struct HttpSettings {
  std::string address = "127.0.0.1";
  int port = 9464;  // 0: pick a free port (printed at start)
  // A file holding the bearer token for state-changing requests (empty:
  // they are refused).
  std::string token_file;
};

struct LiveSettings {
  bool present = false;  // the file has a `live:` section
  std::string state = "tide-state.db";  // the SQLite store, relative to the config file
  // How often the loop observes and decides (default: the tide policy's
  // scan_interval).
  Duration loop_interval{0};
  SlurmSettings slurm;
  ProviderSettings provider;
  MetricsSettings metrics;
  HttpSettings http;
};

}  // namespace tide::config

#endif  // TIDE_CONFIG_LIVE_H_
