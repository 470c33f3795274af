// Microsoft Philly job list in the form the Sia artifact exports:
//   timestamp,duration,num_gpus,gpu_time,cluster
// `timestamp` is "YYYY-MM-DD HH:MM:SS" (UTC) and the file is NOT sorted, so
// this reader validates every row once, keeps a 24-byte record of each
// (submission, run time, GPUs, line, virtual cluster) in submission order,
// and builds each job only when it is read: the jobs themselves are never all
// in memory. `cluster` is a virtual cluster, used as the team. Time zero is
// midnight UTC of the day of the first submission.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "core/strings.h"
#include "trace/formats.h"

namespace tide::trace {
namespace {

// One row, as much as a job needs (about 80,000 of them).
struct Row {
  int64_t submit;  // seconds since the Unix epoch
  int32_t runtime;
  int32_t gpus;
  int32_t line;
  int32_t team;  // index into the teams seen, -1 without a cluster column
};

class PhillyReader final : public TraceReader {
 public:
  PhillyReader(std::vector<Row> rows, std::vector<std::string> teams, Timestamp start, std::string name,
               const TraceOptions& options)
      : rows_(std::move(rows)), teams_(std::move(teams)), start_(start), name_(std::move(name)), options_(options) {}

  Result<std::optional<model::JobSpec>> Next() override {
    if (next_ >= rows_.size()) return std::optional<model::JobSpec>();
    const Row& r = rows_[next_++];
    const model::ClusterSpec& spec = *options_.spec;
    const auto& cls = spec.priority_classes[spec.default_priority_class];
    model::JobSpec job = NewJob(options_);
    job.submit = FromUnixSeconds(r.submit);
    job.runtime = Seconds(r.runtime);
    SplitGang(r.gpus, options_.gpus_per_node, &job.workers, &job.gpus_per_worker);
    job.name = StrCat("philly-", r.line);
    if (r.team >= 0) job.team = teams_[r.team];
    job.priority_class = spec.default_priority_class;
    job.preemptible = cls.preemptible;
    job.is_protected = cls.protect;
    return std::optional<model::JobSpec>(std::move(job));
  }
  Timestamp start() const override { return start_; }
  std::string Describe() const override { return StrCat("philly:", name_); }

 private:
  std::vector<Row> rows_;
  std::vector<std::string> teams_;
  size_t next_ = 0;
  Timestamp start_;
  std::string name_;
  TraceOptions options_;
};

}  // namespace

Result<std::unique_ptr<TraceReader>> OpenPhilly(std::unique_ptr<CsvReader> csv, const TraceOptions& options) {
  const int ts = csv->Column("timestamp"), dur = csv->Column("duration"), gpus = csv->Column("num_gpus"),
            vc = csv->Column("cluster");
  for (auto [c, name] : {std::pair{ts, "timestamp"}, {dur, "duration"}, {gpus, "num_gpus"}}) {
    if (c < 0) return csv->LineError(StrCat("Philly trace lacks column '", name, "'"));
  }
  std::vector<Row> rows;
  std::vector<std::string> teams;
  absl::flat_hash_map<std::string, int32_t> team_index;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(auto row, csv->Next());
    if (!row) break;
    const auto& f = *row;
    auto t = ParseTimestamp(f[ts]);
    if (!t.ok()) return csv->FieldError("timestamp", Message(t.status()));
    TIDE_ASSIGN_OR_RETURN(double d, csv->Double("duration", f[dur]));
    if (d < 0 || d > static_cast<double>(kMaxRuntimeSeconds)) {
      return csv->FieldError("duration", StrCat("must be between 0 and ", kMaxRuntimeSeconds, " seconds"));
    }
    TIDE_ASSIGN_OR_RETURN(int64_t g, csv->Int("num_gpus", f[gpus]));
    if (g < 1 || g > kMaxJobGpus) {
      return csv->FieldError("num_gpus", StrCat("must be between 1 and ", kMaxJobGpus, ", got ", g));
    }
    int32_t team = -1;
    if (vc >= 0) {
      auto [it, fresh] = team_index.try_emplace(std::string(f[vc]), static_cast<int32_t>(teams.size()));
      if (fresh) teams.emplace_back(f[vc]);
      team = it->second;
    }
    rows.push_back({ToUnixSeconds(*t), static_cast<int32_t>(std::llround(d)), static_cast<int32_t>(g),
                    static_cast<int32_t>(csv->line()), team});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.submit < b.submit; });
  Timestamp start = options.start;
  if (!rows.empty()) start = std::chrono::floor<std::chrono::days>(FromUnixSeconds(rows.front().submit));
  // The same bound on submission times as every other format's, from the
  // trace's first day (found by fuzzing: a year-3000 row made a trace that
  // tide could not write back as a native one).
  if (!rows.empty() && rows.back().submit - ToUnixSeconds(start) > kMaxSubmitSeconds) {
    return absl::InvalidArgumentError(
        StrCat(csv->name(), ":", rows.back().line, ": field 'timestamp': more than ", kMaxSubmitSeconds / 86400,
               " days after the trace's first day (", FormatTimestamp(start), ")"));
  }
  return std::unique_ptr<TraceReader>(
      std::make_unique<PhillyReader>(std::move(rows), std::move(teams), start, csv->name(), options));
}

}  // namespace tide::trace
