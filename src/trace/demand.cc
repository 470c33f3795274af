#include "trace/demand.h"

#include <algorithm>
#include <queue>

namespace tide::trace {

Result<WorkloadSummary> SummarizeWorkload(TraceReader& reader) {
  WorkloadSummary s;
  using End = std::pair<Timestamp, int>;  // (end time, gpus)
  std::priority_queue<End, std::vector<End>, std::greater<End>> running;
  int64_t now_gpus = 0;
  double gpu_seconds = 0;
  Timestamp last_end = kInfinitePast;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(auto job, reader.Next());
    if (!job) break;
    while (!running.empty() && running.top().first <= job->submit) {
      now_gpus -= running.top().second;
      running.pop();
    }
    const int g = job->gpus();
    now_gpus += g;
    s.demand.peak_gpus = std::max(s.demand.peak_gpus, now_gpus);
    running.push({job->submit + job->runtime, g});
    gpu_seconds += static_cast<double>(g) * static_cast<double>(job->runtime.count());
    last_end = std::max(last_end, job->submit + job->runtime);
    s.first_submit = std::min(s.first_submit, job->submit);
    s.last_submit = std::max(s.last_submit, job->submit);
    s.max_gpus_per_job = std::max(s.max_gpus_per_job, g);
    ++s.jobs;
  }
  s.gpu_hours = gpu_seconds / 3600.0;
  if (s.jobs > 0) {
    const double span = static_cast<double>((last_end - reader.start()).count());
    s.demand.mean_gpus = span > 0 ? gpu_seconds / span : 0;
  }
  return s;
}

}  // namespace tide::trace
