// The Slurm backend's options from a configuration's live section: where
// the tools are, and which Slurm nodes each pool buys under.
#include <algorithm>
#include <map>

#include "backends/slurm/slurm_backend.h"
#include "core/strings.h"

namespace tide::backends {
namespace {

std::string BinPath(const std::string& dir, const std::string& tool) {
  return dir.empty() ? tool : StrCat(dir, "/", tool);
}

}  // namespace

std::vector<std::string> SlurmEnvironment(const config::Config& config) {
  std::vector<std::string> env;
  if (!config.live.slurm.conf.empty()) env.push_back(StrCat("SLURM_CONF=", config.live.slurm.conf));
  return env;
}

Result<SlurmBackendOptions> SlurmBackendOptionsFor(const config::Config& config) {
  const auto& slurm = config.live.slurm;
  SlurmBackendOptions o;
  o.commands.squeue = BinPath(slurm.bin_dir, "squeue");
  o.commands.sinfo = BinPath(slurm.bin_dir, "sinfo");
  o.commands.scontrol = BinPath(slurm.bin_dir, "scontrol");
  o.commands.scancel = BinPath(slurm.bin_dir, "scancel");
  o.commands.timeout = slurm.timeout;
  o.protect_marker = config.live.jobs.protect_marker;
  o.checkpoint_signal = config.live.jobs.checkpoint_signal;
  o.max_gpus_per_node = std::max(1, config.cluster.MaxGpusPerNode());
  const size_t pools = config.cluster.pools.size();
  o.pool_hosts.resize(pools);
  for (const auto& p : config.cluster.pools) o.pool_names.push_back(p.name);
  std::map<std::string, std::string> owner;
  for (const auto& [pool_name, list] : slurm.pool_nodes) {
    const int pool = config.cluster.PoolIndex(pool_name);
    const std::string where = StrCat(config.source, ": live.slurm.pools.", pool_name);
    if (pool < 0) return absl::InvalidArgumentError(StrCat(where, ": no pool is named '", pool_name, "'"));
    auto names = ExpandHostlist(list);
    if (!names.ok()) return absl::InvalidArgumentError(StrCat(where, ": ", Message(names.status())));
    for (const auto& n : *names) {
      auto [it, fresh] = owner.emplace(n, pool_name);
      if (!fresh) {
        return absl::InvalidArgumentError(
            StrCat(where, ": node '", n, "' is already in pool '", it->second, "'; a node belongs to one pool"));
      }
      o.pool_hosts[static_cast<size_t>(pool)].push_back(n);
    }
    const auto& p = config.cluster.pools[static_cast<size_t>(pool)];
    const int count = static_cast<int>(names->size());
    if (count < p.max_nodes) {
      return absl::InvalidArgumentError(StrCat(where, ": the pool may grow to ", p.max_nodes, " nodes (max_nodes) but '",
                                               list, "' names ", count, "; list at least max_nodes Slurm nodes"));
    }
  }
  return o;
}

}  // namespace tide::backends
