// DemandStats: GPU demand of a workload if every job ran from the moment it
// was submitted, with no queueing. Sizes fixed:peak and fixed:mean.
#ifndef TIDE_TRACE_DEMAND_H_
#define TIDE_TRACE_DEMAND_H_

#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

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

// Sums up a workload one job at a time, in submission order. Memory holds
// only the jobs running at a time.
class WorkloadSummarizer {
 public:
  void Add(const model::JobSpec& job);
  // The summary of the jobs added; `start` is the trace's time zero.
  WorkloadSummary Finish(Timestamp start) const;

 private:
  WorkloadSummary s_;
  using End = std::pair<Timestamp, int>;  // (end time, gpus)
  std::priority_queue<End, std::vector<End>, std::greater<End>> running_;
  int64_t now_gpus_ = 0;
  double gpu_seconds_ = 0;
  Timestamp last_end_ = kInfinitePast;
};

// Reads `reader` to the end.
Result<WorkloadSummary> SummarizeWorkload(TraceReader& reader);

// Passes the jobs of another reader on, and sums them up as they go: `*out`
// is set when the stream ends (and stays unset if it is not read to the end
// or fails). A simulation that reads the trace anyway gives the summary
// without a pass of its own.
class SummarizingReader : public TraceReader {
 public:
  SummarizingReader(std::unique_ptr<TraceReader> inner, std::optional<WorkloadSummary>* out)
      : inner_(std::move(inner)), out_(out) {}
  Result<std::optional<model::JobSpec>> Next() override;
  Result<bool> NextInto(model::JobSpec* job) override;
  Timestamp start() const override { return inner_->start(); }
  std::string Describe() const override { return inner_->Describe(); }
  std::string Notes() const override { return inner_->Notes(); }

 private:
  std::unique_ptr<TraceReader> inner_;
  std::optional<WorkloadSummary>* out_;
  // Sums up the job just read, or the stream once it ended.
  void Saw(const model::JobSpec* job);

  WorkloadSummarizer sum_;
  bool ended_ = false;
};

}  // namespace tide::trace

#endif  // TIDE_TRACE_DEMAND_H_
