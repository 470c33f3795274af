// The Standard Workload Format (SWF) of the Parallel Workloads Archive:
// header comments starting with ';', then one job per line of 18
// whitespace-separated numeric fields (-1: unknown), sorted by submit time.
// tide reads the submit time, run time, processors (allocated, else
// requested) and user; the rest is checked for count only. Processors become
// GPUs through TraceOptions::swf_procs_per_gpu.
#include <charconv>
#include <cmath>
#include <fstream>

#include "core/strings.h"
#include "trace/formats.h"

namespace tide::trace {
namespace {

// The 18 fields of a line, in order (1-based in the SWF definition).
constexpr int kSwfFields = 18;
constexpr const char* kFieldNames[kSwfFields] = {"job_number",
                                                 "submit_time",
                                                 "wait_time",
                                                 "run_time",
                                                 "allocated_processors",
                                                 "avg_cpu_time",
                                                 "used_memory",
                                                 "requested_processors",
                                                 "requested_time",
                                                 "requested_memory",
                                                 "status",
                                                 "user_id",
                                                 "group_id",
                                                 "executable",
                                                 "queue",
                                                 "partition",
                                                 "preceding_job",
                                                 "think_time"};
enum Field { kJob = 0, kSubmit = 1, kRunTime = 3, kAllocProcs = 4, kReqProcs = 7, kUser = 11 };

// Splits `line` on runs of spaces and tabs.
std::vector<std::string_view> SplitWhitespace(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == line.size()) break;
    size_t end = i;
    while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
    out.push_back(line.substr(i, end - i));
    i = end;
  }
  return out;
}

// A number, as SWF writes them: integers, and (the format allows it for
// times) decimals. nullopt if `text` is not one.
std::optional<double> ParseNumber(std::string_view text) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || text.empty() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// "; UnixStartTime: 1041382800" -> 1041382800; nullopt for other comments.
std::optional<int64_t> UnixStartTime(std::string_view comment) {
  comment = StripWhitespace(comment.substr(1));  // drop ';'
  constexpr std::string_view kKey = "UnixStartTime:";
  if (comment.substr(0, kKey.size()) != kKey) return std::nullopt;
  std::string_view value = StripWhitespace(comment.substr(kKey.size()));
  int64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || value.empty()) return std::nullopt;
  return v;
}

class SwfReader final : public TraceReader {
 public:
  SwfReader(std::unique_ptr<std::ifstream> in, std::string name, TraceOptions options)
      : in_(std::move(in)), name_(std::move(name)), options_(options), start_(options.start) {}

  // Reads the header comments up to the first job line, which it keeps for
  // Next(). A malformed UnixStartTime is an error, not silently time zero.
  Status ReadHeader() {
    while (ReadLine()) {
      std::string_view t = StripWhitespace(buf_);
      if (t.front() != ';') {
        pending_ = true;
        return OkStatus();
      }
      if (Contains(t, "UnixStartTime")) {
        auto v = UnixStartTime(t);
        if (!v || *v < 0) {
          return LineError(StrCat("header 'UnixStartTime': expected seconds since 1970, got '", t, "'"));
        }
        start_ = FromUnixSeconds(*v);
      }
    }
    return OkStatus();
  }

  Result<std::optional<model::JobSpec>> Next() override {
    while (true) {
      if (!pending_) {
        do {
          if (!ReadLine()) return std::optional<model::JobSpec>();
        } while (StripWhitespace(buf_).front() == ';');
      }
      pending_ = false;
      TIDE_ASSIGN_OR_RETURN(auto job, ParseLine(StripWhitespace(buf_)));
      if (job) return job;
      ++skipped_;
    }
  }

  Timestamp start() const override { return start_; }
  std::string Describe() const override { return StrCat("swf:", name_); }
  std::string Notes() const override {
    if (skipped_ == 0) return "";
    return StrCat("skipped ", skipped_, skipped_ == 1 ? " record" : " records",
                  " that use no GPU time (run time <= 0 or no processors)");
  }

 private:
  // Reads the next non-blank line into buf_.
  bool ReadLine() {
    while (std::getline(*in_, buf_)) {
      ++line_;
      if (!buf_.empty() && buf_.back() == '\r') buf_.pop_back();
      if (!StripWhitespace(buf_).empty()) return true;
    }
    return false;
  }

