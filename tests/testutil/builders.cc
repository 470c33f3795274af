#include "testutil/builders.h"

#include <cstdlib>
#include <fstream>

#include "core/rng.h"
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
  job.alloc.assign(shares.begin(), shares.end());
  job.expected_end = At(end);
  state->jobs.push_back(std::move(job));
}

}  // namespace tide::testing

namespace tide::testing {

model::ClusterSpec RandomSpec() {
  return Spec({Pool("reserved8", 8, model::Tier::kReserved, 55, 4, 4), Pool("od8", 8, model::Tier::kOnDemand, 100, 0, 40),
               Pool("spot8", 8, model::Tier::kSpot, 30, 0, 20), Pool("od4", 4, model::Tier::kOnDemand, 52, 0, 10)});
}

model::ClusterState RandomState(const model::ClusterSpec* spec, uint64_t seed) {
  Rng rng(seed);
  model::ClusterState s;
  s.spec = spec;
  s.pools.resize(spec->pools.size());
  const int64_t now = 3600;
  model::NodeId node_id = 1;
  const int nodes = static_cast<int>(rng.UniformInt(0, 30));
  for (int i = 0; i < nodes; ++i) {
    const int pool = static_cast<int>(rng.UniformInt(0, 3));
    const int gpus = spec->pools[pool].type.gpus;
    model::Node n = rng.Bernoulli(0.2) ? BootingNode(node_id, pool, gpus, now + rng.UniformInt(-30, 300))
                                       : ReadyNode(node_id, pool, gpus, gpus, now - rng.UniformInt(0, 1200));
    if (n.state == model::NodeState::kReady && rng.Bernoulli(0.1)) n.state = model::NodeState::kDraining;
    if (pool == 2 && rng.Bernoulli(0.3)) n.interrupt_at = At(now + 120);
    n.created = At(now - rng.UniformInt(0, 7200));
    node_id += rng.UniformInt(1, 3);  // ids increase, with gaps
    s.nodes.push_back(std::move(n));
  }
  model::JobId job_id = 1;
  auto shape = [&](model::Job* j) {
    if (rng.Bernoulli(0.2)) {
      j->spec.gpus_per_worker = 8;
      j->spec.workers = static_cast<int>(rng.UniformInt(2, 4));
    } else {
      j->spec.gpus_per_worker = static_cast<int>(rng.UniformInt(1, 4));
      j->spec.workers = 1;
      if (rng.Bernoulli(0.25)) {
        j->spec.min_workers = 1;
        j->spec.max_workers = static_cast<int>(rng.UniformInt(2, 4));
        j->spec.async = rng.Bernoulli(0.5);
      }
    }
    j->spec.is_protected = rng.Bernoulli(0.05);
  };
  // Running work: jobs placed on ready (or draining, noticed) nodes with room.
  for (auto& n : s.nodes) {
    if (n.state == model::NodeState::kProvisioning || rng.Bernoulli(0.2)) continue;
    while (n.free_gpus > 0 && rng.Bernoulli(0.7)) {
      const int cls = static_cast<int>(rng.UniformInt(0, 2));
      model::Job j = Pending(job_id++, 1, 1, rng.UniformInt(0, now), rng.UniformInt(600, 36000), cls);
      shape(&j);
      j.spec.gpus_per_worker = std::min(j.spec.gpus_per_worker, n.free_gpus);
      const int workers = std::max(1, std::min(n.free_gpus / j.spec.gpus_per_worker,
                                               static_cast<int>(rng.UniformInt(1, j.spec.MaxWorkers()))));
      if (!j.spec.elastic()) j.spec.workers = workers;
      j.spec.preemptible = cls == 2 || n.pool == 2;
      j.workers = workers;
      j.started = At(now - rng.UniformInt(0, 3000));
      j.progress = static_cast<double>(rng.UniformInt(0, 3000));
      j.saved = j.progress - static_cast<double>(rng.UniformInt(0, 1800));
      n.free_gpus -= workers * j.spec.gpus_per_worker;
      n.idle_since = kInfiniteFuture;
      j.alloc = {{n.id, workers}};
      const int64_t r = rng.UniformInt(0, 9);
      j.state = r == 0 ? model::JobState::kStopping : r == 1 ? model::JobState::kStarting : model::JobState::kRunning;
      j.expected_end = At(now + rng.UniformInt(-60, 20000));
      if (rng.Bernoulli(0.1)) {
        j.last_resize = At(now - rng.UniformInt(0, 1200));
        j.workers_before_resize = std::max(1, workers - 1);
      }
      s.jobs.push_back(std::move(j));
    }
  }
  const int pending = static_cast<int>(rng.UniformInt(0, 25));
  for (int i = 0; i < pending; ++i) {
    model::Job j = Pending(job_id++, 1, 1, now - rng.UniformInt(0, 900), rng.UniformInt(60, 36000),
                           static_cast<int>(rng.UniformInt(0, 2)));
    shape(&j);
    if (rng.Bernoulli(0.1)) j.restarts = 1;
    s.jobs.push_back(std::move(j));
  }
  // Memory order carries no meaning: shuffle it.
  for (size_t i = s.jobs.size(); i > 1; --i) {
    std::swap(s.jobs[i - 1], s.jobs[static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(i) - 1))]);
  }
  return s;
}

}  // namespace tide::testing
