#include "trace/synth.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/strings.h"
#include "core/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/cluster.h"
#include "testutil/builders.h"
#include "trace/reader.h"

namespace tide::trace {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using tide::testing::kT0;

constexpr int kHigh = 0, kNormal = 1, kLow = 2;  // class indices in testing::Spec

// Day of the week of an instant's UTC date, 0 = Monday.
int WeekdayOf(Timestamp t) {
  const int64_t days = ToUnixSeconds(t) / 86400;  // all instants here are after 1970
  return static_cast<int>((days + 3) % 7);       // 1970-01-01 was a Thursday
}

class SynthTest : public ::testing::Test {
 protected:
  SynthTest() : spec_(tide::testing::Spec({tide::testing::Pool("gpu", 8, model::Tier::kOnDemand, 100, 0, 50)})) {}

  std::vector<model::JobSpec> Generate(const SynthOptions& o) {
    auto reader = MakeSynthReader(o, &spec_);
    EXPECT_TRUE(reader.ok()) << reader.status();
    if (!reader.ok()) return {};
    auto jobs = ReadAll(**reader);
    EXPECT_TRUE(jobs.ok()) << jobs.status();
    return jobs.ok() ? *jobs : std::vector<model::JobSpec>{};
  }

  std::string Csv(const SynthOptions& o) {
    std::ostringstream out;
    NativeWriter writer(&out, &spec_, o.start);
    for (const auto& j : Generate(o)) writer.Write(j);
    return out.str();
  }

  static std::vector<model::JobSpec> Named(const std::vector<model::JobSpec>& jobs, std::string_view prefix) {
    std::vector<model::JobSpec> out;
    for (const auto& j : jobs) {
      if (j.name.starts_with(prefix)) out.push_back(j);
    }
    return out;
  }

