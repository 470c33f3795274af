// The Kubernetes backend from a configuration's live section
// (live.kubernetes): how to reach the API server, the pools' node shapes and
// the classes' priorities it translates with. Shared with the kwok provider,
// which reaches the same API server.
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_SETUP_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_SETUP_H_

#include <memory>
#include <string>

#include "backends/kubernetes/kube_backend.h"
#include "backends/kubernetes/kube_config.h"
#include "backends/kubernetes/kube_counted.h"
#include "backends/kubernetes/kube_lease.h"
#include "config/config.h"

namespace tide::backends::kube {

// The kubeconfig's cluster and user (live.kubernetes.kubeconfig and
// context), or the pod's own service account when no kubeconfig is given.
Result<Connection> ConnectionFor(const config::Config& config);

// Pools (their label and capacity type), classes' values, namespaces,
// scheduler name and notice taints.
TranslateOptions TranslateOptionsFor(const config::Config& config);

// Everything the backend runs on: a transport for its verbs (requests time
// out after live.kubernetes.timeout), one for its watches (which stay open),
// the watch caches and a clock. Destroyed after the backend.
struct KubernetesRuntime {
  RealClock clock;
  RequestCounts requests;  // every request of both transports, for /metrics
  std::unique_ptr<Transport> verbs;
  std::unique_ptr<Transport> watches;
  std::unique_ptr<InformerSource> source;
  RealSleeper lease_sleeper;
  // live.kubernetes.leader_election, when a Lease is named; it uses `verbs`.
  std::unique_ptr<LeaseElector> elector;
};

// The backend and what it runs on. Reads the kubeconfig (or the service
// account's files); contacts the API server only when first observed.
Result<std::unique_ptr<KubernetesBackend>> MakeKubernetesBackend(const config::Config& config,
                                                                 std::shared_ptr<KubernetesRuntime>* runtime);

}  // namespace tide::backends::kube

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_SETUP_H_
