#include "trace/synth.h"
#include "core/strings.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <span>

#include "core/csv.h"
#include "core/rng.h"

namespace tide::trace {
namespace {

struct Weighted {
  int value;
  double weight;
};

int Pick(Rng& rng, std::span<const Weighted> table) {
  double total = 0;
  for (const auto& w : table) total += w.weight;
  double u = rng.Uniform() * total;
  for (const auto& w : table) {
    if (u < w.weight) return w.value;
    u -= w.weight;
  }
  return table.back().value;
}

Duration ClampedLogNormal(Rng& rng, Duration median, double sigma, Duration lo, Duration hi) {
  const double s = rng.LogNormal(static_cast<double>(median.count()), sigma);
  const double c = std::clamp(s, static_cast<double>(lo.count()), static_cast<double>(hi.count()));
  return Seconds(static_cast<int64_t>(std::llround(c)));
}

const char* const kTeams[] = {"vision", "nlp", "speech", "recsys"};
constexpr Weighted kTeamWeights[] = {{0, 0.35}, {1, 0.35}, {2, 0.15}, {3, 0.15}};
// Regular job sizes in GPUs, shaped like ITP cluster04 and Philly (mostly 1 GPU).
constexpr Weighted kRegularGpus[] = {{1, 0.70}, {2, 0.05}, {4, 0.08}, {8, 0.13},
                                            {16, 0.025}, {32, 0.012}, {64, 0.003}};
constexpr Weighted kLongRunGpus[] = {{16, 0.5}, {32, 0.35}, {64, 0.15}};

class SynthReader final : public TraceReader {
 public:
  SynthReader(const SynthOptions& o, const model::ClusterSpec* spec, int high, int normal, int low)
      : o_(o), spec_(spec), rng_(o.seed), high_(high), normal_(normal), low_(low) {}

  Result<std::optional<model::JobSpec>> Next() override {
    // Jobs generated for later days all submit at or after that day's start,
    // so anything earlier than the next day to generate is final.
    while (next_day_ < o_.days && (heap_.empty() || heap_.top().job.submit >= EarliestSubmit(next_day_))) {
      GenerateDay(next_day_++);
    }
    if (heap_.empty()) return std::optional<model::JobSpec>();
    model::JobSpec job = heap_.top().job;
    heap_.pop();
    return std::optional<model::JobSpec>(std::move(job));
  }

  Timestamp start() const override { return o_.start; }
  std::string Describe() const override {
    return StrCat("synth:seed=", o_.seed, ",days=", o_.days, ",jobs_per_hour=", o_.jobs_per_hour);
  }

 private:
  struct Entry {
    model::JobSpec job;
    uint64_t seq;
    bool operator>(const Entry& b) const { return job.submit != b.job.submit ? job.submit > b.job.submit : seq > b.seq; }
  };

  Timestamp DayStart(int day) const { return o_.start + Hours(24) * day; }
  // The earliest submission a day can generate: its start, or its local 09:00
  // when that comes first (more than nine hours east of UTC).
  Timestamp EarliestSubmit(int day) const {
    return std::min(DayStart(day), DayStart(day) - Hours(o_.utc_offset_hours) + Hours(9));
  }

  // Day of the week of `t`'s date, 0 = Monday (1970-01-01 was a Thursday).
  int Weekday(Timestamp t) const {
    const int64_t days = ToUnixSeconds(t) / 86400;
    return static_cast<int>(((days % 7) + 7 + 3) % 7);
  }

  void Add(model::JobSpec job) { heap_.push({std::move(job), seq_++}); }

  // The optional kinds of a regular job (SynthOptions). Draws only for the
  // knobs that are on, so the default workload is unchanged.
  void Decorate(model::JobSpec* j) {
    if (o_.elastic_share > 0 && j->gpus() >= 2 && rng_.Bernoulli(o_.elastic_share)) {
      const int gpus = j->gpus();
      j->gpus_per_worker = std::min(gpus, 2);
      j->workers = gpus / j->gpus_per_worker;
      j->min_workers = std::max(1, j->workers / 2);
      j->max_workers = j->workers * 2;
    }
    if (o_.idle_share > 0 && rng_.Bernoulli(o_.idle_share)) j->phases.train_util = 0.02;
    if (o_.slice_share > 0 && j->gpus() == 1 && rng_.Bernoulli(o_.slice_share)) {
      const double u = rng_.Uniform();
      j->slice_units = u < 0.5 ? 1 : u < 0.8 ? 2 : 3;
      // A100-80GB profiles: 1g.10gb, 2g.20gb, 3g.40gb.
      j->slice = StrCat(j->slice_units, "g.", j->slice_units == 3 ? 40 : 10 * j->slice_units, "gb");
    }
    if (o_.data_share > 0 && rng_.Bernoulli(o_.data_share)) {
      j->data_region = o_.data_region;
      j->data_gb = std::round(rng_.LogNormal(200, 0.8));
      j->output_gb = std::round(j->data_gb / 10);
    }
  }

