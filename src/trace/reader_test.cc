#include "trace/reader.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/strings.h"
#include "core/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/cluster.h"
#include "testutil/builders.h"
#include "trace/demand.h"
#include "trace/reader_test_fixture.h"

namespace tide::trace {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using tide::testing::At;
using tide::testing::kT0;


// --- SplitGang ---------------------------------------------------------------

struct SplitCase {
  std::string name;
  int gpus;
  int gpus_per_node;
  int workers;
  int gpus_per_worker;
};

class SplitGangTest : public ::testing::TestWithParam<SplitCase> {};

TEST_P(SplitGangTest, Splits) {
  const auto& c = GetParam();
  int workers = -1, per_worker = -1;
  SplitGang(c.gpus, c.gpus_per_node, &workers, &per_worker);
  EXPECT_EQ(workers, c.workers);
  EXPECT_EQ(per_worker, c.gpus_per_worker);
  // Every worker fits a node and the gang holds at least the GPUs asked for.
  EXPECT_LE(per_worker, std::max(1, c.gpus_per_node));
  EXPECT_GE(workers * per_worker, c.gpus);
  EXPECT_LT(workers * per_worker - c.gpus, workers);  // rounding wastes less than one GPU per worker
}

INSTANTIATE_TEST_SUITE_P(Cases, SplitGangTest,
                         ::testing::Values(SplitCase{"One", 1, 8, 1, 1}, SplitCase{"Four", 4, 8, 1, 4},
                                           SplitCase{"Eight", 8, 8, 1, 8}, SplitCase{"Twelve", 12, 8, 2, 6},
                                           SplitCase{"Sixteen", 16, 8, 2, 8}, SplitCase{"Seventeen", 17, 8, 3, 6},
                                           SplitCase{"SixtyFour", 64, 8, 8, 8},
                                           SplitCase{"TwoGpuNodes", 8, 2, 4, 2},
                                           SplitCase{"OddOnTwoGpuNodes", 3, 2, 2, 2},
                                           SplitCase{"ZeroGpusPerNodeMeansOne", 3, 0, 3, 1}),
                         [](const auto& info) { return info.param.name; });

// --- native ------------------------------------------------------------------

TEST_F(TraceTest, NativeReadsEveryColumn) {
  auto jobs = Read("native_all.csv",
                   "job_id,submit_time,runtime,gpus,priority,preemptible,protected,team\n"
                   "a,0,2h,1,high,,,vision\n"
                   "b,60,3600,12,low,,,nlp\n"
                   "c,60,5400.0,16,normal,true,yes,\n"
                   "d,2026-01-05T01:00:00Z,1h30m,64,low,false,,speech\n"
                   "e,2026-01-05 02:00:00,90s,8,,,,\n"
                   ",7300,0,1,,,,\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 6u);
  const auto& j = *jobs;

  EXPECT_EQ(j[0].name, "a");
  EXPECT_EQ(j[0].submit, kT0);
  EXPECT_EQ(j[0].runtime, Hours(2));
  EXPECT_EQ(j[0].workers, 1);
  EXPECT_EQ(j[0].gpus_per_worker, 1);
  EXPECT_EQ(j[0].priority_class, 0);
  EXPECT_FALSE(j[0].preemptible);
  EXPECT_FALSE(j[0].is_protected);
  EXPECT_EQ(j[0].team, "vision");

  EXPECT_EQ(j[1].submit, At(60));
  EXPECT_EQ(j[1].runtime, Seconds(3600));
  EXPECT_EQ(j[1].workers, 2);
  EXPECT_EQ(j[1].gpus_per_worker, 6);
  EXPECT_EQ(j[1].priority_class, 2);
  EXPECT_TRUE(j[1].preemptible);  // from the class "low"

  EXPECT_EQ(j[2].runtime, Seconds(5400));
  EXPECT_EQ(j[2].gpus(), 16);
  EXPECT_EQ(j[2].workers, 2);
  EXPECT_EQ(j[2].priority_class, 1);
  EXPECT_TRUE(j[2].preemptible);  // overridden
  EXPECT_TRUE(j[2].is_protected);
  EXPECT_EQ(j[2].team, "");

  EXPECT_EQ(j[3].submit, At(3600));
  EXPECT_EQ(j[3].runtime, Seconds(5400));
  EXPECT_EQ(j[3].workers, 8);
  EXPECT_EQ(j[3].gpus_per_worker, 8);
  EXPECT_FALSE(j[3].preemptible);  // "false" overrides the class

  EXPECT_EQ(j[4].submit, At(7200));
  EXPECT_EQ(j[4].runtime, Seconds(90));
  EXPECT_EQ(j[4].priority_class, spec_.default_priority_class);

  EXPECT_EQ(j[5].name, "line7");  // no job_id: named after its line
  EXPECT_EQ(j[5].submit, At(7300));
  EXPECT_EQ(j[5].runtime, Seconds(0));
}

TEST_F(TraceTest, NativeWorkersColumns) {
  auto jobs = Read("native_workers.csv",
                   "submit_time,runtime,gpus_per_worker,workers,gpus\n"
                   "0,1h,4,3,12\n"
                   "10,1h,8,2,\n"
                   "20,1h,1,1,1\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 3u);
  // Given explicitly, the gang is kept as written, not re-split.
  EXPECT_EQ((*jobs)[0].workers, 3);
  EXPECT_EQ((*jobs)[0].gpus_per_worker, 4);
  EXPECT_EQ((*jobs)[1].workers, 2);
  EXPECT_EQ((*jobs)[1].gpus_per_worker, 8);
  EXPECT_EQ((*jobs)[2].gpus(), 1);
}

TEST_F(TraceTest, NativeDescribeAndStart) {
  options_.start = At(86400);
  auto reader = OpenTrace(WriteFile("native_describe.csv", "submit_time,runtime,gpus\n5,1m,1\n"), "native", options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->Describe(), StrCat("native:", PathOf("native_describe.csv")));
  EXPECT_EQ((*reader)->start(), At(86400));
  auto job = (*reader)->Next();
  ASSERT_TRUE(job.ok() && job->has_value());
  EXPECT_EQ((**job).submit, At(86400 + 5));
  auto end = (*reader)->Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
}

TEST_F(TraceTest, NativeUsesTheConfiguredGpusPerNode) {
  options_.gpus_per_node = 4;
  auto jobs = Read("native_gpn.csv", "submit_time,runtime,gpus\n0,1h,12\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ((*jobs)[0].workers, 3);
  EXPECT_EQ((*jobs)[0].gpus_per_worker, 4);
}

struct BadTraceCase {
  std::string name;
  std::string text;
  // Expected after the file's path: ":LINE: field 'x': ..." or ":LINE: ...".
  std::string after_path;
};

class NativeErrorTest : public TraceTest, public ::testing::WithParamInterface<BadTraceCase> {};

TEST_P(NativeErrorTest, NamesFileLineAndField) {
  const auto& c = GetParam();
  const std::string file = StrCat("native_bad_", c.name, ".csv");
  auto jobs = Read(file, c.text, "native");
  ASSERT_FALSE(jobs.ok()) << c.text;
  EXPECT_EQ(jobs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(jobs.status()), StartsWith(StrCat(PathOf(file), c.after_path)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, NativeErrorTest,
    ::testing::Values(
        BadTraceCase{"BadInt", "submit_time,runtime,gpus\n0,1h,1\n10,1h,eight\n",
                     ":3: field 'gpus': expected an integer, got 'eight'"},
        BadTraceCase{"FractionalGpus", "submit_time,runtime,gpus\n0,1h,1.5\n",
                     ":2: field 'gpus': expected an integer, got '1.5'"},
        BadTraceCase{"ZeroGpus", "submit_time,runtime,gpus\n0,1h,0\n",
                     ":2: field 'gpus': must be between 1 and 1048576, got 0"},
        BadTraceCase{"TooManyGpus", "submit_time,runtime,gpus\n0,1h,2000000\n",
                     ":2: field 'gpus': must be between 1 and 1048576, got 2000000"},
        BadTraceCase{"BadSubmitSeconds", "submit_time,runtime,gpus\nsoon,1h,1\n",
                     ":2: field 'submit_time': expected an integer, got 'soon'"},
        BadTraceCase{"BadSubmitTimestamp", "submit_time,runtime,gpus\n2026-13-01T00:00:00Z,1h,1\n",
                     ":2: field 'submit_time': '2026-13-01T00:00:00Z' is not a timestamp"},
        BadTraceCase{"BadRuntime", "submit_time,runtime,gpus\n0,soon,1\n",
                     ":2: field 'runtime': expected seconds or a duration like 2h30m"},
        BadTraceCase{"NegativeRuntime", "submit_time,runtime,gpus\n0,-5,1\n", ":2: field 'runtime': must be between 0 and"},
        BadTraceCase{"HugeRuntime", "submit_time,runtime,gpus\n0,999999999999,1\n",
                     ":2: field 'runtime': must be between 0 and 315360000 seconds"},
        BadTraceCase{"HugeSubmit", "submit_time,runtime,gpus\n99999999999999,5,1\n",
                     ":2: field 'submit_time': must be between 0 and 3153600000"},
        BadTraceCase{"MissingRuntimeColumn", "submit_time,gpus\n0,1\n", ":1: missing column 'runtime'"},
        BadTraceCase{"MissingSubmitColumn", "runtime,gpus\n1h,1\n", ":1: missing column 'submit_time'"},
        BadTraceCase{"MissingGpuColumns", "submit_time,runtime\n0,1h\n", ":1: give the GPUs as a column 'gpus'"},
        BadTraceCase{"WorkersWithoutGpusPerWorker", "submit_time,runtime,gpus,workers\n0,1h,8,1\n",
                     ":1: 'gpus_per_worker' and 'workers' go together"},
        BadTraceCase{"UnknownColumn", "submit_time,runtime,gpus,gpu_model\n0,1h,1,A100\n",
                     ":1: unknown column 'gpu_model'; native columns are job_id, submit_time"},
        BadTraceCase{"OutOfOrderSubmit", "submit_time,runtime,gpus\n100,1h,1\n100,1h,1\n50,1h,1\n",
                     ":4: field 'submit_time': jobs must be in submission order; 2026-01-05T00:00:50Z comes "
                     "before the previous job's 2026-01-05T00:01:40Z"},
        BadTraceCase{"OutOfOrderTimestamps",
                     "submit_time,runtime,gpus\n2026-01-05T10:00:00Z,1h,1\n2026-01-05T09:00:00Z,1h,1\n",
                     ":3: field 'submit_time': jobs must be in submission order"},
        BadTraceCase{"UnknownPriorityClass", "submit_time,runtime,gpus,priority\n0,1h,1,urgent\n",
                     ":2: field 'priority': unknown priority class 'urgent'; the configuration defines high, "
                     "normal, low"},
        BadTraceCase{"GpusMismatch", "submit_time,runtime,gpus,gpus_per_worker,workers\n0,1h,16,8,3\n",
                     ":2: field 'gpus': 16 does not equal gpus_per_worker x workers = 24"},
        BadTraceCase{"ZeroWorkers", "submit_time,runtime,gpus_per_worker,workers\n0,1h,8,0\n",
                     ":2: field 'workers': must be between 1 and 131072, got 0"},
        // 4 x 2^62 wraps to 0 in int64: must not pass as a small gang.
        BadTraceCase{"HugeWorkers", "submit_time,runtime,gpus_per_worker,workers\n0,1h,4,4611686018427387904\n",
                     ":2: field 'workers': must be between 1 and 262144, got 4611686018427387904"},
        BadTraceCase{"ZeroGpusPerWorker", "submit_time,runtime,gpus_per_worker,workers\n0,1h,0,2\n",
                     ":2: field 'gpus_per_worker': must be between 1 and 1048576, got 0"},
        BadTraceCase{"BadPreemptible", "submit_time,runtime,gpus,preemptible\n0,1h,1,sometimes\n",
                     ":2: field 'preemptible': expected true/false, got 'sometimes'"},
        BadTraceCase{"WrongFieldCount", "submit_time,runtime,gpus\n0,1h,1\n\n# note\n5,1h\n",
                     ":5: expected 3 fields (submit_time,runtime,gpus), found 2"}),
    [](const auto& info) { return info.param.name; });

// --- ITP ---------------------------------------------------------------------

TEST_F(TraceTest, ItpWithoutTrailingNewline) {
  auto reader = OpenTrace(WriteFile("itp.csv",
                                    "job_id,submission_time,duration,num_gpu\n"
                                    "a,0,100,1\n"
                                    "b,10,200,16\n"
                                    "c,10,300,12"),  // the real files end like this
                          "auto", options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->Describe(), StrCat("itp:", PathOf("itp.csv")));
  EXPECT_EQ((*reader)->start(), kT0);
  auto jobs = ReadAll(**reader);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 3u);
  const auto& j = *jobs;
  EXPECT_EQ(j[0].name, "a");
  EXPECT_EQ(j[0].submit, kT0);
  EXPECT_EQ(j[0].runtime, Seconds(100));
  EXPECT_EQ(j[0].gpus(), 1);
  EXPECT_EQ(j[1].submit, At(10));
  EXPECT_EQ(j[1].workers, 2);
  EXPECT_EQ(j[1].gpus_per_worker, 8);
  EXPECT_EQ(j[2].name, "c");
  EXPECT_EQ(j[2].runtime, Seconds(300));
  EXPECT_EQ(j[2].workers, 2);
  EXPECT_EQ(j[2].gpus_per_worker, 6);
  for (const auto& job : j) {
    EXPECT_EQ(job.priority_class, spec_.default_priority_class);
    EXPECT_FALSE(job.preemptible);
    EXPECT_EQ(job.team, "");
  }
}

TEST_F(TraceTest, ItpJobsTakeTheDefaultClassAndItsFlags) {
  spec_.default_priority_class = 2;  // low, preemptible
  auto jobs = Read("itp_low.csv", "job_id,submission_time,duration,num_gpu\nx,5,60,1\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].priority_class, 2);
  EXPECT_TRUE((*jobs)[0].preemptible);
}

class ItpErrorTest : public TraceTest, public ::testing::WithParamInterface<BadTraceCase> {};

TEST_P(ItpErrorTest, NamesFileLineAndField) {
  const auto& c = GetParam();
  const std::string file = StrCat("itp_bad_", c.name, ".csv");
  auto jobs = Read(file, c.text, "itp");
  ASSERT_FALSE(jobs.ok()) << c.text;
  EXPECT_EQ(jobs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(jobs.status()), StartsWith(StrCat(PathOf(file), c.after_path)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ItpErrorTest,
    ::testing::Values(
        BadTraceCase{"OutOfOrder", "job_id,submission_time,duration,num_gpu\na,10,1,1\nb,5,1,1",
                     ":3: field 'submission_time': rows must be in submission order (5 < 10)"},
        BadTraceCase{"ZeroGpus", "job_id,submission_time,duration,num_gpu\na,10,1,0\n",
                     ":2: field 'num_gpu': must be between 1 and 1048576, got 0"},
        BadTraceCase{"HugeGpus", "job_id,submission_time,duration,num_gpu\na,10,1,999999999\n",
                     ":2: field 'num_gpu': must be between 1 and 1048576, got 999999999"},
        BadTraceCase{"BadDuration", "job_id,submission_time,duration,num_gpu\na,10,long,1\n",
                     ":2: field 'duration': expected an integer, got 'long'"},
        BadTraceCase{"NegativeSubmit", "job_id,submission_time,duration,num_gpu\na,-1,1,1\n",
                     ":2: field 'submission_time': must be between 0 and 3153600000, got -1"},
        BadTraceCase{"MissingColumn", "job_id,submission_time,duration\na,0,1\n",
                     ":1: ITP trace lacks column 'num_gpu'"}),
    [](const auto& info) { return info.param.name; });

// --- Philly ------------------------------------------------------------------

TEST_F(TraceTest, PhillySortsAndStartsAtMidnightOfTheFirstSubmission) {
  auto reader = OpenTrace(WriteFile("philly.csv",
                                    "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                    "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
                                    "2017-10-09 06:13:03,2951.0,1,2951.0,6214e9\n"
                                    "2017-10-10 00:00:00,10.4,16,166.4,6214e9\n"
                                    "2017-10-08 23:59:59,0.5,12,6.0,b436b2\n"
                                    "2017-10-09 07:01:55,30,2,60,ee9e8c\n"),
                          "auto", options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->Describe(), StrCat("philly:", PathOf("philly.csv")));
  // Midnight UTC of the earliest submission, not of the first row.
  EXPECT_EQ(FormatTimestamp((*reader)->start()), "2017-10-08T00:00:00Z");
  auto jobs = ReadAll(**reader);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 5u);
  const auto& j = *jobs;
  for (size_t i = 1; i < j.size(); ++i) EXPECT_LE(j[i - 1].submit, j[i].submit) << i;

  EXPECT_EQ(FormatTimestamp(j[0].submit), "2017-10-08T23:59:59Z");
  EXPECT_EQ(j[0].team, "b436b2");
  EXPECT_EQ(j[0].runtime, Seconds(1));  // 0.5 s rounds away from zero
  EXPECT_EQ(j[0].workers, 2);
  EXPECT_EQ(j[0].gpus_per_worker, 6);
  EXPECT_EQ(j[0].name, "philly-5");  // named after its line in the file

  EXPECT_EQ(FormatTimestamp(j[1].submit), "2017-10-09T06:13:03Z");
  EXPECT_EQ(j[1].runtime, Seconds(2951));
  EXPECT_EQ(j[1].team, "6214e9");

  // Equal timestamps keep the file's order.
  EXPECT_EQ(j[2].name, "philly-2");
  EXPECT_EQ(j[2].runtime, Seconds(66));
  EXPECT_EQ(j[2].team, "11cb48");
  EXPECT_EQ(j[3].name, "philly-6");
  EXPECT_EQ(j[3].gpus(), 2);

  EXPECT_EQ(FormatTimestamp(j[4].submit), "2017-10-10T00:00:00Z");
  EXPECT_EQ(j[4].runtime, Seconds(10));
  EXPECT_EQ(j[4].workers, 2);
  EXPECT_EQ(j[4].gpus_per_worker, 8);
  for (const auto& job : j) EXPECT_EQ(job.priority_class, spec_.default_priority_class);
}

TEST_F(TraceTest, PhillyWithoutClusterColumnAndEmpty) {
  auto jobs = Read("philly_nocluster.csv", "timestamp,duration,num_gpus,gpu_time\n2017-10-09 07:01:55,60,1,60",
                   "philly");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].team, "");

  // A header alone: no jobs, and time zero stays the configured start.
  auto reader = OpenTrace(WriteFile("philly_empty.csv", "timestamp,duration,num_gpus,gpu_time,cluster\n"), "auto",
                          options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->start(), kT0);
  auto none = ReadAll(**reader);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

class PhillyErrorTest : public TraceTest, public ::testing::WithParamInterface<BadTraceCase> {};

TEST_P(PhillyErrorTest, NamesFileLineAndField) {
  const auto& c = GetParam();
  const std::string file = StrCat("philly_bad_", c.name, ".csv");
  auto jobs = Read(file, c.text, "philly");
  ASSERT_FALSE(jobs.ok()) << c.text;
  EXPECT_EQ(jobs.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(jobs.status()), StartsWith(StrCat(PathOf(file), c.after_path)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PhillyErrorTest,
    ::testing::Values(
        BadTraceCase{"BadTimestamp",
                     "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,1,1,1,a\nyesterday,1,1,1,a\n",
                     ":3: field 'timestamp': 'yesterday' is not a timestamp"},
        BadTraceCase{"BadDuration", "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,long,1,1,a\n",
                     ":2: field 'duration': expected a number, got 'long'"},
        BadTraceCase{"NegativeDuration",
                     "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,-3,1,1,a\n",
                     ":2: field 'duration': must be between 0 and 315360000 seconds"},
        BadTraceCase{"ZeroGpus", "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,3,0,1,a\n",
                     ":2: field 'num_gpus': must be between 1 and 1048576, got 0"},
        BadTraceCase{"MissingColumn", "timestamp,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,1,1,a\n",
                     ":1: Philly trace lacks column 'duration'"},
        // Found by fuzzing: a row centuries later passed, and could not be written back.
        BadTraceCase{"CenturiesLater",
                     "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,3,1,1,a\n"
                     "3017-10-09 07:01:55,3,1,1,a\n",
                     ":3: field 'timestamp': more than 36500 days after the trace's first day (2017-10-09T00:00:00Z)"},
        BadTraceCase{"ControlByteInTimestamp",
                     "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09\x01 07:01:55,3,1,1,a\n",
                     ":2: field 'timestamp': '2017-10-09\\x01 07:01:55' is not a timestamp"}),
    [](const auto& info) { return info.param.name; });

// --- format detection --------------------------------------------------------

struct DetectCase {
  std::string name;
  std::string text;
  std::string kind;  // Describe() prefix
};

class DetectFormatTest : public TraceTest, public ::testing::WithParamInterface<DetectCase> {};

TEST_P(DetectFormatTest, FromTheHeader) {
  const auto& c = GetParam();
  auto reader = OpenTrace(WriteFile(StrCat("detect_", c.name, ".csv"), c.text), "auto", options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_THAT((*reader)->Describe(), StartsWith(c.kind + ":"));
  auto jobs = ReadAll(**reader);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(jobs->size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DetectFormatTest,
    ::testing::Values(DetectCase{"Itp", "job_id,submission_time,duration,num_gpu\na,0,1,1\n", "itp"},
                      DetectCase{"ItpUpperCase", "JOB_ID,Submission_Time,Duration,NUM_GPU\na,0,1,1\n", "itp"},
                      DetectCase{"ItpWithCrLf", "job_id,submission_time,duration,num_gpu\r\na,0,1,1\r\n", "itp"},
                      DetectCase{"Philly", "timestamp,duration,num_gpus,gpu_time,cluster\n2017-10-09 07:01:55,1,1,1,a\n",
                                 "philly"},
                      DetectCase{"Native", "submit_time,runtime,gpus\n0,1h,1\n", "native"},
                      DetectCase{"NativeWithComment", "# made by hand\njob_id,submit_time,runtime,gpus\nx,0,1h,1\n",
                                 "native"}),
    [](const auto& info) { return info.param.name; });

TEST_F(TraceTest, UnknownHeaderIsAClearError) {
  const std::string path = WriteFile("unknown_header.csv", "when,how_long,cards\n0,1,1\n");
  auto reader = OpenTrace(path, "auto", options_);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Msg(reader.status()),
            StrCat(path, ":1: cannot tell the trace format from the header (when,how_long,cards); pass --format, "
                         "one of auto, native, itp, philly, openb, swf"));
}

// Found by fuzzing: a job without an id was written back nameless, and read
// again as "line<N>"; every reader now names it so.
TEST_F(TraceTest, AJobWithoutAnIdIsNamedByItsLine) {
  auto jobs = Read("itp_no_id.csv", "job_id,submission_time,duration,num_gpu\na,0,1,1\n,5,1,1\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[1].name, "line3");
}

// A binary file given as a trace: the message quotes its first bytes escaped
// and cut short, never raw control bytes on the user's terminal.
TEST_F(TraceTest, BinaryFileIsShownEscapedAndCut) {
  std::string bytes = "x\t\xca\xa6\x01\x02\x1b[31m";
  for (int i = 0; i < 500; ++i) {
    const int b = i * 37 % 256;  // every byte but the ones that end a line or a field
    bytes.push_back(static_cast<char>(b == '\n' || b == '\r' || b == '"' || b == ',' ? 0 : b));
  }
  const std::string path = WriteFile("binary.bin", bytes);
  auto reader = OpenTrace(path, "auto", options_);
  ASSERT_FALSE(reader.ok());
  const std::string msg = Msg(reader.status());
  EXPECT_THAT(msg, StartsWith(StrCat(path, ":1: cannot tell the trace format from the header (x\\x09")));
  EXPECT_THAT(msg, HasSubstr("\\x1b[31m"));
  EXPECT_THAT(msg, HasSubstr(" bytes)); pass --format"));
  for (char c : msg) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20) << "control byte in: " << msg;
  EXPECT_LT(msg.size(), path.size() + 300);
}

TEST_F(TraceTest, UnknownFormatName) {
  auto reader = OpenTrace(WriteFile("unknown_format.csv", "submit_time,runtime,gpus\n0,1h,1\n"), "parquet", options_);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(reader.status()), HasSubstr("unknown trace format 'parquet'; known: auto, native, itp, philly, openb, swf"));
}

TEST_F(TraceTest, ExplicitFormatThatDoesNotFit) {
  const std::string path = WriteFile("not_itp.csv", "submit_time,runtime,gpus\n0,1h,1\n");
  auto reader = OpenTrace(path, "itp", options_);
  ASSERT_FALSE(reader.ok());
  EXPECT_THAT(Msg(reader.status()), StartsWith(StrCat(path, ":1: ITP trace lacks column 'job_id'")));
}

TEST_F(TraceTest, EmptyFile) {
  const std::string path = WriteFile("empty.csv", "");
  auto reader = OpenTrace(path, "auto", options_);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(reader.status()), StartsWith(StrCat(path, ": empty file")));
}

TEST_F(TraceTest, MissingFileIsNotFound) {
  const std::string path = PathOf("does_not_exist.csv");
  std::remove(path.c_str());
  auto reader = OpenTrace(path, "auto", options_);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(reader.status()), HasSubstr(path));
}

TEST_F(TraceTest, NeedsASpec) {
  options_.spec = nullptr;
  auto reader = OpenTrace(WriteFile("nospec.csv", "submit_time,runtime,gpus\n0,1h,1\n"), "auto", options_);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TraceFormatsTest, ListsTheFormats) {
  EXPECT_THAT(TraceFormats(), ::testing::ElementsAre("auto", "native", "itp", "philly", "openb", "swf"));
}

// --- SummarizeWorkload -------------------------------------------------------

class PublicTraceTest : public TraceTest {
 protected:
  // The path of a trace under TIDE_TRACES_DIR (which may not exist).
  static std::string TracePath(const std::string& relative) { return StrCat(TIDE_TRACES_DIR, "/", relative); }
};

TEST_F(PublicTraceTest, ItpCluster01) {
  const std::string path = TracePath("itp-2021/cluster01.csv");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "traces not found at " << path;
  auto reader = OpenTrace(path, "auto", options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_THAT((*reader)->Describe(), StartsWith("itp:"));
  auto jobs = ReadAll(**reader);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(jobs->size(), 1595u);
  for (size_t i = 1; i < jobs->size(); ++i) ASSERT_LE((*jobs)[i - 1].submit, (*jobs)[i].submit) << i;
  for (const auto& j : *jobs) {
    ASSERT_GE(j.gpus(), 1) << j.name;
    ASSERT_LE(j.gpus_per_worker, options_.gpus_per_node) << j.name;
    ASSERT_GE(j.submit, kT0) << j.name;
  }
}

TEST_F(PublicTraceTest, Philly) {
  const std::string path = TracePath("philly-2017/philly.csv");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "traces not found at " << path;
  auto reader = OpenTrace(path, "auto", options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_THAT((*reader)->Describe(), StartsWith("philly:"));
  const Timestamp start = (*reader)->start();
  EXPECT_EQ(ToUnixSeconds(start) % 86400, 0) << FormatTimestamp(start);
  auto jobs = ReadAll(**reader);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(jobs->size(), 82247u);
  ASSERT_FALSE(jobs->empty());
  EXPECT_GE(jobs->front().submit, start);
  EXPECT_LT(jobs->front().submit, start + Hours(24));
  for (size_t i = 1; i < jobs->size(); ++i) ASSERT_LE((*jobs)[i - 1].submit, (*jobs)[i].submit) << i;
  for (const auto& j : *jobs) {
    ASSERT_GE(j.gpus(), 1) << j.name;
    ASSERT_LE(j.gpus_per_worker, options_.gpus_per_node) << j.name;
    ASSERT_FALSE(j.team.empty()) << j.name;
  }
}

}  // namespace
}  // namespace tide::trace
