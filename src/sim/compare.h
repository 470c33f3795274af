// Runs several policies over the same workload, each in its own simulator,
// in parallel threads, and returns their results in the order given.
#ifndef TIDE_SIM_COMPARE_H_
#define TIDE_SIM_COMPARE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "autoscale/policy.h"
#include "core/status.h"
#include "model/cluster.h"
#include "sim/simulator.h"
#include "trace/reader.h"

namespace tide::sim {

// Opens a fresh reader over the workload; called once per policy, possibly
// from several threads at once.
using TraceFactory = std::function<Result<std::unique_ptr<trace::TraceReader>>()>;

struct CompareOptions {
  SimOptions sim;
  int threads = 0;  // 0: one per policy, at most the number of cores
  // One per policy, in order (not owned); each simulator reports into its own.
  SimProgress* progress = nullptr;
};

// Results in the order of `policies`. The first error wins.
Result<std::vector<SimOutput>> RunComparison(const model::ClusterSpec& spec,
                                             const std::vector<autoscale::PolicyProfile>& policies,
                                             const TraceFactory& open_trace, const CompareOptions& options);

// One simulation: a cluster (already adapted to the policy) and a policy.
struct SimTask {
  model::ClusterSpec spec;
  autoscale::PolicyProfile policy;
  SimOptions options;
};

// Runs independent simulations on `threads` threads (0: one per core);
// calls `done(i)` (from the worker thread) as each finishes. Results in
// task order; the first error wins.
Result<std::vector<SimOutput>> RunTasks(const std::vector<SimTask>& tasks, const TraceFactory& open_trace,
                                        int threads, const std::function<void(size_t)>& done = nullptr);

}  // namespace tide::sim

#endif  // TIDE_SIM_COMPARE_H_