  model::JobSpec Make(const char* kind, Timestamp submit, int gpus, Duration runtime, int cls, int team) {
    model::JobSpec j;
    j.name = fmt::format("{}-{:06d}", kind, ++counter_);
    j.submit = submit;
    SplitGang(gpus, o_.gpus_per_node, &j.workers, &j.gpus_per_worker);
    j.runtime = runtime;
    j.priority_class = cls;
    j.preemptible = spec_->priority_classes[cls].preemptible;
    j.is_protected = spec_->priority_classes[cls].protect;
    j.team = kTeams[team];
    return j;
  }

  void GenerateDay(int day) {
    const Timestamp day_start = DayStart(day);
    const Duration offset = Hours(o_.utc_offset_hours);
    // The local working day is the calendar date of this UTC day (see `nine`
    // below), so its weekday is that date's, whatever the offset.
    const int weekday = Weekday(day_start);
    const bool workday = weekday < 5;
    const double week = workday ? 1.0 : o_.weekend_factor;

    // Regular jobs, hour by hour (hours in UTC, rates by local hour).
    for (int h = 0; h < 24; ++h) {
      const int local_hour = static_cast<int>(((h + o_.utc_offset_hours) % 24 + 24) % 24);
      const double mean = o_.jobs_per_hour * o_.diurnal[local_hour] * week * o_.scale;
      const int64_t n = rng_.Poisson(mean);
      for (int64_t k = 0; k < n; ++k) {
        const Timestamp t = day_start + Hours(h) + Seconds(rng_.UniformInt(0, 3599));
        const int gpus = Pick(rng_, kRegularGpus);
        const double size_factor = 1.0 + std::log2(static_cast<double>(gpus)) / 4.0;
        const Duration rt = ClampedLogNormal(rng_, Seconds(static_cast<int64_t>(4000 * size_factor)), 1.3,
                                             Minutes(2), Hours(120));
        const int cls = rng_.Bernoulli(0.3) ? low_ : normal_;
        model::JobSpec j = Make("job", t, gpus, rt, cls, Pick(rng_, kTeamWeights));
        Decorate(&j);
        Add(std::move(j));
      }
    }
    if (!workday) return;
    // Working hours in local time, as UTC instants of this day.
    const Timestamp nine = day_start - offset + Hours(9);

    // The morning rush (drawn only when on, so other workloads are unchanged).
    if (o_.morning_rush > 0) {
      const int64_t n = rng_.Poisson(o_.morning_rush * o_.scale);
      for (int64_t k = 0; k < n; ++k) {
        const int gpus = Pick(rng_, kRegularGpus);
        const double size_factor = 1.0 + std::log2(static_cast<double>(gpus)) / 4.0;
        const Duration rt = ClampedLogNormal(rng_, Seconds(static_cast<int64_t>(4000 * size_factor)), 1.3,
                                             Minutes(2), Hours(120));
        const int cls = rng_.Bernoulli(0.3) ? low_ : normal_;
        model::JobSpec j = Make("job", nine + Seconds(rng_.UniformInt(0, 899)), gpus, rt, cls,
                                Pick(rng_, kTeamWeights));
        Decorate(&j);
        Add(std::move(j));
      }
    }

    // Hyper-parameter-search bursts.
    const int64_t bursts = rng_.Poisson(o_.hpo_bursts_per_workday * o_.scale);
    for (int64_t b = 0; b < bursts; ++b) {
      const Timestamp t0 = nine + Seconds(rng_.UniformInt(0, 8 * 3600 - 1));
      const int64_t size = rng_.UniformInt(o_.hpo_min_jobs, o_.hpo_max_jobs);
      const int team = Pick(rng_, kTeamWeights);
      if (o_.elastic_share > 0 && rng_.Bernoulli(o_.elastic_share)) {
        // One elastic asynchronous search instead of many separate trials:
        // its workers run trials; it asks for half of them and may run with a
        // quarter to all. Compute-bound searches keep their GPUs 95% busy;
        // input-bound ones cannot feed more than they asked for.
        const Duration rt = ClampedLogNormal(rng_, Minutes(90), 0.5, Minutes(20), Hours(8));
        model::JobSpec j = Make("search", t0, static_cast<int>(size), rt, low_, team);
        j.gpus_per_worker = 1;
        j.max_workers = static_cast<int>(size);
        j.workers = std::max(1, j.max_workers / 2);
        j.min_workers = std::max(1, j.max_workers / 4);
        j.async = true;
        j.phases.train_util = 0.95;
        if (o_.io_bound_share > 0 && rng_.Bernoulli(o_.io_bound_share)) j.io_bound_workers = j.workers;
        if (o_.idle_share > 0 && rng_.Bernoulli(o_.idle_share)) j.phases.train_util = 0.02;
        Add(std::move(j));
        continue;
      }
      for (int64_t k = 0; k < size; ++k) {
        const Timestamp t = t0 + Seconds(rng_.UniformInt(0, 300));
        const int gpus = rng_.Bernoulli(0.85) ? 1 : 2;
        const Duration rt = ClampedLogNormal(rng_, Minutes(35), 0.5, Minutes(5), Hours(6));
        Add(Make("hpo", t, gpus, rt, low_, team));
      }
    }

    // Long training runs, each followed by a protected final evaluation.
    const int64_t runs = rng_.Poisson(o_.long_runs_per_workday * o_.scale);
    for (int64_t r = 0; r < runs; ++r) {
      const Timestamp t = nine + Seconds(rng_.UniformInt(0, 9 * 3600 - 1));
      const int gpus = Pick(rng_, kLongRunGpus);
      const Duration rt = ClampedLogNormal(rng_, Hours(18), 0.5, Hours(6), Hours(96));
      const int team = Pick(rng_, kTeamWeights);
      Add(Make("train", t, gpus, rt, high_, team));
      const Duration eval = ClampedLogNormal(rng_, Hours(1), 0.3, Minutes(20), Hours(3));
      model::JobSpec e = Make("eval", t + rt, 8, eval, high_, team);
      e.is_protected = true;
      Add(std::move(e));
    }
  }

