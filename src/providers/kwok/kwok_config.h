// The kwok provider from a configuration (`live.provider.kind: kwok`), so
// that `tide run` builds it without a word of Kubernetes of its own.
#ifndef TIDE_PROVIDERS_KWOK_KWOK_CONFIG_H_
#define TIDE_PROVIDERS_KWOK_KWOK_CONFIG_H_

#include <memory>

#include "config/config.h"
#include "providers/kwok/kwok_provider.h"

namespace tide::providers {

// One PoolOptions per configured pool: its instance type's GPUs, CPUs and
// memory, and its tier as the capacity type; no extra labels or taints.
// MIG pools advertise whole GPUs (tide slices them itself; a kwok node
// cannot be reconfigured). The label prefix is live.kubernetes.label_prefix.
KwokProvider::Options KwokOptionsFor(const config::Config& config);

// A KwokProvider that owns its connection to the API server: from
// live.kubernetes.kubeconfig (and context) when set, else in-cluster (the
// pod's service account), with live.kubernetes.timeout per request.
// FailedPrecondition when live.backend is not kubernetes (kwok nodes join
// Kubernetes, not Slurm); the connection's errors (a kubeconfig that cannot
// be read) otherwise.
Result<std::unique_ptr<CloudProvider>> MakeKwokProvider(const config::Config& config);

}  // namespace tide::providers

#endif  // TIDE_PROVIDERS_KWOK_KWOK_CONFIG_H_
