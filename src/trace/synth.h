// The synthetic tidal workload: a seeded generator of GPU training jobs whose
// shape follows the mission (MISSION section 1) and the public traces.
//
// Model (docs/traces.md#synthetic):
//   - Regular jobs arrive as a Poisson process whose hourly rate follows the
//     working day (night at 10% of the daytime peak) and the week (weekends
//     at 30%). Sizes and run times are shaped like the ITP and Philly traces:
//     most jobs use 1 GPU, a tail uses 8-64; run times are log-normal with a
//     median around an hour and a heavy tail.
//   - Hyper-parameter searches: on working days, bursts of 20-60 one- or
//     two-GPU, low-priority, preemptible jobs submitted within five minutes.
//   - Long training runs: 16-64 GPUs, high priority, tens of hours, each
//     followed by a protected final-evaluation job.
// The same options and seed give the same jobs, byte for byte, on any machine.
#ifndef TIDE_TRACE_SYNTH_H_
#define TIDE_TRACE_SYNTH_H_

#include <array>
#include <memory>
#include <ostream>
#include <string>

#include "core/time.h"
#include "model/cluster.h"
#include "trace/reader.h"

namespace tide::trace {

struct SynthOptions {
  uint64_t seed = 1;
  int days = 7;
  Timestamp start = FromUnixSeconds(1767571200);  // 2026-01-05T00:00:00Z, a Monday
  int utc_offset_hours = 0;  // the working day is in this local time
  // Regular jobs per hour at the daytime peak.
  double jobs_per_hour = 10;
  // Arrival-rate multiplier by local hour of day.
  std::array<double, 24> diurnal = {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.3, 0.6, 1.0, 1.0, 1.0,
                                    0.7, 0.9, 1.0, 1.0, 1.0, 0.8, 0.5, 0.4, 0.3, 0.25, 0.2, 0.15};
  double weekend_factor = 0.3;
  double hpo_bursts_per_workday = 2;
  int hpo_min_jobs = 20;
  int hpo_max_jobs = 60;
  double long_runs_per_workday = 0.6;
  // Extra regular jobs submitted in the first 15 minutes of each working day
  // (local 09:00): work prepared overnight, a peak that can be predicted.
  double morning_rush = 0;
  int gpus_per_node = 8;  // how multi-GPU jobs split into workers
  // Priority class names used; they must exist in the cluster spec.
  std::string high_class = "high";
  std::string normal_class = "normal";
  std::string low_class = "low";
  // Scales every arrival rate (bursts and long runs too), for larger workloads.
  double scale = 1.0;

  // Optional kinds of work (all 0 by default), for the policy examples:
  double elastic_share = 0;   // multi-GPU regular jobs made elastic (half to twice their size);
                              // hyper-parameter bursts made one elastic asynchronous search
  double io_bound_share = 0;  // elastic asynchronous jobs whose input caps them at their size
  double idle_share = 0;      // regular jobs that hold their GPUs and do nothing (2% busy)
  double slice_share = 0;     // 1-GPU regular jobs that ask for a MIG slice (1g/2g/3g)
  double data_share = 0;      // jobs whose data lives in `data_region`
  std::string data_region = "default";
  bool Extended() const {
    return elastic_share > 0 || io_bound_share > 0 || idle_share > 0 || slice_share > 0 || data_share > 0;
  }
};

// A TraceReader that generates jobs as they are read, one day ahead at most.
// InvalidArgument if an option is out of range or a class is not in `spec`.
Result<std::unique_ptr<TraceReader>> MakeSynthReader(const SynthOptions& options, const model::ClusterSpec* spec);

// Writes jobs in tide's native CSV format, with submit times relative to `start`.
class NativeWriter {
 public:
  // `extended` adds the optional columns (elasticity, utilization, slices, data).
  NativeWriter(std::ostream* out, const model::ClusterSpec* spec, Timestamp start, bool extended = false);
  void Write(const model::JobSpec& job);

 private:
  std::ostream* out_;
  const model::ClusterSpec* spec_;
  Timestamp start_;
  bool extended_;
};

}  // namespace tide::trace

#endif  // TIDE_TRACE_SYNTH_H_
