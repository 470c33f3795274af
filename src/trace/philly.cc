// Microsoft Philly job list in the form the Sia artifact exports:
//   timestamp,duration,num_gpus,gpu_time,cluster
// `timestamp` is "YYYY-MM-DD HH:MM:SS" (UTC) and the file is NOT sorted, so
// this reader loads and sorts it (about 80,000 small records). `cluster` is a
// virtual cluster, used as the team. Time zero is midnight UTC of the day of
// the first submission.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "trace/formats.h"
#include "core/strings.h"

namespace tide::trace {
namespace {

class PhillyReader final : public TraceReader {
 public:
  PhillyReader(std::vector<model::JobSpec> jobs, Timestamp start, std::string name)
      : jobs_(std::move(jobs)), start_(start), name_(std::move(name)) {}

  Result<std::optional<model::JobSpec>> Next() override {
    if (next_ >= jobs_.size()) return std::optional<model::JobSpec>();
    return std::optional<model::JobSpec>(std::move(jobs_[next_++]));
  }
  Timestamp start() const override { return start_; }
  std::string Describe() const override { return StrCat("philly:", name_); }

 private:
  std::vector<model::JobSpec> jobs_;
  size_t next_ = 0;
  Timestamp start_;
  std::string name_;
};

}  // namespace

Result<std::unique_ptr<TraceReader>> OpenPhilly(std::unique_ptr<CsvReader> csv, const TraceOptions& options) {
  const int ts = csv->Column("timestamp"), dur = csv->Column("duration"), gpus = csv->Column("num_gpus"),
            vc = csv->Column("cluster");
  for (auto [c, name] : {std::pair{ts, "timestamp"}, {dur, "duration"}, {gpus, "num_gpus"}}) {
    if (c < 0) return csv->LineError(StrCat("Philly trace lacks column '", name, "'"));
  }
  const model::ClusterSpec& spec = *options.spec;
  const auto& cls = spec.priority_classes[spec.default_priority_class];
  std::vector<std::pair<int64_t, model::JobSpec>> rows;  // (line, job)
  while (true) {
    TIDE_ASSIGN_OR_RETURN(auto row, csv->Next());
    if (!row) break;
    const auto& f = *row;
    model::JobSpec job = NewJob(options);
    auto t = ParseTimestamp(f[ts]);
    if (!t.ok()) return csv->FieldError("timestamp", Message(t.status()));
    job.submit = *t;
    TIDE_ASSIGN_OR_RETURN(double d, csv->Double("duration", f[dur]));
    if (d < 0 || d > static_cast<double>(kMaxRuntimeSeconds)) {
      return csv->FieldError("duration", StrCat("must be between 0 and ", kMaxRuntimeSeconds, " seconds"));
    }
    job.runtime = Seconds(static_cast<int64_t>(std::llround(d)));
    TIDE_ASSIGN_OR_RETURN(int64_t g, csv->Int("num_gpus", f[gpus]));
    if (g < 1 || g > (1 << 20)) return csv->FieldError("num_gpus", StrCat("must be at least 1, got ", g));
    SplitGang(static_cast<int>(g), options.gpus_per_node, &job.workers, &job.gpus_per_worker);
    job.name = StrCat("philly-", csv->line());
    if (vc >= 0) job.team = std::string(f[vc]);
    job.priority_class = spec.default_priority_class;
    job.preemptible = cls.preemptible;
    job.is_protected = cls.protect;
    rows.emplace_back(csv->line(), std::move(job));
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.submit < b.second.submit; });
  Timestamp start = options.start;
  if (!rows.empty()) start = std::chrono::floor<std::chrono::days>(rows.front().second.submit);
  std::vector<model::JobSpec> jobs;
  jobs.reserve(rows.size());
  for (auto& r : rows) jobs.push_back(std::move(r.second));
  return std::unique_ptr<TraceReader>(std::make_unique<PhillyReader>(std::move(jobs), start, csv->name()));
}

}  // namespace tide::trace
