// Builders for the value types, so tests state only what matters to them.
#ifndef TIDE_TESTS_TESTUTIL_BUILDERS_H_
#define TIDE_TESTS_TESTUTIL_BUILDERS_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/time.h"
#include "model/cluster.h"

namespace tide::testing {

// Writes `text` to `path` (replacing it) and returns `path`.
std::string WriteTextFile(const std::string& path, std::string_view text);

// 2026-01-05T00:00:00Z, the default trace start.
inline constexpr Timestamp kT0 = FromUnixSeconds(1767571200);
inline Timestamp At(int64_t seconds) { return kT0 + Seconds(seconds); }

// A pool with `gpus` per node; boot delay fixed at `boot` seconds.
model::NodePool Pool(std::string name, int gpus, model::Tier tier, double price, int min_nodes, int max_nodes,
                     int64_t boot = 180);

// A spec with the given pools and the classes high(100), normal(50), low(10, preemptible).
model::ClusterSpec Spec(std::vector<model::NodePool> pools);

model::JobSpec JobSpecOf(std::string name, int64_t submit, int gpus_per_worker, int workers, int64_t runtime,
                         int priority_class = 1);

// A pending job (priority from the class index: 0 high, 1 normal, 2 low).
model::Job Pending(model::JobId id, int gpus_per_worker, int workers, int64_t submit = 0, int64_t runtime = 3600,
                   int priority_class = 1);

model::Node ReadyNode(model::NodeId id, int pool, int gpus, int free, int64_t idle_since = 0);
model::Node BootingNode(model::NodeId id, int pool, int gpus, int64_t ready_at);

// Marks `job` running on `shares` until `end`, and takes the GPUs from the nodes in `state`.
void AddRunning(model::ClusterState* state, model::Job job, std::vector<model::NodeShare> shares, int64_t end);

// A random cluster for property tests of the decision core: pools of
// reserved, on-demand and spot 8-GPU nodes and a 4-GPU on-demand pool (the
// spec is RandomSpec()); nodes ready, booting, draining or under notice, some
// idle; jobs pending (gangs, small, elastic, asynchronous, preemptible,
// protected), starting, running and stopping, on nodes whose free GPUs agree
// with them. Node ids increase with position; `now` is At(3600).
model::ClusterSpec RandomSpec();
model::ClusterState RandomState(const model::ClusterSpec* spec, uint64_t seed);

}  // namespace tide::testing

#endif  // TIDE_TESTS_TESTUTIL_BUILDERS_H_
