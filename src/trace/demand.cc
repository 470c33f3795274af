#include "trace/demand.h"

#include <algorithm>

namespace tide::trace {

void WorkloadSummarizer::Add(const model::JobSpec& job) {
  while (!running_.empty() && running_.top().first <= job.submit) {
    now_gpus_ -= running_.top().second;
    running_.pop();
  }
  const int g = job.gpus();
  now_gpus_ += g;
  s_.demand.peak_gpus = std::max(s_.demand.peak_gpus, now_gpus_);
  running_.push({job.submit + job.runtime, g});
  gpu_seconds_ += static_cast<double>(g) * static_cast<double>(job.runtime.count());
  last_end_ = std::max(last_end_, job.submit + job.runtime);
  s_.first_submit = std::min(s_.first_submit, job.submit);
  s_.last_submit = std::max(s_.last_submit, job.submit);
  s_.max_gpus_per_job = std::max(s_.max_gpus_per_job, g);
  ++s_.jobs;
}

WorkloadSummary WorkloadSummarizer::Finish(Timestamp start) const {
  WorkloadSummary s = s_;
  s.gpu_hours = gpu_seconds_ / 3600.0;
  if (s.jobs > 0) {
    const double span = static_cast<double>((last_end_ - start).count());
    s.demand.mean_gpus = span > 0 ? gpu_seconds_ / span : 0;
  }
  return s;
}

Result<WorkloadSummary> SummarizeWorkload(TraceReader& reader) {
  WorkloadSummarizer sum;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(auto job, reader.Next());
    if (!job) break;
    sum.Add(*job);
  }
  return sum.Finish(reader.start());
}

void SummarizingReader::Saw(const model::JobSpec* job) {
  if (job != nullptr) {
    sum_.Add(*job);
  } else if (!ended_) {
    ended_ = true;
    *out_ = sum_.Finish(inner_->start());
  }
}

Result<std::optional<model::JobSpec>> SummarizingReader::Next() {
  TIDE_ASSIGN_OR_RETURN(auto job, inner_->Next());
  Saw(job ? &*job : nullptr);
  return job;
}

Result<bool> SummarizingReader::NextInto(model::JobSpec* job) {
  TIDE_ASSIGN_OR_RETURN(const bool got, inner_->NextInto(job));
  Saw(got ? job : nullptr);
  return got;
}

}  // namespace tide::trace
