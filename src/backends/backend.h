// ClusterBackend: the workload manager tide drives (Slurm now). It observes
// the queue and the nodes and carries out the node and job actions of a
// plan. Only the controller's actuator calls the acting methods.
#ifndef TIDE_BACKENDS_BACKEND_H_
#define TIDE_BACKENDS_BACKEND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/time.h"

namespace tide::backends {

// A node as the workload manager reports it.
struct ObservedNode {
  std::string name;
  // Base state, lower case: "idle", "mixed", "allocated", "down", "drained",
  // "draining", "completing", "future", "unknown", ... (Slurm's words).
  std::string state;
  // Flags, upper case: "DRAIN", "CLOUD", "POWERED_DOWN", "POWERING_UP",
  // "POWERING_DOWN", "POWER_DOWN", "NOT_RESPONDING", "COMPLETING", ...
  std::vector<std::string> flags;
  int gpus = 0;       // configured GPUs (gres gpu count)
  int gpus_used = 0;  // GPUs allocated to jobs now
  std::string reason;  // the drain/down reason, "" if none
  std::vector<std::string> partitions;

  bool Has(std::string_view flag) const;
  // Drained or draining (the DRAIN flag, or base state drained/draining).
  bool Drained() const;
  bool PoweredDown() const;  // POWERED_DOWN (and not POWERING_UP)
  // slurmd has registered and answers: not down, not powered down or
  // powering up, not NOT_RESPONDING.
  bool Responding() const;
};

struct ObservedJob {
  int64_t id = 0;
  std::string name;
  // Upper case: "PENDING", "CONFIGURING", "RUNNING", "COMPLETING",
  // "COMPLETED", "FAILED", "CANCELLED", "PREEMPTED", "NODE_FAIL", ...
  std::string state;
  std::string partition;
  std::string qos;
  std::string comment;
  std::string user;
  std::vector<std::string> nodes;  // expanded host list; empty while pending
  int node_count = 1;
  int gpus_per_node = 0;  // from the gres request; 0 if it asks for none
  int gpus = 0;           // in total
  Timestamp submit{};
  Timestamp start{};           // 0 (epoch) if it has not started
  Duration time_limit{};       // 0: no limit
  int restarts = 0;            // Slurm's restart_cnt
  std::string state_reason;    // why it pends ("Resources", "Priority", ...)
  bool requeue = true;         // may be requeued
};

struct Observation {
  std::vector<ObservedNode> nodes;
  std::vector<ObservedJob> jobs;
};

// Contract:
// - Observe returns Unavailable when the workload manager does not answer
//   and InvalidArgument when its reply does not parse (the message says
//   which command and what was wrong). The caller then acts on nothing.
// - Each action returns OK only when the workload manager accepted it.
// - Not thread-safe.
class ClusterBackend {
 public:
  virtual ~ClusterBackend() = default;
  virtual Result<Observation> Observe() = 0;
  virtual Status Drain(const std::string& node, const std::string& reason) = 0;
  virtual Status Undrain(const std::string& node) = 0;
  virtual Status PowerUp(const std::string& node) = 0;
  virtual Status PowerDown(const std::string& node) = 0;
  // Puts a running job back in the queue (it is killed and restarts later).
  virtual Status Requeue(int64_t job) = 0;
  virtual Status Cancel(int64_t job) = 0;
  // Sends `signal` ("USR1") to the job's batch step: its checkpoint signal.
  virtual Status Signal(int64_t job, const std::string& signal) = 0;
};

}  // namespace tide::backends

#endif  // TIDE_BACKENDS_BACKEND_H_