  Status LineError(std::string_view what) const {
    return absl::InvalidArgumentError(StrCat(name_, ":", line_, ": ", Shown(what, 2000)));
  }
  Status FieldError(int field, std::string_view what) const {
    return absl::InvalidArgumentError(
        StrCat(name_, ":", line_, ": field ", field + 1, " '", kFieldNames[field], "': ", Shown(what, 2000)));
  }

  // A job, or nullopt for one that used nothing (run time <= 0 or no
  // processors), which the caller counts as skipped.
  Result<std::optional<model::JobSpec>> ParseLine(std::string_view line) {
    const auto f = SplitWhitespace(line);
    if (f.size() != kSwfFields) {
      return LineError(StrCat("expected ", kSwfFields, " whitespace-separated fields, found ", f.size()));
    }
    double v[kSwfFields];
    for (int i = 0; i < kSwfFields; ++i) {
      auto n = ParseNumber(f[i]);
      // Finite too: every field is compared, rounded or converted below.
      if (!n || !std::isfinite(*n)) return FieldError(i, StrCat("expected a number, got '", f[i], "'"));
      v[i] = *n;
    }
    const int64_t submit = std::llround(v[kSubmit]);
    if (submit < 0 || submit > kMaxSubmitSeconds) {
      return FieldError(kSubmit, StrCat("must be between 0 and ", kMaxSubmitSeconds, ", got ", f[kSubmit]));
    }
    if (submit < last_) {
      return FieldError(kSubmit, StrCat("jobs must be in submission order (", submit, " < ", last_, ")"));
    }
    last_ = submit;
    const int64_t run = std::llround(v[kRunTime]);
    if (run > kMaxRuntimeSeconds) {
      return FieldError(kRunTime, StrCat("must be at most ", kMaxRuntimeSeconds, ", got ", f[kRunTime]));
    }
    const int field = v[kAllocProcs] > 0 ? kAllocProcs : kReqProcs;
    const double procs = v[field];
    if (procs > 0 && procs != std::floor(procs)) {
      return FieldError(field, StrCat("expected a whole number of processors, got '", f[field], "'"));
    }
    if (run <= 0 || procs <= 0) return std::optional<model::JobSpec>();
    const int64_t per_gpu = std::max(1, options_.swf_procs_per_gpu);
    // Compared as a double before it is converted (found by fuzzing: 1e300
    // processors overflowed the conversion).
    if (procs > static_cast<double>(kMaxJobGpus * per_gpu)) {
      return FieldError(field, StrCat("at most ", kMaxJobGpus * per_gpu, " processors, got ", f[field]));
    }
    const int64_t gpus = (static_cast<int64_t>(procs) + per_gpu - 1) / per_gpu;
    if (gpus > kMaxJobGpus) {
      return FieldError(field, StrCat("at most ", kMaxJobGpus * per_gpu, " processors, got ", f[field]));
    }
    model::JobSpec job = NewJob(options_);
    job.name = std::string(f[kJob]);
    job.submit = start_ + Seconds(submit);
    job.runtime = Seconds(run);
    SplitGang(static_cast<int>(gpus), options_.gpus_per_node, &job.workers, &job.gpus_per_worker);
    UseDefaultClass(options_, &job);
    if (v[kUser] >= 0) job.team = StrCat("u", std::llround(v[kUser]));
    return std::optional<model::JobSpec>(std::move(job));
  }

  std::unique_ptr<std::ifstream> in_;
  std::string name_;
  TraceOptions options_;
  Timestamp start_;
  std::string buf_;
  int64_t line_ = 0;
  bool pending_ = false;  // buf_ holds a job line not yet parsed
  int64_t last_ = 0;
  int64_t skipped_ = 0;
};

}  // namespace

bool LooksLikeSwf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    std::string_view t = StripWhitespace(line);
    if (t.empty()) continue;
    if (t.front() == ';') return true;
    return SplitWhitespace(t).size() == kSwfFields;
  }
  return false;
}

Result<std::unique_ptr<TraceReader>> OpenSwf(const std::string& path, const TraceOptions& options) {
  auto in = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!in->is_open()) return absl::NotFoundError(StrCat(path, ": cannot open file"));
  auto r = std::make_unique<SwfReader>(std::move(in), path, options);
  TIDE_RETURN_IF_ERROR(r->ReadHeader());
  return std::unique_ptr<TraceReader>(std::move(r));
}

}  // namespace tide::trace
