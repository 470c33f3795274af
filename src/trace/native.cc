// tide's native trace format. See docs/traces.md for the column reference.
#include <cmath>

#include "trace/formats.h"
#include "core/strings.h"

namespace tide::trace {
namespace {

constexpr int kMaxGpusPerJob = static_cast<int>(kMaxJobGpus);

const std::vector<std::string>& KnownColumns() {
  static const auto* cols = new std::vector<std::string>{
      "job_id", "submit_time", "runtime", "gpus", "gpus_per_worker", "workers",
      "priority", "preemptible", "protected", "team",
      // optional: elasticity, phases and checkpoints
      "min_workers", "max_workers", "async", "io_bound_workers", "load", "train_util", "eval_share",
      "checkpoint_interval", "checkpoint_cost", "data_region", "data_gb", "output_gb", "slice"};
  return *cols;
}

// The known columns, in the order of KnownColumns().
enum Known : int {
  kJobId, kSubmitTime, kRuntime, kGpus, kGpusPerWorker, kWorkers, kPriority, kPreemptible, kProtected, kTeam, kMinWorkers, kMaxWorkers, kAsync, kIoBoundWorkers, kLoad, kTrainUtil, kEvalShare, kCheckpointInterval, kCheckpointCost, kDataRegion, kDataGb, kOutputGb, kSlice
};

class NativeReader final : public TraceReader {
 public:
  NativeReader(std::unique_ptr<CsvReader> csv, TraceOptions options) : csv_(std::move(csv)), options_(options) {
    for (const auto& c : KnownColumns()) col_.push_back(csv_->Column(c));
  }

  Status CheckHeader() const {
    for (const auto& h : csv_->header()) {
      bool known = false;
      for (const auto& c : KnownColumns()) known |= (h == c);
      if (!known) {
        return csv_->LineError(StrCat("unknown column '", Shown(h), "'; native columns are ",
                                            StrJoin(KnownColumns(), ", ")));
      }
    }
    if (Col(kSubmitTime) < 0) return csv_->LineError("missing column 'submit_time'");
    if (Col(kRuntime) < 0) return csv_->LineError("missing column 'runtime'");
    const bool split = Col(kGpusPerWorker) >= 0 || Col(kWorkers) >= 0;
    if (Col(kGpus) < 0 && !(Col(kGpusPerWorker) >= 0 && Col(kWorkers) >= 0)) {
      return csv_->LineError("give the GPUs as a column 'gpus', or as 'gpus_per_worker' and 'workers'");
    }
    if (split && !(Col(kGpusPerWorker) >= 0 && Col(kWorkers) >= 0)) {
      return csv_->LineError("'gpus_per_worker' and 'workers' go together");
    }
    return OkStatus();
  }

  Result<std::optional<model::JobSpec>> Next() override {
    std::optional<model::JobSpec> job(std::in_place);
    TIDE_ASSIGN_OR_RETURN(const bool got, NextInto(&*job));
    if (!got) job.reset();
    return job;
  }

