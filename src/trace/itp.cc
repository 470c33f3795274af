// Microsoft ITP traces as published with ElasticFlow (ASPLOS'23):
//   job_id,submission_time,duration,num_gpu
// Times are seconds since the start of collection; rows are in submission
// order. There is no priority or team; jobs get the default priority class.
#include "trace/formats.h"
#include "core/strings.h"

namespace tide::trace {
namespace {

class ItpReader final : public TraceReader {
 public:
  ItpReader(std::unique_ptr<CsvReader> csv, TraceOptions options)
      : csv_(std::move(csv)),
        options_(options),
        id_(csv_->Column("job_id")),
        submit_(csv_->Column("submission_time")),
        duration_(csv_->Column("duration")),
        gpus_(csv_->Column("num_gpu")) {}

  Status CheckHeader() const {
    for (auto [c, name] : {std::pair{id_, "job_id"}, {submit_, "submission_time"}, {duration_, "duration"},
                           {gpus_, "num_gpu"}}) {
      if (c < 0) return csv_->LineError(StrCat("ITP trace lacks column '", name, "'"));
    }
    return OkStatus();
  }

  Result<std::optional<model::JobSpec>> Next() override {
    TIDE_ASSIGN_OR_RETURN(auto row, csv_->Next());
    if (!row) return std::optional<model::JobSpec>();
    const auto& f = *row;
    model::JobSpec job = NewJob(options_);
    job.name = std::string(f[id_]);
    if (job.name.empty()) job.name = StrCat("line", csv_->line());  // as the native reader names it
    TIDE_ASSIGN_OR_RETURN(int64_t submit, csv_->Int("submission_time", f[submit_]));
    TIDE_ASSIGN_OR_RETURN(int64_t duration, csv_->Int("duration", f[duration_]));
    TIDE_ASSIGN_OR_RETURN(int64_t gpus, csv_->Int("num_gpu", f[gpus_]));
    if (submit < 0 || submit > kMaxSubmitSeconds) {
      return csv_->FieldError("submission_time", StrCat("must be between 0 and ", kMaxSubmitSeconds, ", got ", submit));
    }
    if (duration < 0 || duration > kMaxRuntimeSeconds) {
      return csv_->FieldError("duration", StrCat("must be between 0 and ", kMaxRuntimeSeconds, ", got ", duration));
    }
    if (gpus < 1 || gpus > kMaxJobGpus) {
      return csv_->FieldError("num_gpu", StrCat("must be between 1 and ", kMaxJobGpus, ", got ", gpus));
    }
    if (submit < last_) {
      return csv_->FieldError("submission_time",
                              StrCat("rows must be in submission order (", submit, " < ", last_, ")"));
    }
    last_ = submit;
    job.submit = options_.start + Seconds(submit);
    job.runtime = Seconds(duration);
    SplitGang(static_cast<int>(gpus), options_.gpus_per_node, &job.workers, &job.gpus_per_worker);
    UseDefaultClass(options_, &job);
    return std::optional<model::JobSpec>(std::move(job));
  }

  Timestamp start() const override { return options_.start; }
  std::string Describe() const override { return StrCat("itp:", csv_->name()); }

 private:
  std::unique_ptr<CsvReader> csv_;
  TraceOptions options_;
  int id_, submit_, duration_, gpus_;
  int64_t last_ = 0;
};

}  // namespace

Result<std::unique_ptr<TraceReader>> OpenItp(std::unique_ptr<CsvReader> csv, const TraceOptions& options) {
  auto r = std::make_unique<ItpReader>(std::move(csv), options);
  TIDE_RETURN_IF_ERROR(r->CheckHeader());
  return std::unique_ptr<TraceReader>(std::move(r));
}

}  // namespace tide::trace
