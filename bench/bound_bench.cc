// Google Benchmark for the offline lower bound (bound/bound.h): building the
// demand histogram and sweeping the reserved base, on N jobs over 110 days
// (Philly's size: 82,247 jobs, a peak in the thousands of GPUs).
//
//   build/release/bench/bound_bench
#include <vector>

#include "benchmark/benchmark.h"
#include "bound/bound.h"
#include "core/rng.h"

namespace tide {
namespace {

std::vector<bound::JobDemand> MakeJobs(int n) {
  Rng rng(7);
  const int64_t span = int64_t{110} * 86400;
  std::vector<bound::JobDemand> jobs;
  for (int i = 0; i < n; ++i) {
    const int64_t gpus = int64_t{1} << rng.UniformInt(0, 6);  // 1 .. 64
    jobs.push_back(
        {FromUnixSeconds(rng.UniformInt(0, span)), Seconds(rng.UniformInt(60, 3 * 86400)), gpus, rng.Bernoulli(0.3)});
  }
  return jobs;
}

void BM_Bound(benchmark::State& state) {
  const auto jobs = MakeJobs(static_cast<int>(state.range(0)));
  const bound::TierPrices prices{6.875, 12.5, 4.0};
  int64_t peak = 0;
  for (auto _ : state) {
    auto h = bound::BuildHistogram(FromUnixSeconds(0), jobs);
    auto b = bound::ComputeBound(*h, prices);
    benchmark::DoNotOptimize(b);
    peak = b->peak_gpus;
  }
  state.counters["peak_gpus"] = static_cast<double>(peak);
}

BENCHMARK(BM_Bound)->Arg(1000)->Arg(82247)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tide

BENCHMARK_MAIN();
