#include "sim/compare.h"
#include "core/strings.h"

#include <algorithm>
#include <atomic>
#include <thread>


namespace tide::sim {

Result<std::vector<SimOutput>> RunTasks(const std::vector<SimTask>& tasks, const TraceFactory& open_trace,
                                        int threads, const std::function<void(size_t)>& done) {
  const size_t n = tasks.size();
  std::vector<Result<SimOutput>> results(n, absl::UnknownError("not run"));
  auto run_one = [&](size_t i) {
    auto reader = open_trace();
    if (!reader.ok()) {
      results[i] = reader.status();
    } else {
      Simulator sim(&tasks[i].spec, tasks[i].policy, tasks[i].options, reader->get());
      results[i] = sim.Run();
    }
    if (tasks[i].options.progress) tasks[i].options.progress->finished.store(true, std::memory_order_relaxed);
    if (done) done(i);
  };
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min<int>(threads, static_cast<int>(n));
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) run_one(i);
  } else {
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        for (size_t i = next++; i < n; i = next++) run_one(i);
      });
    }
    for (auto& th : pool) th.join();
  }
  std::vector<SimOutput> out;
  for (size_t i = 0; i < n; ++i) {
    if (!results[i].ok()) {
      return Status(results[i].status().code(),
                    StrCat("policy ", tasks[i].policy.name, ": ", Message(results[i].status())));
    }
    out.push_back(std::move(*results[i]));
  }
  return out;
}

Result<std::vector<SimOutput>> RunComparison(const model::ClusterSpec& spec,
                                             const std::vector<autoscale::PolicyProfile>& policies,
                                             const TraceFactory& open_trace, const CompareOptions& options) {
  std::vector<SimTask> tasks;
  for (const auto& p : policies) {
    tasks.push_back({p.ApplyTo(spec), p, options.sim});
    if (options.progress) tasks.back().options.progress = &options.progress[tasks.size() - 1];
  }
  return RunTasks(tasks, open_trace, options.threads);
}

}  // namespace tide::sim
