#include "backends/factory.h"

#include "backends/kubernetes/kube_setup.h"
#include "backends/slurm/slurm_backend.h"
#include "core/strings.h"

namespace tide::backends {

Result<Backend> MakeBackend(const config::Config& config) {
  if (config.live.backend == "kubernetes") {
    std::shared_ptr<kube::KubernetesRuntime> runtime;
    TIDE_ASSIGN_OR_RETURN(auto manager, kube::MakeKubernetesBackend(config, &runtime));
    Backend b;
    const auto& k = config.live.kubernetes;
    b.summary = StrCat("kubernetes, ", k.kubeconfig.empty() ? "in-cluster" : k.kubeconfig,
                       k.mode == "autoscale" ? ", autoscale-only: GPU pods of any scheduler"
                                             : StrCat(", pods of scheduler ", k.scheduler_name),
                       k.namespaces.empty() ? " in every namespace" : StrCat(" in ", StrJoin(k.namespaces, ", ")));
    b.leadership = runtime->elector.get();
    if (b.leadership != nullptr) {
      const auto& le = k.leader_election;
      b.summary += StrCat(", leader election through Lease ", le.namespace_name, "/", le.lease);
    }
    b.metrics = [counts = &runtime->requests] { return counts->Exposition(); };
    b.resources = std::move(runtime);
    b.manager = std::move(manager);
    return b;
  }
  if (config.live.backend != "slurm") {
    return absl::InvalidArgumentError(
        StrCat(config.source, ": live.backend: unknown backend '", config.live.backend, "'; known: slurm, kubernetes"));
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
