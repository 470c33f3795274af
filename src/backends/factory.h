// The workload-manager backend a configuration's live section names
// (live.backend: "slurm" or "kubernetes"), with what it runs on.
#ifndef TIDE_BACKENDS_FACTORY_H_
#define TIDE_BACKENDS_FACTORY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/leadership.h"
#include "backends/workload.h"
#include "config/config.h"
#include "core/process.h"

namespace tide::backends {

struct Backend {
  // What the manager runs on besides (Kubernetes: its transports and watch
  // caches); destroyed after it.
  std::shared_ptr<void> resources;
  std::unique_ptr<CommandRunner> runner;  // what the backend runs its tools with (may be null)
  std::unique_ptr<WorkloadManager> manager;
  std::string summary;  // one line for `tide validate` and the start-up log
  // Leader election between replicas (owned by `resources`); null: this
  // replica always acts.
  Leadership* leadership = nullptr;
  // More /metrics text of the backend's own (Kubernetes: its requests to
  // the API server); may be empty.
  std::function<std::string()> metrics;
};

// InvalidArgument, naming the file and field, when the live section does not
// describe a backend that can run (a malformed host list, say).
Result<Backend> MakeBackend(const config::Config& config);

// The environment the workload manager's tools need (SLURM_CONF), for other
// commands that may call them (the exec provider's).
std::vector<std::string> BackendEnvironment(const config::Config& config);

}  // namespace tide::backends

#endif  // TIDE_BACKENDS_FACTORY_H_
