// Google Benchmark for the decision core's hot paths: Scheduler::Schedule and
// Autoscaler::RunOnce on a cluster of N nodes with M pending jobs, a quiet
// pass with consolidation on, and the simulator's event queue.
//
//   build/release/bench/decision_bench --benchmark_filter=RunOnce
//   build/release/bench/decision_bench --benchmark_repetitions=20
//       --benchmark_report_aggregates_only=true   (one command: docs/performance.md's table)
#include <algorithm>
#include <vector>

#include "autoscale/autoscaler.h"
#include "benchmark/benchmark.h"
#include "core/rng.h"
#include "model/state_index.h"
#include "sched/scheduler.h"
#include "sim/event_queue.h"
#include "testutil/builders.h"

namespace tide {
namespace {

// N 8-GPU nodes (a fifth of them spot), three quarters busy with 1- to 8-GPU
// jobs, and M pending jobs shaped like the public traces' (the largest ITP
// job has 64 GPUs): three in ten are gangs of 2-8 workers of 8 GPUs, the
// rest 1-4 GPUs, a third preemptible, one in ten small ones elastic. Far
// more is pending than fits, and the pools may grow to twice the cluster:
// both calls scan every pending job, and RunOnce buys up to the pools' max
// and reports the rest as waiting.
struct World {
  model::ClusterSpec spec;
  model::ClusterState state;
};

World MakeWorld(int nodes, int pending) {
  World w;
  w.spec = testing::Spec({testing::Pool("od8", 8, model::Tier::kOnDemand, 100, 0, nodes * 2),
                          testing::Pool("od2", 2, model::Tier::kOnDemand, 27, 0, nodes),
                          testing::Pool("spot8", 8, model::Tier::kSpot, 25, 0, nodes)});
  w.state.spec = &w.spec;
  w.state.pools.resize(w.spec.pools.size());
  Rng rng(42);
  model::JobId id = 1;
  for (int n = 0; n < nodes; ++n) {
    const int pool = n % 5 == 4 ? 2 : 0;
    w.state.nodes.push_back(testing::ReadyNode(n + 1, pool, 8, 8, 0));
    if (n % 4 == 3) continue;
    int used = 0;
    while (used < 8) {
      const int g = std::min<int>(8 - used, static_cast<int>(rng.UniformInt(1, 8)));
      model::Job j = testing::Pending(id++, g, 1, 0, 36000, pool == 2 ? 2 : 1);
      j.spec.preemptible = pool == 2;
      testing::AddRunning(&w.state, std::move(j), {{n + 1, 1}}, rng.UniformInt(600, 36000));
      used += g;
    }
  }
  // Enough pending work that nothing fits: gangs of 8-GPU workers and small jobs.
  for (int j = 0; j < pending; ++j) {
    const bool gang = rng.Bernoulli(0.3);
    const int cls = static_cast<int>(rng.UniformInt(0, 2));
    model::Job job = testing::Pending(id++, gang ? 8 : static_cast<int>(rng.UniformInt(1, 4)),
                                      gang ? static_cast<int>(rng.UniformInt(2, 8)) : 1,
                                      rng.UniformInt(0, 600), rng.UniformInt(60, 36000), cls);
    job.spec.preemptible = cls == 2;
    if (!gang && rng.Bernoulli(0.1)) {  // elastic searches
      job.spec.min_workers = 1;
      job.spec.max_workers = 4;
      job.spec.async = true;
    }
    w.state.jobs.push_back(std::move(job));
  }
  return w;
}

// tide's options with the optional mechanisms switched on too.
autoscale::AutoscalerOptions EveryPolicyOn() {
  autoscale::AutoscalerOptions o;
  o.forecast.enabled = true;
  return o;
}

void BM_Schedule(benchmark::State& st) {
  const World w = MakeWorld(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)));
  const sched::Scheduler s({});
  for (auto _ : st) benchmark::DoNotOptimize(s.Schedule(w.state, testing::At(600)));
}

