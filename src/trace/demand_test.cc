// SummarizeWorkload and SummarizingReader (trace/demand.h) on traces read
// through the readers.
#include "trace/demand.h"

#include <memory>
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "trace/reader_test_fixture.h"

namespace tide::trace {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using tide::testing::At;
using tide::testing::kT0;

TEST_F(TraceTest, SummarizeWorkloadOnAHandComputedTrace) {
  // [0, 3600) 8 GPUs; [1800, 5400) 4; [3600, 5400) 16; [7200, 9000) 1.
  // At 3600 the first job ends as the third starts: 4 + 16 = 20 is the peak
  // (28 if an ending job were still counted).
  auto reader = OpenTrace(WriteFile("summary.csv",
                                    "submit_time,runtime,gpus\n"
                                    "0,1h,8\n"
                                    "1800,1h,4\n"
                                    "3600,30m,16\n"
                                    "7200,30m,1\n"),
                          "auto", options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto s = SummarizeWorkload(**reader);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->jobs, 4);
  EXPECT_EQ(s->demand.peak_gpus, 20);
  // GPU-seconds: 8*3600 + 4*3600 + 16*1800 + 1*1800 = 73800, over 9000 s from the start.
  EXPECT_DOUBLE_EQ(s->gpu_hours, 73800.0 / 3600);
  EXPECT_DOUBLE_EQ(s->demand.mean_gpus, 73800.0 / 9000);
  EXPECT_EQ(s->first_submit, kT0);
  EXPECT_EQ(s->last_submit, At(7200));
  EXPECT_EQ(s->max_gpus_per_job, 16);
}

// A reader that sums up the jobs it passes on gives the same summary as a
// pass of its own, once the stream ends, and nothing before.
TEST_F(TraceTest, SummarizingReaderSumsUpWhatItPassesOn) {
  const std::string path = WriteFile("summary_pass.csv",
                                     "submit_time,runtime,gpus\n"
                                     "0,1h,8\n"
                                     "1800,1h,4\n"
                                     "3600,30m,16\n"
                                     "7200,30m,1\n");
  auto plain = OpenTrace(path, "auto", options_);
  ASSERT_TRUE(plain.ok()) << plain.status();
  auto want = SummarizeWorkload(**plain);
  ASSERT_TRUE(want.ok()) << want.status();
  auto inner = OpenTrace(path, "auto", options_);
  ASSERT_TRUE(inner.ok()) << inner.status();
  std::optional<WorkloadSummary> got;
  SummarizingReader reader(std::move(*inner), &got);
  EXPECT_EQ(reader.Describe(), (*plain)->Describe());
  int passed = 0;
  while (true) {
    auto job = reader.Next();
    ASSERT_TRUE(job.ok()) << job.status();
    if (!*job) break;
    ++passed;
    EXPECT_FALSE(got.has_value()) << "set before the stream ended";
  }
  EXPECT_EQ(passed, 4);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->jobs, want->jobs);
  EXPECT_EQ(got->demand.peak_gpus, want->demand.peak_gpus);
  EXPECT_DOUBLE_EQ(got->demand.mean_gpus, want->demand.mean_gpus);
  EXPECT_DOUBLE_EQ(got->gpu_hours, want->gpu_hours);
  EXPECT_EQ(got->first_submit, want->first_submit);
  EXPECT_EQ(got->last_submit, want->last_submit);
  EXPECT_EQ(got->max_gpus_per_job, want->max_gpus_per_job);
}

TEST_F(TraceTest, SummarizeWorkloadMeanCountsFromTheTraceStart) {
  // One 8-GPU job for an hour, submitted an hour after time zero: the mean is
  // over the two hours from the start.
  auto reader = OpenTrace(WriteFile("summary_late.csv", "submit_time,runtime,gpus\n3600,1h,8\n"), "auto", options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto s = SummarizeWorkload(**reader);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->demand.peak_gpus, 8);
  EXPECT_DOUBLE_EQ(s->demand.mean_gpus, 4.0);
  EXPECT_DOUBLE_EQ(s->gpu_hours, 8.0);
}

TEST_F(TraceTest, SummarizeEmptyWorkload) {
  auto reader = OpenTrace(WriteFile("summary_empty.csv", "submit_time,runtime,gpus\n"), "auto", options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto s = SummarizeWorkload(**reader);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->jobs, 0);
  EXPECT_EQ(s->demand.peak_gpus, 0);
  EXPECT_EQ(s->demand.mean_gpus, 0);
  EXPECT_EQ(s->gpu_hours, 0);
  EXPECT_EQ(s->max_gpus_per_job, 0);
}

TEST_F(TraceTest, SummarizeWorkloadPassesErrorsOn) {
  const std::string path = WriteFile("summary_bad.csv", "submit_time,runtime,gpus\n0,1h,8\n10,1h,x\n");
  auto reader = OpenTrace(path, "auto", options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto s = SummarizeWorkload(**reader);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(Msg(s.status()), StartsWith(StrCat(path, ":3: field 'gpus'")));
}

// --- the public traces, when present -----------------------------------------

}  // namespace
}  // namespace tide::trace