  model::ClusterSpec spec_;
};

TEST_F(SynthTest, SameOptionsGiveByteIdenticalCsv) {
  SynthOptions o;
  const std::string a = Csv(o);
  const std::string b = Csv(o);
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(a, b);
  EXPECT_THAT(a, StartsWith("job_id,submit_time,runtime,gpus_per_worker,workers,priority,preemptible,protected,team\n"));
}

TEST_F(SynthTest, DifferentSeedGivesADifferentTrace) {
  SynthOptions o;
  SynthOptions other = o;
  other.seed = o.seed + 1;
  EXPECT_NE(Csv(o), Csv(other));
}

TEST_F(SynthTest, DescribeAndStart) {
  SynthOptions o;
  o.seed = 42;
  o.days = 3;
  o.start = kT0 + Hours(24 * 7);
  auto reader = MakeSynthReader(o, &spec_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->start(), o.start);
  EXPECT_THAT((*reader)->Describe(), HasSubstr("seed=42"));
  EXPECT_THAT((*reader)->Describe(), HasSubstr("days=3"));
}

TEST_F(SynthTest, SevenDayTraceHasEveryKindOfJob) {
  SynthOptions o;  // seven days from Monday 2026-01-05
  const auto jobs = Generate(o);
  ASSERT_FALSE(jobs.empty());

  const auto regular = Named(jobs, "job-");
  const auto hpo = Named(jobs, "hpo-");
  const auto train = Named(jobs, "train-");
  const auto eval = Named(jobs, "eval-");
  EXPECT_EQ(regular.size() + hpo.size() + train.size() + eval.size(), jobs.size()) << "a job of an unknown kind";

  // Hyper-parameter searches: bursts of >= hpo_min_jobs small, low, preemptible jobs.
  ASSERT_GE(hpo.size(), static_cast<size_t>(o.hpo_min_jobs));
  for (const auto& j : hpo) {
    EXPECT_EQ(j.priority_class, kLow) << j.name;
    EXPECT_TRUE(j.preemptible) << j.name;
    EXPECT_FALSE(j.is_protected) << j.name;
    EXPECT_TRUE(j.gpus() == 1 || j.gpus() == 2) << j.name;
    EXPECT_GE(j.runtime, Minutes(5)) << j.name;
    EXPECT_LE(j.runtime, Hours(6)) << j.name;
  }

  // Long training runs: >= 16 GPUs, class high, each followed by a protected evaluation.
  ASSERT_FALSE(train.empty());
  ASSERT_EQ(train.size(), eval.size());
  for (const auto& j : train) {
    EXPECT_GE(j.gpus(), 16) << j.name;
    EXPECT_EQ(spec_.priority_classes[j.priority_class].name, "high") << j.name;
    EXPECT_FALSE(j.preemptible) << j.name;
    EXPECT_GE(j.runtime, Hours(6)) << j.name;
    EXPECT_LE(j.runtime, Hours(96)) << j.name;
    const bool has_eval = std::any_of(eval.begin(), eval.end(), [&](const model::JobSpec& e) {
      return e.submit == j.submit + j.runtime && e.team == j.team;
    });
    EXPECT_TRUE(has_eval) << j.name << " has no evaluation at its end";
  }
  for (const auto& j : eval) {
    EXPECT_TRUE(j.is_protected) << j.name;
    EXPECT_EQ(j.priority_class, kHigh) << j.name;
    EXPECT_EQ(j.gpus(), 8) << j.name;
  }

  // Regular jobs: normal or low, within the seven days, run times clamped.
  const std::set<std::string> teams = {"vision", "nlp", "speech", "recsys"};
  for (const auto& j : regular) {
    EXPECT_TRUE(j.priority_class == kNormal || j.priority_class == kLow) << j.name;
    EXPECT_EQ(j.preemptible, j.priority_class == kLow) << j.name;
    EXPECT_GE(j.submit, o.start) << j.name;
    EXPECT_LT(j.submit, o.start + Hours(24 * o.days)) << j.name;
    EXPECT_GE(j.runtime, Minutes(2)) << j.name;
    EXPECT_LE(j.runtime, Hours(120)) << j.name;
    EXPECT_LE(j.gpus_per_worker, o.gpus_per_node) << j.name;
  }
  for (const auto& j : jobs) EXPECT_TRUE(teams.contains(j.team)) << j.name << ": team " << j.team;

  // Mostly single-GPU jobs, with a multi-node tail.
  const auto single = std::count_if(regular.begin(), regular.end(), [](const auto& j) { return j.gpus() == 1; });
  EXPECT_GT(single, static_cast<long>(regular.size() / 2));
  EXPECT_TRUE(std::any_of(regular.begin(), regular.end(), [](const auto& j) { return j.workers > 1; }));

  // Names are unique.
  std::set<std::string> names;
  for (const auto& j : jobs) EXPECT_TRUE(names.insert(j.name).second) << "duplicate " << j.name;
}

TEST_F(SynthTest, WeekendsHaveFewerRegularJobsAndNoBurstsOrLongRuns) {
  SynthOptions o;  // starts on a Monday, UTC working day
  ASSERT_EQ(WeekdayOf(o.start), 0);
  const auto jobs = Generate(o);
  std::array<int, 7> regular{};
  for (const auto& j : Named(jobs, "job-")) ++regular[WeekdayOf(j.submit)];
  const int weekday_min = *std::min_element(regular.begin(), regular.begin() + 5);
  const int weekend_max = std::max(regular[5], regular[6]);
  EXPECT_GT(weekend_max, 0);
  EXPECT_LT(weekend_max, weekday_min) << "Mon..Sun: " << StrJoin(regular, ", ");

  for (const auto& j : Named(jobs, "hpo-")) EXPECT_LT(WeekdayOf(j.submit), 5) << j.name;
  for (const auto& j : Named(jobs, "train-")) EXPECT_LT(WeekdayOf(j.submit), 5) << j.name;
}

TEST_F(SynthTest, BurstsAndLongRunsStartInWorkingHours) {
  SynthOptions o;
  o.days = 14;
  const auto jobs = Generate(o);
  for (const auto& j : Named(jobs, "hpo-")) {
    const int64_t second_of_day = ToUnixSeconds(j.submit) % 86400;
    EXPECT_GE(second_of_day, 9 * 3600) << j.name;
    EXPECT_LE(second_of_day, 17 * 3600 + 300) << j.name;  // a burst may start at 16:59:59 and last 5 min
  }
  for (const auto& j : Named(jobs, "train-")) {
    const int64_t second_of_day = ToUnixSeconds(j.submit) % 86400;
    EXPECT_GE(second_of_day, 9 * 3600) << j.name;
    EXPECT_LT(second_of_day, 18 * 3600) << j.name;
  }
}

TEST_F(SynthTest, HpoBurstsAreTight) {
  SynthOptions o;
  const auto hpo = Named(Generate(o), "hpo-");
  ASSERT_FALSE(hpo.empty());
  // Count bursts as runs of jobs separated by gaps of more than 300 s.
  int bursts = 1;
  for (size_t i = 1; i < hpo.size(); ++i) {
    if (hpo[i].submit - hpo[i - 1].submit > Seconds(300)) ++bursts;
  }
  EXPECT_GE(bursts, 2);
  EXPECT_LE(static_cast<int>(hpo.size()), bursts * o.hpo_max_jobs);
}

struct OffsetCase {
  std::string name;
  int utc_offset_hours;
};

class SynthOffsetTest : public SynthTest, public ::testing::WithParamInterface<OffsetCase> {};

TEST_P(SynthOffsetTest, JobsComeOutInSubmitOrder) {
  SynthOptions o;
  o.utc_offset_hours = GetParam().utc_offset_hours;
  o.days = 14;
  const auto jobs = Generate(o);
  ASSERT_FALSE(jobs.empty());
  for (size_t i = 1; i < jobs.size(); ++i) {
    ASSERT_LE(jobs[i - 1].submit, jobs[i].submit)
        << jobs[i - 1].name << " at " << FormatTimestamp(jobs[i - 1].submit) << " then " << jobs[i].name << " at "
        << FormatTimestamp(jobs[i].submit);
  }
}

TEST_P(SynthOffsetTest, BurstsAndLongRunsFallOnLocalWorkingDays) {
  SynthOptions o;
  o.utc_offset_hours = GetParam().utc_offset_hours;
  o.days = 14;
  const auto jobs = Generate(o);
  const Duration offset = Hours(o.utc_offset_hours);
  std::set<int> burst_days;
  int checked = 0;
  for (const auto& kind : {"hpo-", "train-"}) {
    for (const auto& j : Named(jobs, kind)) {
      const Timestamp local = j.submit + offset;
      const int64_t local_second = ToUnixSeconds(local) % 86400;
      // One failure per test, not one per job.
      ASSERT_LT(WeekdayOf(local), 5) << j.name << " at local " << FormatTimestamp(local);
      ASSERT_GE(local_second, 9 * 3600) << j.name << " at local " << FormatTimestamp(local);
      ASSERT_LT(local_second, 18 * 3600) << j.name << " at local " << FormatTimestamp(local);
      if (std::string_view(kind) == "hpo-") burst_days.insert(static_cast<int>(ToUnixSeconds(local) / 86400));
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
  EXPECT_GE(burst_days.size(), 5u);  // two weeks of working days, about two bursts each
}

INSTANTIATE_TEST_SUITE_P(Cases, SynthOffsetTest,
                         ::testing::Values(OffsetCase{"Utc", 0}, OffsetCase{"Beijing", 8}, OffsetCase{"Tokyo", 9},
                                           OffsetCase{"Sydney", 10}, OffsetCase{"Kiribati", 14},
                                           OffsetCase{"NewYork", -5}, OffsetCase{"Pacific", -8},
                                           OffsetCase{"BakerIsland", -12}),
                         [](const auto& info) { return info.param.name; });

TEST_F(SynthTest, ScaleMultipliesArrivals) {
  SynthOptions o;
  SynthOptions big = o;
  big.scale = 3;
  const auto small_jobs = Generate(o);
  const auto big_jobs = Generate(big);
  EXPECT_GT(big_jobs.size(), 2 * small_jobs.size());
  EXPECT_LT(big_jobs.size(), 4 * small_jobs.size());
}

TEST_F(SynthTest, RegularRateFollowsJobsPerHour) {
  SynthOptions o;
  o.days = 5;  // Monday to Friday
  o.hpo_bursts_per_workday = 0;
  o.long_runs_per_workday = 0;
  const auto jobs = Generate(o);
  double daily_weight = 0;
  for (double w : o.diurnal) daily_weight += w;
  const double expected = o.jobs_per_hour * daily_weight * o.days;
  EXPECT_EQ(Named(jobs, "job-").size(), jobs.size());
  EXPECT_NEAR(static_cast<double>(jobs.size()), expected, 0.15 * expected);
}

TEST_F(SynthTest, MorningRushComesAtLocalNineOnWorkingDaysOnly) {
  SynthOptions o;
  o.days = 7;
  o.utc_offset_hours = 8;
  o.jobs_per_hour = 0.0001;  // next to nothing but the rush
  o.hpo_bursts_per_workday = 0;
  o.long_runs_per_workday = 0;
  o.morning_rush = 40;
  const auto jobs = Generate(o);
  EXPECT_GT(jobs.size(), 5u * 25);
  EXPECT_LT(jobs.size(), 5u * 55 + 3);
  int in_rush = 0;
  for (const auto& j : jobs) {
    const int64_t local = ToUnixSeconds(j.submit) + 8 * 3600;
    const int64_t second_of_day = ((local % 86400) + 86400) % 86400;
    const int weekday = static_cast<int>(((local / 86400) % 7 + 7 + 3) % 7);
    if (second_of_day >= 9 * 3600 && second_of_day < 9 * 3600 + 900 && weekday < 5) ++in_rush;
  }
  EXPECT_GE(in_rush, static_cast<int>(jobs.size()) - 3);
}

TEST_F(SynthTest, GpusPerNodeBoundsWorkers) {
  SynthOptions o;
  o.gpus_per_node = 4;
  for (const auto& j : Generate(o)) EXPECT_LE(j.gpus_per_worker, 4) << j.name;
}

TEST_F(SynthTest, NativeCsvReadsBackToTheSameJobs) {
  SynthOptions o;
  o.days = 3;
  const auto jobs = Generate(o);
  const std::string path = StrCat(::testing::TempDir(), "/tide_synth_test_roundtrip.csv");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    NativeWriter writer(&out, &spec_, o.start);
    for (const auto& j : jobs) writer.Write(j);
  }
  TraceOptions to;
  to.start = o.start;
  to.gpus_per_node = o.gpus_per_node;
  to.spec = &spec_;
  auto reader = OpenTrace(path, "auto", to);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_THAT((*reader)->Describe(), StartsWith("native:"));
  auto back = ReadAll(**reader);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto& a = jobs[i];
    const auto& b = (*back)[i];
    ASSERT_EQ(a.name, b.name);
    EXPECT_EQ(a.submit, b.submit) << a.name;
    EXPECT_EQ(a.runtime, b.runtime) << a.name;
    EXPECT_EQ(a.gpus_per_worker, b.gpus_per_worker) << a.name;
    EXPECT_EQ(a.workers, b.workers) << a.name;
    EXPECT_EQ(a.priority_class, b.priority_class) << a.name;
    EXPECT_EQ(a.preemptible, b.preemptible) << a.name;
    EXPECT_EQ(a.is_protected, b.is_protected) << a.name;
    EXPECT_EQ(a.team, b.team) << a.name;
  }
}

TEST_F(SynthTest, NativeWriterFormat) {
  std::ostringstream out;
  NativeWriter writer(&out, &spec_, kT0);
  model::JobSpec j = tide::testing::JobSpecOf("eval-000007", 90, 8, 2, 3600, kHigh);
  j.is_protected = true;
  j.team = "nlp";
  writer.Write(j);
  EXPECT_EQ(out.str(),
            "job_id,submit_time,runtime,gpus_per_worker,workers,priority,preemptible,protected,team\n"
            "eval-000007,90,3600,8,2,high,false,true,nlp\n");
}

// Found by fuzzing (fuzz/trace_fuzz.cc): names with a comma or a quote broke
// the row, a share of a GPU ("4g") did not read back, and numbers lost digits.
TEST_F(SynthTest, NativeWriterQuotesNamesAndKeepsEveryDigit) {
  model::JobSpec j = tide::testing::JobSpecOf("a,\"b\"", 90, 1, 2, 3600, kHigh);
  j.team = "#ops";
  j.slice = "4g";
  j.slice_units = 4;
  j.phases.train_util = 0.123456789;
  j.data_gb = 1234567.25;
  std::ostringstream out;
  NativeWriter writer(&out, &spec_, kT0, /*extended=*/true);
  writer.Write(j);
  EXPECT_THAT(out.str(), HasSubstr("\n\"a,\"\"b\"\"\",90,3600,1,2,high,false,false,\"#ops\",0,0,false,0,0.123456789,4g,,"
                                   "1234567.25,0\n"));
  const std::string path = StrCat(::testing::TempDir(), "/tide_synth_test_quoted.csv");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << out.str();
  TraceOptions to;
  to.start = kT0;
  to.spec = &spec_;
  auto reader = OpenTrace(path, "native", to);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto back = ReadAll(**reader);
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].name, j.name);
  EXPECT_EQ((*back)[0].team, j.team);
  EXPECT_EQ((*back)[0].slice_units, 4);
  EXPECT_EQ((*back)[0].phases.train_util, j.phases.train_util);
  EXPECT_EQ((*back)[0].data_gb, j.data_gb);
}

