#include "providers/kwok/kwok_config.h"

#include <utility>

#include "backends/kubernetes/kube_config.h"
#include "backends/kubernetes/kube_http.h"
#include "core/strings.h"

namespace tide::providers {
namespace {

namespace kube = backends::kube;

// The provider with what it talks through; the rest forwards.
class OwningKwokProvider final : public CloudProvider {
 public:
  OwningKwokProvider(std::unique_ptr<kube::Transport> transport, KwokProvider::Options options)
      : transport_(std::move(transport)), client_(transport_.get()), provider_(std::move(options), &client_) {}

  std::string Name() const override { return provider_.Name(); }
  Result<Instance> Create(const CreateRequest& request, Timestamp now) override {
    return provider_.Create(request, now);
  }
  Status Delete(const std::string& instance_id, const std::string& idempotency_key, Timestamp now) override {
    return provider_.Delete(instance_id, idempotency_key, now);
  }
  Result<std::vector<Instance>> List(Timestamp now) override { return provider_.List(now); }
  Result<std::vector<Interruption>> Interruptions(Timestamp now) override { return provider_.Interruptions(now); }

 private:
  std::unique_ptr<kube::Transport> transport_;
  kube::Client client_;
  KwokProvider provider_;
};

}  // namespace

KwokProvider::Options KwokOptionsFor(const config::Config& config) {
  KwokProvider::Options o;
  o.label_prefix = config.live.kubernetes.label_prefix;
  for (const model::NodePool& pool : config.cluster.pools) {
    KwokProvider::PoolOptions p;
    p.gpus = pool.type.gpus;
    p.cpus = pool.type.cpus;
    p.memory_gib = pool.type.memory_gib;
    p.capacity_type = std::string(model::TierName(pool.tier));
    o.pools[pool.name] = std::move(p);
  }
  return o;
}

Result<std::unique_ptr<CloudProvider>> MakeKwokProvider(const config::Config& config) {
  if (config.live.backend != "kubernetes") {
    return absl::FailedPreconditionError(
        StrCat(config.source, ": live.provider.kind: kwok makes Kubernetes Node objects, which join Kubernetes, not ",
               config.live.backend, "; use it with live.backend: kubernetes (or the local or exec provider)"));
  }
  const config::KubernetesSettings& k = config.live.kubernetes;
  Result<kube::Connection> connection = k.kubeconfig.empty()
                                            ? kube::InClusterConnection(kube::InClusterOptionsFromEnvironment())
                                            : kube::LoadKubeconfig(k.kubeconfig, k.context);
  if (!connection.ok()) return connection.status();
  kube::HttpOptions ho;
  ho.read_timeout = k.timeout;
  ho.connect_timeout = std::min(ho.connect_timeout, k.timeout);
  TIDE_ASSIGN_OR_RETURN(std::unique_ptr<kube::HttpTransport> transport, kube::HttpTransport::Create(*connection, ho));
  return std::unique_ptr<CloudProvider>(
      std::make_unique<OwningKwokProvider>(std::move(transport), KwokOptionsFor(config)));
}

}  // namespace tide::providers