  SynthOptions o_;
  const model::ClusterSpec* spec_;
  Rng rng_;
  int high_, normal_, low_;
  int next_day_ = 0;
  uint64_t seq_ = 0;
  int64_t counter_ = 0;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap_;
};

}  // namespace

Result<std::unique_ptr<TraceReader>> MakeSynthReader(const SynthOptions& o, const model::ClusterSpec* spec) {
  if (o.days < 1 || o.days > 3660) return absl::InvalidArgumentError("synth: days must be between 1 and 3660");
  if (o.morning_rush < 0) return absl::InvalidArgumentError("synth: morning_rush must not be negative");
  if (o.jobs_per_hour < 0 || o.scale <= 0) return absl::InvalidArgumentError("synth: rates must be positive");
  if (o.hpo_min_jobs < 1 || o.hpo_max_jobs < o.hpo_min_jobs) {
    return absl::InvalidArgumentError("synth: need 1 <= hpo_min_jobs <= hpo_max_jobs");
  }
  if (o.gpus_per_node < 1) return absl::InvalidArgumentError("synth: gpus_per_node must be >= 1");
  int idx[3];
  const std::string* names[3] = {&o.high_class, &o.normal_class, &o.low_class};
  for (int i = 0; i < 3; ++i) {
    idx[i] = spec->PriorityClassIndex(*names[i]);
    if (idx[i] < 0) {
      return absl::InvalidArgumentError(
          StrCat("synth: the configuration has no priority class '", *names[i], "'"));
    }
  }
  return std::unique_ptr<TraceReader>(std::make_unique<SynthReader>(o, spec, idx[0], idx[1], idx[2]));
}

NativeWriter::NativeWriter(std::ostream* out, const model::ClusterSpec* spec, Timestamp start, bool extended)
    : out_(out), spec_(spec), start_(start), extended_(extended) {
  *out_ << "job_id,submit_time,runtime,gpus_per_worker,workers,priority,preemptible,protected,team";
  if (extended_) *out_ << ",min_workers,max_workers,async,io_bound_workers,train_util,slice,data_region,data_gb,output_gb";
  *out_ << "\n";
}

void NativeWriter::Write(const model::JobSpec& j) {
  // Names are quoted where CSV needs it, and numbers written in full ("{}":
  // the shortest text that reads back as the same double), so that the
  // native reader gives back the job that was written.
  std::string line = fmt::format("{},{},{},{},{},{},{},{},{}", CsvField(j.name), (j.submit - start_).count(),
                                 j.runtime.count(), j.gpus_per_worker, j.workers,
                                 CsvField(spec_->priority_classes[j.priority_class].name), j.preemptible,
                                 j.is_protected, CsvField(j.team));
  if (extended_) {
    fmt::format_to(std::back_inserter(line), ",{},{},{},{},{},{},{},{},{}", j.min_workers, j.max_workers, j.async,
                   j.io_bound_workers, j.phases.train_util, CsvField(j.slice), CsvField(j.data_region), j.data_gb,
                   j.output_gb);
  }
  line.push_back('\n');
  *out_ << line;
}

}  // namespace tide::trace
