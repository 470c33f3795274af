// CloudProvider: where tide buys and returns nodes. In cluster-autoscaler's
// vocabulary this is the cloud provider with its node groups; here a pool
// (model::NodePool) is the node group, and every instance carries the name
// of the workload manager's node it becomes (WorkloadManager::RegisterNode
// chose it).
//
// Implementations: local/ (each instance is a real slurmd on this machine),
// exec/ (user-configured commands for a cloud's CLI), kwok/ (Kubernetes Node
// objects that the test bed's kwok makes Ready), and the simulator's
// simulated cloud (sim/sim_cloud.h). tests/contract/ checks each against
// this contract.
#ifndef TIDE_PROVIDERS_PROVIDER_H_
#define TIDE_PROVIDERS_PROVIDER_H_

#include <string>
#include <vector>

#include "backends/workload.h"
#include "core/status.h"
#include "core/time.h"
#include "model/cluster.h"

namespace tide::providers {

// One node tide asked for.
struct CreateRequest {
  std::string pool;           // tide pool name
  std::string node;           // the node name it must join the workload manager as
  std::string instance_type;  // InstanceType::name
  model::Tier tier = model::Tier::kOnDemand;
  std::string region;
  // Unique per create decision. A second Create with the same key returns
  // the instance of the first and buys nothing (the call is idempotent).
  std::string idempotency_key;
  Duration boot_delay{};  // local and kwok providers: how long its "boot" takes
  backends::Reason why;   // why tide buys it (scale-up or forecast), for the provider's records
};

struct Instance {
  std::string id;    // the provider's id
  std::string node;  // the workload manager's node name
  std::string pool;
  std::string idempotency_key;
  std::string state;  // "pending" (booting), "running", "terminating"
  Timestamp created{};
};

// A spot interruption announced by the provider: the instance goes at `at`.
struct Interruption {
  std::string instance_id;
  std::string node;
  Timestamp at{};
};

// Contract for every implementation:
// - Calls may fail with Unavailable (provider unreachable, a garbage reply).
//   The caller must then take no destructive action on that information.
// - Create is idempotent on `idempotency_key`; Delete on the instance id
//   (deleting an instance that is already gone is OK).
// - List returns every instance the provider holds for tide, including ones
//   being created, so that after a crash tide can find what it bought.
// - Not thread-safe: the controller calls from one thread.
class CloudProvider {
 public:
  virtual ~CloudProvider() = default;
  virtual std::string Name() const = 0;  // "local", "exec", "simulated"
  virtual Result<Instance> Create(const CreateRequest& request, Timestamp now) = 0;
  virtual Status Delete(const std::string& instance_id, const std::string& idempotency_key,
                        Timestamp now) = 0;
  virtual Result<std::vector<Instance>> List(Timestamp now) = 0;
  // Interruption notices in force (announced and not yet past).
  virtual Result<std::vector<Interruption>> Interruptions(Timestamp now) = 0;
};

}  // namespace tide::providers

#endif  // TIDE_PROVIDERS_PROVIDER_H_
