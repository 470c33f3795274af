#include "backends/factory.h"

#include "backends/slurm/slurm_backend.h"
#include "core/strings.h"

namespace tide::backends {

Result<Backend> MakeBackend(const config::Config& config) {
  if (config.live.backend == "kubernetes") {
    // Its settings (live.kubernetes) are read and checked; the backend itself
    // is issue 33's work in progress.
    return absl::UnimplementedError(StrCat(config.source,
                                           ": live.backend: kubernetes: the Kubernetes backend is not in this build "
                                           "yet (its settings are read and checked: docs/kubernetes.md)"));
  }
  if (config.live.backend != "slurm") {
    return absl::InvalidArgumentError(
        StrCat(config.source, ": live.backend: unknown backend '", config.live.backend, "'; known: slurm"));
  }
  TIDE_ASSIGN_OR_RETURN(SlurmBackendOptions options, SlurmBackendOptionsFor(config));
  size_t nodes = 0, pools = 0;
  for (const auto& hosts : options.pool_hosts) {
    nodes += hosts.size();
    pools += hosts.empty() ? 0 : 1;
  }
  Backend b;
  b.summary = StrCat("slurm, ", nodes, " Slurm nodes in ", pools, " pools");
  b.runner = std::make_unique<SystemCommandRunner>(SlurmEnvironment(config));
  b.manager = std::make_unique<SlurmBackend>(std::move(options), b.runner.get());
  return b;
}

std::vector<std::string> BackendEnvironment(const config::Config& config) {
  return config.live.backend == "slurm" ? SlurmEnvironment(config) : std::vector<std::string>{};
}

}  // namespace tide::backends