  Result<bool> NextInto(model::JobSpec* out) override {
    TIDE_ASSIGN_OR_RETURN(auto row, csv_->Next());
    if (!row) return false;
    const auto& f = *row;
    auto get = [&](Known k) -> std::string_view {
      const int c = Col(k);
      return c < 0 ? std::string_view() : f[c];
    };
    model::JobSpec& job = *out;
    job = NewJob(options_);
    job.name.assign(get(kJobId));
    if (job.name.empty()) job.name = StrCat("line", csv_->line());

    // submit_time: seconds since the trace start, or an ISO-8601 instant.
    const std::string_view submit = get(kSubmitTime);
    if (Contains(submit, "-")) {
      auto t = ParseTimestamp(submit);
      if (!t.ok()) return csv_->FieldError("submit_time", Message(t.status()));
      job.submit = *t;
    } else {
      TIDE_ASSIGN_OR_RETURN(int64_t s, csv_->Int("submit_time", submit));
      if (s < 0 || s > kMaxSubmitSeconds) {
        return csv_->FieldError("submit_time", StrCat("must be between 0 and ", kMaxSubmitSeconds,
                                                      " (seconds since the trace start), got ", s));
      }
      job.submit = options_.start + Seconds(s);
    }
    if (job.submit < last_submit_) {
      return csv_->FieldError("submit_time", StrCat("jobs must be in submission order; ", FormatTimestamp(job.submit),
                                                          " comes before the previous job's ",
                                                          FormatTimestamp(last_submit_)));
    }
    last_submit_ = job.submit;

    const std::string_view runtime = get(kRuntime);
    auto rt = ParseDuration(runtime);
    if (!rt.ok()) {
      auto d = csv_->Double("runtime", runtime);  // "3600.0"
      if (!d.ok()) return csv_->FieldError("runtime", "expected seconds or a duration like 2h30m");
      rt = Seconds(static_cast<int64_t>(std::llround(*d)));
    }
    if (rt->count() < 0 || rt->count() > kMaxRuntimeSeconds) {
      return csv_->FieldError("runtime", StrCat("must be between 0 and ", kMaxRuntimeSeconds, " seconds"));
    }
    job.runtime = *rt;

    if (Col(kGpusPerWorker) >= 0) {
      TIDE_ASSIGN_OR_RETURN(int64_t g, csv_->Int("gpus_per_worker", get(kGpusPerWorker)));
      TIDE_ASSIGN_OR_RETURN(int64_t w, csv_->Int("workers", get(kWorkers)));
      if (g < 1 || g > kMaxGpusPerJob) {
        return csv_->FieldError("gpus_per_worker", StrCat("must be between 1 and ", kMaxGpusPerJob, ", got ", g));
      }
      // w > max / g, not w * g > max: the product can overflow and wrap to a small number.
      if (w < 1 || w > kMaxGpusPerJob / g) {
        return csv_->FieldError("workers", StrCat("must be between 1 and ", kMaxGpusPerJob / g, ", got ", w));
      }
      job.gpus_per_worker = static_cast<int>(g);
      job.workers = static_cast<int>(w);
      if (Col(kGpus) >= 0 && !get(kGpus).empty()) {
        TIDE_ASSIGN_OR_RETURN(int64_t total, csv_->Int("gpus", get(kGpus)));
        if (total != g * w) {
          return csv_->FieldError("gpus", StrCat(total, " does not equal gpus_per_worker x workers = ", g * w));
        }
      }
    } else {
      TIDE_ASSIGN_OR_RETURN(int64_t total, csv_->Int("gpus", get(kGpus)));
      if (total < 1 || total > kMaxGpusPerJob) {
        return csv_->FieldError("gpus", StrCat("must be between 1 and ", kMaxGpusPerJob, ", got ", total));
      }
      SplitGang(static_cast<int>(total), options_.gpus_per_node, &job.workers, &job.gpus_per_worker);
    }

    const model::ClusterSpec& spec = *options_.spec;
    job.priority_class = spec.default_priority_class;
    if (const auto pc = get(kPriority); !pc.empty()) {
      const int idx = spec.PriorityClassIndex(pc);
      if (idx < 0) {
        std::vector<std::string> names;
        for (const auto& c : spec.priority_classes) names.push_back(c.name);
        return csv_->FieldError("priority", StrCat("unknown priority class '", pc, "'; the configuration defines ",
                                                         StrJoin(names, ", ")));
      }
      job.priority_class = idx;
    }
    const auto& cls = spec.priority_classes[job.priority_class];
    job.preemptible = cls.preemptible;
    job.is_protected = cls.protect;
    if (const auto v = get(kPreemptible); !v.empty()) {
      TIDE_ASSIGN_OR_RETURN(job.preemptible, csv_->Bool("preemptible", v));
    }
    if (const auto v = get(kProtected); !v.empty()) {
      TIDE_ASSIGN_OR_RETURN(job.is_protected, csv_->Bool("protected", v));
    }
    job.team.assign(get(kTeam));
    TIDE_RETURN_IF_ERROR(ReadOptional(get, &job));
    return true;
  }

  Timestamp start() const override { return options_.start; }
  std::string Describe() const override { return StrCat("native:", csv_->name()); }

