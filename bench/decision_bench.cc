// Google Benchmark for the decision core's hot paths: Scheduler::Schedule and
// Autoscaler::RunOnce on a cluster of N nodes with M pending jobs.
//
//   build/release/bench/decision_bench --benchmark_filter=RunOnce
#include <vector>

#include "autoscale/autoscaler.h"
#include "benchmark/benchmark.h"
#include "core/rng.h"
#include "sched/scheduler.h"
#include "testutil/builders.h"

namespace tide {
namespace {

// N 8-GPU nodes, three quarters busy with 1- to 8-GPU jobs, and M pending jobs.
struct World {
  model::ClusterSpec spec;
  model::ClusterState state;
};

World MakeWorld(int nodes, int pending) {
  World w;
  w.spec = testing::Spec({testing::Pool("od8", 8, model::Tier::kOnDemand, 100, 0, nodes * 2),
                          testing::Pool("od2", 2, model::Tier::kOnDemand, 27, 0, nodes)});
  w.state.spec = &w.spec;
  Rng rng(42);
  model::JobId id = 1;
  for (int n = 0; n < nodes; ++n) {
    w.state.nodes.push_back(testing::ReadyNode(n + 1, 0, 8, 8, 0));
    if (n % 4 == 3) continue;
    int used = 0;
    while (used < 8) {
      const int g = std::min<int>(8 - used, static_cast<int>(rng.UniformInt(1, 8)));
      testing::AddRunning(&w.state, testing::Pending(id++, g, 1), {{n + 1, 1}}, rng.UniformInt(600, 36000));
      used += g;
    }
  }
  // Enough pending work that nothing fits: gangs of 8-GPU workers and small jobs.
  for (int j = 0; j < pending; ++j) {
    const bool gang = rng.Bernoulli(0.3);
    w.state.jobs.push_back(testing::Pending(id++, gang ? 8 : static_cast<int>(rng.UniformInt(1, 4)),
                                            gang ? static_cast<int>(rng.UniformInt(1 + nodes / 4, nodes)) : 1,
                                            rng.UniformInt(0, 600), rng.UniformInt(60, 36000),
                                            static_cast<int>(rng.UniformInt(0, 2))));
  }
  return w;
}

void BM_Schedule(benchmark::State& st) {
  const World w = MakeWorld(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)));
  const sched::Scheduler s({});
  for (auto _ : st) benchmark::DoNotOptimize(s.Schedule(w.state, testing::At(600)));
}

void BM_RunOnce(benchmark::State& st) {
  const World w = MakeWorld(static_cast<int>(st.range(0)), static_cast<int>(st.range(1)));
  const auto as = autoscale::Autoscaler::Make({});
  for (auto _ : st) benchmark::DoNotOptimize(as->RunOnce(w.state, testing::At(600)));
}

BENCHMARK(BM_Schedule)->ArgsProduct({{100, 1000}, {100, 1000}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RunOnce)->ArgsProduct({{100, 1000}, {100, 1000}})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tide

BENCHMARK_MAIN();