struct BadSynthCase {
  std::string name;
  void (*change)(SynthOptions*);
  std::string message;
};

class SynthOptionsTest : public SynthTest, public ::testing::WithParamInterface<BadSynthCase> {};

TEST_P(SynthOptionsTest, RejectsBadOptions) {
  SynthOptions o;
  GetParam().change(&o);
  auto reader = MakeSynthReader(o, &spec_);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(Message(reader.status())), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SynthOptionsTest,
    ::testing::Values(
        BadSynthCase{"ZeroDays", [](SynthOptions* o) { o->days = 0; }, "days must be between 1 and 3660"},
        BadSynthCase{"TooManyDays", [](SynthOptions* o) { o->days = 4000; }, "days must be between 1 and 3660"},
        BadSynthCase{"NegativeRate", [](SynthOptions* o) { o->jobs_per_hour = -1; }, "rates must be positive"},
        BadSynthCase{"NegativeRush", [](SynthOptions* o) { o->morning_rush = -1; }, "morning_rush must not be negative"},
        BadSynthCase{"ZeroScale", [](SynthOptions* o) { o->scale = 0; }, "rates must be positive"},
        BadSynthCase{"HpoMinAboveMax",
                     [](SynthOptions* o) {
                       o->hpo_min_jobs = 10;
                       o->hpo_max_jobs = 5;
                     },
                     "need 1 <= hpo_min_jobs <= hpo_max_jobs"},
        BadSynthCase{"ZeroGpusPerNode", [](SynthOptions* o) { o->gpus_per_node = 0; },
                     "gpus_per_node must be >= 1"},
        BadSynthCase{"UnknownHighClass", [](SynthOptions* o) { o->high_class = "urgent"; },
                     "the configuration has no priority class 'urgent'"},
        BadSynthCase{"UnknownLowClass", [](SynthOptions* o) { o->low_class = "spot"; },
                     "the configuration has no priority class 'spot'"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tide::trace
