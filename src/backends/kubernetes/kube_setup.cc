#include "backends/kubernetes/kube_setup.h"

#include <utility>

#include "backends/kubernetes/kube_http.h"
#include "core/strings.h"

namespace tide::backends::kube {

Result<Connection> ConnectionFor(const config::Config& config) {
  const config::KubernetesSettings& k = config.live.kubernetes;
  if (!k.kubeconfig.empty()) return LoadKubeconfig(k.kubeconfig, k.context);
  Result<Connection> c = InClusterConnection(InClusterOptionsFromEnvironment());
  if (!c.ok()) {
    return Status(c.status().code(), StrCat(config.source, ": live.kubernetes: no kubeconfig given, and not inside a "
                                                           "cluster either: ", Message(c.status())));
  }
  return c;
}

TranslateOptions TranslateOptionsFor(const config::Config& config) {
  const config::KubernetesSettings& k = config.live.kubernetes;
  TranslateOptions o;
  o.scheduler_name = k.scheduler_name;
  o.label_prefix = k.label_prefix;
  o.namespaces = k.namespaces;
  o.notice_taints = k.notice_taints;
  o.autoscale_only = k.mode == "autoscale";
  const TideNames names(k.label_prefix);
  for (const auto& p : config.cluster.pools) o.pools.push_back(ShapeOfPool(names, p.name, model::TierName(p.tier)));
  for (const auto& c : config.cluster.priority_classes) o.class_values.push_back(c.value);
  return o;
}

Result<std::unique_ptr<KubernetesBackend>> MakeKubernetesBackend(const config::Config& config,
                                                                 std::shared_ptr<KubernetesRuntime>* runtime) {
  TIDE_ASSIGN_OR_RETURN(Connection connection, ConnectionFor(config));
  auto rt = std::make_shared<KubernetesRuntime>();
  HttpOptions verbs;
  verbs.read_timeout = config.live.kubernetes.timeout;
  TIDE_ASSIGN_OR_RETURN(auto verbs_transport, HttpTransport::Create(connection, verbs));
  rt->verbs = std::make_unique<CountedTransport>(std::move(verbs_transport), &rt->requests);
  // A watch stays open for a minute at a time and hears a bookmark about
  // every minute: reads may wait longer than a request's.
  InformerOptions informers;
  informers.watch_timeout = Seconds(60);
  informers.max_staleness = Seconds(150);
  HttpOptions watches;
  watches.read_timeout = Seconds(90);
  TIDE_ASSIGN_OR_RETURN(auto watch_transport, HttpTransport::Create(connection, watches));
  rt->watches = std::make_unique<CountedTransport>(std::move(watch_transport), &rt->requests);
  if (const auto& le = config.live.kubernetes.leader_election; !le.lease.empty()) {
    LeaseOptions lo;
    lo.namespace_name = le.namespace_name;
    lo.name = le.lease;
    lo.identity = le.identity.empty() ? DefaultIdentity() : le.identity;
    lo.duration = le.duration;
    lo.renew_deadline = le.renew_deadline;
    lo.retry = le.retry;
    rt->elector = std::make_unique<LeaseElector>(std::move(lo), rt->verbs.get(), &rt->clock, &rt->lease_sleeper);
  }
  // Pods of every namespace: those outside live.kubernetes.namespaces are
  // not tide's jobs, but they keep their nodes busy.
  rt->source = std::make_unique<InformerSource>(rt->watches.get(), &rt->clock, informers);
  KubernetesBackendOptions options;
  options.translate = TranslateOptionsFor(config);
  // Events and PodScheduled messages go beside the loop, four at a time.
  options.note_workers = 4;
  // A gang's bindings, eight at a time.
  options.bind_parallelism = 8;
  auto backend = std::make_unique<KubernetesBackend>(std::move(options), rt->verbs.get(), rt->source.get(), &rt->clock);
  *runtime = std::move(rt);
  return backend;
}

}  // namespace tide::backends::kube
