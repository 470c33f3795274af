// DemandStats: GPU demand of a workload if every job ran from the moment it
// was submitted, with no queueing. Sizes fixed:peak and fixed:mean.
#ifndef TIDE_TRACE_DEMAND_H_
#define TIDE_TRACE_DEMAND_H_

#include "autoscale/policy.h"
#include "trace/reader.h"

namespace tide::trace {

struct WorkloadSummary {
  autoscale::DemandStats demand;
  int64_t jobs = 0;
  double gpu_hours = 0;
  Timestamp first_submit = kInfiniteFuture;
  Timestamp last_submit = kInfinitePast;
  int max_gpus_per_job = 0;
};

// Reads `reader` to the end. Memory holds only the jobs running at a time.
Result<WorkloadSummary> SummarizeWorkload(TraceReader& reader);

}  // namespace tide::trace

#endif  // TIDE_TRACE_DEMAND_H_
