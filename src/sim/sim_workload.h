// SimWorkload: the simulator's WorkloadManager (backends/workload.h), over
// its simulated cluster and cloud, so that the applier carries out the
// simulator's plans with the same verbs it uses on a real manager. Tide is
// the simulated cluster's scheduler (Bind); stops are evictions (the
// simulated framework checkpoints within its checkpoint cost, whatever the
// grace; the simulator does not model a grace shorter than that); elastic
// jobs resize in place. Keys: a job's is its simulator id in decimal, a
// node's its name. The verbs act at the time set with set_now. Observe
// reports a cordon with the cause it was given. RegisterNode names the node
// the cloud creates next: it cannot name a second before that one is
// created, and answers FailedPrecondition when `taken` holds the name.
#ifndef TIDE_SIM_SIM_WORKLOAD_H_
#define TIDE_SIM_SIM_WORKLOAD_H_

#include <string>
#include <vector>

#include "backends/workload.h"
#include "sim/sim_cloud.h"
#include "sim/sim_cluster.h"
#include "sim/sim_state.h"

namespace tide::sim {

class SimWorkload final : public backends::WorkloadManager {
 public:
  // Borrowed, outliving this.
  SimWorkload(SimState* sim, SimCluster* cluster, SimCloud* cloud);
  void set_now(Timestamp now) { now_ = now; }

  const backends::Capabilities& capabilities() const override { return caps_; }
  Result<backends::Observation> Observe() override;
  Status Cordon(const std::string& node, const backends::Reason& why) override;
  Status Uncordon(const std::string& node) override;
  Status Evict(const std::string& job, Duration grace, const backends::Reason& why) override;
  Status Checkpoint(const std::string& job) override;
  Status Requeue(const std::string& job) override;
  Status Cancel(const std::string& job, Duration grace, const backends::Reason& why) override;
  Status Bind(const std::string& job, const std::vector<backends::NodeWorkers>& where,
              const backends::Reason& why) override;
  Status Resize(const std::string& job, const backends::ResizeOrder& order, const backends::Reason& why) override;
  Result<std::string> RegisterNode(int pool, const std::vector<std::string>& taken) override;
  Status RemoveNode(const std::string& node) override;

 private:
  Result<model::JobId> JobOf(std::string_view verb, const std::string& key) const;
  Result<model::NodeId> NodeOf(std::string_view verb, const std::string& name) const;
  // Stops a running job for `why` (the figures count it by cause).
  Status Stop(const std::string& key, const backends::Reason& why, bool cancel);

  SimState* sim_;
  SimCluster* cluster_;
  SimCloud* cloud_;
  backends::Capabilities caps_;
  Timestamp now_{};
};

}  // namespace tide::sim

#endif  // TIDE_SIM_SIM_WORKLOAD_H_