void BM_RunOnce(benchmark::State& st) {
  const World w = MakeWorld(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)));
  const auto as = autoscale::Autoscaler::Make(EveryPolicyOn());
  for (auto _ : st) benchmark::DoNotOptimize(as->RunOnce(w.state, testing::At(600)));
}

// A pass with no job waiting and consolidation on: the kind of pass a
// simulation runs most. Every running job checkpoints. Arg 1: 0
// consolidation off; 1 on, reading the cluster by a scan; 2 on, reading its
// view from a state index kept with placement() (as the simulator does).
// Every variant has an index for the other steps. Arg 2: 0, every busy node
// is full (no job has room elsewhere: the pass only sets its wake-ups); 1,
// one job in six has ended, so that many nodes have GPUs free and the pass
// weighs what-ifs and empties nodes.
void BM_Consolidate(benchmark::State& st) {
  World w = MakeWorld(static_cast<int>(st.range(0)), 0);
  std::vector<model::Job> kept;
  int k = 0;
  for (auto& j : w.state.jobs) {
    if (st.range(2) == 1 && k++ % 6 == 5) {
      for (auto& n : w.state.nodes) {
        if (n.id == j.alloc.front().node) n.free_gpus += j.spec.gpus();
      }
      continue;
    }
    j.spec.checkpoint.interval = Minutes(30);
    kept.push_back(std::move(j));
  }
  w.state.jobs = std::move(kept);
  autoscale::AutoscalerOptions o = EveryPolicyOn();
  o.consolidation.enabled = st.range(1) > 0;
  const model::StateIndex index = model::StateIndex::Build(w.state, /*placement=*/st.range(1) == 2);
  w.state.index = &index;
  const auto as = autoscale::Autoscaler::Make(o);
  for (auto _ : st) benchmark::DoNotOptimize(as->RunOnce(w.state, testing::At(3600)));
}

// Push N events at random times, then pop them all: the simulator's pattern
// of scheduling ends, boots and ticks ahead and taking them in order.
void BM_EventQueue(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0));
  Rng rng(7);
  std::vector<int64_t> times(n);
  for (auto& t : times) t = rng.UniformInt(0, 30 * 86400);
  for (auto _ : st) {
    sim::EventQueue q;
    for (int i = 0; i < n; ++i) q.Push(testing::At(times[i]), sim::EventKind::kJobEnd, i);
    while (!q.empty()) benchmark::DoNotOptimize(q.Pop());
  }
  st.SetItemsProcessed(st.iterations() * n);
}

// The grid: 1,000 and 10,000 nodes against 1,000, 10,000 and 100,000
// pending jobs; the 100-node sizes are the CI smoke step's.
void Grid(benchmark::internal::Benchmark* b) {
  b->Args({100, 100});
  for (int nodes : {1000, 10000}) {
    for (int pending : {1000, 10000, 100000}) b->Args({nodes, pending});
  }
  b->ArgNames({"nodes", "pending"});
}

// With --benchmark_repetitions=N, the 99th percentile of the N repetitions'
// times (nearest rank) beside Google Benchmark's mean, median and stddev.
double P99(const std::vector<double>& v) {
  std::vector<double> s = v;
  std::sort(s.begin(), s.end());
  const size_t rank = (s.size() * 99 + 99) / 100;  // ceil(0.99 n)
  return s.empty() ? 0 : s[std::max<size_t>(rank, 1) - 1];
}

BENCHMARK(BM_Schedule)->Apply(Grid)->Unit(benchmark::kMillisecond)->ComputeStatistics("p99", P99);
BENCHMARK(BM_RunOnce)->Apply(Grid)->Unit(benchmark::kMillisecond)->ComputeStatistics("p99", P99);
BENCHMARK(BM_Consolidate)
    ->ArgsProduct({{100, 1000, 10000}, {0, 1, 2}, {0, 1}})
    ->ArgNames({"nodes", "consolidation", "fragmented"})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EventQueue)->Arg(100)->Arg(10000)->Arg(1000000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tide

BENCHMARK_MAIN();