  // The optional columns; empty cells keep the defaults.
  template <typename Get>
  Status ReadOptional(const Get& get, model::JobSpec* job) const {
    auto count = [&](Known k, int* out) -> Status {
      const std::string_view name = KnownColumns()[k];
      const auto v = get(k);
      if (v.empty()) return OkStatus();
      TIDE_ASSIGN_OR_RETURN(int64_t n, csv_->Int(name, v));
      if (n < 0 || n > (1 << 20)) return csv_->FieldError(name, "must be between 0 and 1048576");
      *out = static_cast<int>(n);
      return OkStatus();
    };
    auto share = [&](Known k, double* out) -> Status {
      const std::string_view name = KnownColumns()[k];
      const auto v = get(k);
      if (v.empty()) return OkStatus();
      TIDE_ASSIGN_OR_RETURN(double x, csv_->Double(name, v));
      if (x < 0 || x > 1) return csv_->FieldError(name, "must be between 0 and 1");
      *out = x;
      return OkStatus();
    };
    auto duration = [&](Known k, Duration* out) -> Status {
      const std::string_view name = KnownColumns()[k];
      const auto v = get(k);
      if (v.empty()) return OkStatus();
      auto d = ParseDuration(v);
      if (!d.ok() || d->count() < 0) return csv_->FieldError(name, "expected seconds or a duration like 30m");
      *out = *d;
      return OkStatus();
    };
    TIDE_RETURN_IF_ERROR(count(kMinWorkers, &job->min_workers));
    TIDE_RETURN_IF_ERROR(count(kMaxWorkers, &job->max_workers));
    TIDE_RETURN_IF_ERROR(count(kIoBoundWorkers, &job->io_bound_workers));
    if (const auto v = get(kAsync); !v.empty()) {
      TIDE_ASSIGN_OR_RETURN(job->async, csv_->Bool("async", v));
    }
    TIDE_RETURN_IF_ERROR(duration(kLoad, &job->phases.load));
    TIDE_RETURN_IF_ERROR(share(kTrainUtil, &job->phases.train_util));
    TIDE_RETURN_IF_ERROR(share(kEvalShare, &job->phases.eval_share));
    TIDE_RETURN_IF_ERROR(duration(kCheckpointInterval, &job->checkpoint.interval));
    job->data_region.assign(get(kDataRegion));
    for (auto [k, out] : {std::pair{kDataGb, &job->data_gb}, {kOutputGb, &job->output_gb}}) {
      const std::string_view name = KnownColumns()[k];
      if (const auto v = get(k); !v.empty()) {
        TIDE_ASSIGN_OR_RETURN(*out, csv_->Double(name, v));
        if (*out < 0) return csv_->FieldError(name, "must be >= 0");
      }
    }
    if (!job->data_region.empty() && !options_.spec->regions.empty() &&
        options_.spec->RegionIndex(job->data_region) < 0) {
      return csv_->FieldError("data_region", StrCat("no region named '", job->data_region, "' in the configuration"));
    }
    TIDE_RETURN_IF_ERROR(duration(kCheckpointCost, &job->checkpoint.cost));
    if (const auto v = get(kSlice); !v.empty()) {
      job->slice = std::string(v);
      job->slice_units = model::SliceUnits(v);
      // "<n>g": n compute units without a profile, as the openb reader names
      // a share of a GPU (and so as tide writes such a job back).
      if (v.size() == 2 && v[1] == 'g' && v[0] >= '1' && v[0] <= '7') job->slice_units = v[0] - '0';
      if (job->slice_units == 0) {
        return csv_->FieldError(
            "slice", StrCat("'", v, "' is not a MIG profile; write <n>g.<m>gb, e.g. 1g.10gb, or <n>g for n of 7 units"));
      }
      if (job->gpus_per_worker != 1) {
        return csv_->FieldError("slice", "a slice job asks for one slice per worker: give gpus_per_worker 1 and workers N (a gpus column alone cannot say it)");
      }
      if (job->min_workers > 0 || job->max_workers > 0) return csv_->FieldError("slice", "slice jobs cannot be elastic");
    }
    if (job->min_workers > 0 || job->max_workers > 0) {
      if (job->min_workers < 1 || job->max_workers < job->min_workers || job->workers < job->min_workers ||
          job->workers > job->max_workers) {
        return csv_->FieldError("max_workers", StrCat("an elastic job needs 1 <= min_workers <= workers <= max_workers (",
                                                      job->min_workers, " <= ", job->workers, " <= ",
                                                      job->max_workers, ")"));
      }
    }
    return OkStatus();
  }

 private:
  // The column of a known one in this file, or -1.
  int Col(Known k) const { return col_[k]; }

  std::unique_ptr<CsvReader> csv_;
  TraceOptions options_;
  std::vector<int> col_;
  Timestamp last_submit_ = kInfinitePast;
};

}  // namespace

Result<std::unique_ptr<TraceReader>> OpenNative(std::unique_ptr<CsvReader> csv, const TraceOptions& options) {
  auto r = std::make_unique<NativeReader>(std::move(csv), options);
  TIDE_RETURN_IF_ERROR(r->CheckHeader());
  return std::unique_ptr<TraceReader>(std::move(r));
}

}  // namespace tide::trace
