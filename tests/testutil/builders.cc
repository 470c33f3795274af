#include "testutil/builders.h"

#include <cstdlib>
#include <fstream>

#include "core/strings.h"

namespace tide::testing {

std::string WriteTextFile(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return path;
}

model::NodePool Pool(std::string name, int gpus, model::Tier tier, double price, int min_nodes, int max_nodes,
                     int64_t boot) {
  model::NodePool p;
  p.name = std::move(name);
  p.type.name = StrCat("type", gpus);
  p.type.gpus = gpus;
  p.tier = tier;
  p.price_per_hour = price;
  p.min_nodes = min_nodes;
  p.max_nodes = max_nodes;
  p.boot_delay.kind = model::BootDelay::Kind::kFixed;
  p.boot_delay.min = p.boot_delay.max = Seconds(boot);
  return p;
}

model::ClusterSpec Spec(std::vector<model::NodePool> pools) {
  model::ClusterSpec s;
  s.pools = std::move(pools);
  s.priority_classes = {{"high", 100, false, false}, {"normal", 50, false, false}, {"low", 10, true, false}};
  s.default_priority_class = 1;
  return s;
}

model::JobSpec JobSpecOf(std::string name, int64_t submit, int gpus_per_worker, int workers, int64_t runtime,
                         int priority_class) {
  model::JobSpec j;
  j.name = std::move(name);
  j.submit = At(submit);
  j.gpus_per_worker = gpus_per_worker;
  j.workers = workers;
  j.runtime = Seconds(runtime);
  j.priority_class = priority_class;
  j.preemptible = priority_class == 2;
  return j;
}

model::Job Pending(model::JobId id, int gpus_per_worker, int workers, int64_t submit, int64_t runtime,
                   int priority_class) {
  model::Job j;
  j.id = id;
  j.spec = JobSpecOf(StrCat("j", id), submit, gpus_per_worker, workers, runtime, priority_class);
  j.priority = priority_class == 0 ? 100 : priority_class == 1 ? 50 : 10;
  j.state = model::JobState::kPending;
  return j;
}

model::Node ReadyNode(model::NodeId id, int pool, int gpus, int free, int64_t idle_since) {
  model::Node n;
  n.id = id;
  n.name = StrCat("n", id);
  n.pool = pool;
  n.state = model::NodeState::kReady;
  n.gpus = gpus;
  n.free_gpus = free;
  n.ready_at = kT0;
  n.idle_since = free == gpus ? At(idle_since) : kInfiniteFuture;
  return n;
}

model::Node BootingNode(model::NodeId id, int pool, int gpus, int64_t ready_at) {
  model::Node n;
  n.id = id;
  n.name = StrCat("n", id);
  n.pool = pool;
  n.state = model::NodeState::kProvisioning;
  n.gpus = n.free_gpus = gpus;
  n.ready_at = At(ready_at);
  return n;
}

void AddRunning(model::ClusterState* state, model::Job job, std::vector<model::NodeShare> shares, int64_t end) {
  for (const auto& sh : shares) {
    for (auto& n : state->nodes) {
      if (n.id == sh.node) {
        n.free_gpus -= sh.workers * job.spec.gpus_per_worker;
        n.idle_since = kInfiniteFuture;
        if (n.free_gpus < 0) std::abort();  // a test bug: the node was not free
      }
    }
  }
  job.state = model::JobState::kRunning;
  job.alloc = std::move(shares);
  job.expected_end = At(end);
  state->jobs.push_back(std::move(job));
}

}  // namespace tide::testing
