// The SWF reader on small logs written here (no SWF trace ships with tide).
#include <fstream>
#include <string>
#include <vector>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/builders.h"
#include "trace/demand.h"
#include "trace/reader.h"

namespace tide::trace {
namespace {

using ::testing::StartsWith;
using tide::testing::kT0;

std::string Path(const std::string& name) { return StrCat(::testing::TempDir(), "/tide_swf_test_", name); }

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = Path(name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return path;
}

// One job line: the fields tide reads, the rest -1.
std::string Line(int job, int64_t submit, int64_t run, int alloc, int req = -1, int user = 3) {
  return StrCat(job, " ", submit, " 5 ", run, " ", alloc, " -1 -1 ", req, " 3600 -1 1 ", user, " 1 -1 1 -1 -1 -1\n");
}

class SwfTest : public ::testing::Test {
 protected:
  SwfTest() : spec_(tide::testing::Spec({tide::testing::Pool("gpu", 8, model::Tier::kOnDemand, 100, 0, 50)})) {
    options_.start = kT0;
    options_.gpus_per_node = 8;
    options_.spec = &spec_;
  }

  model::ClusterSpec spec_;
  TraceOptions options_;
};

// A fixture in the archive's layout: header comments, a cancelled job, a job
// with only its requested processors known, and two that used nothing.
const std::string kLog = StrCat(
    "; Version: 2.2\n"
    "; Computer: a test cluster\n"
    "; UnixStartTime: 1000000000\n"
    "; MaxProcs: 64\n"
    ";\n",
    Line(1, 0, 3600, 4), Line(2, 10, 0, 4),                                      // ran for no time: skipped
    "\t3  20  0  7200  -1  -1  -1  16  7200  -1  5  7  1  -1  1  -1  -1  -1\n",  // cancelled, requested only
    "; a comment between jobs\n", "\n", Line(4, 30, 60, -1, -1, -1),             // no processors: skipped
    "5 30.2 5 90.4 1 -1 -1 1 -1 -1 1 3 1 -1 1 -1 -1 -1\n");                      // times may be decimals

TEST_F(SwfTest, ReadsJobsAndSkipsThoseThatUsedNothing) {
  auto reader = OpenTrace(Write("log.swf", kLog), "auto", options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->Describe(), StrCat("swf:", Path("log.swf")));
  EXPECT_EQ((*reader)->start(), FromUnixSeconds(1000000000));
  auto jobs = ReadAll(**reader);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_THAT((*reader)->Notes(), ::testing::HasSubstr("skipped 2 records"));

  const auto& a = (*jobs)[0];
  EXPECT_EQ(a.name, "1");
  EXPECT_EQ(a.submit, FromUnixSeconds(1000000000));
  EXPECT_EQ(a.runtime, Seconds(3600));
  EXPECT_EQ(a.gpus(), 4);
  EXPECT_EQ(a.team, "u3");
  const auto& b = (*jobs)[1];
  EXPECT_EQ(b.name, "3");
  EXPECT_EQ(b.submit, FromUnixSeconds(1000000020));
  EXPECT_EQ(b.workers, 2);  // 16 requested processors -> 2 x 8 GPUs
  EXPECT_EQ(b.gpus_per_worker, 8);
  EXPECT_EQ(b.team, "u7");
  EXPECT_EQ((*jobs)[2].runtime, Seconds(90));
  EXPECT_EQ((*jobs)[2].priority_class, spec_.default_priority_class);
}

TEST_F(SwfTest, ProcessorsPerGpuRoundsUp) {
  options_.swf_procs_per_gpu = 4;
  auto reader =
      OpenTrace(Write("per_gpu.swf", StrCat(Line(1, 0, 10, 1), Line(2, 0, 10, 4), Line(3, 0, 10, 9))), "swf", options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->start(), kT0);  // no UnixStartTime: the configured time zero
  auto jobs = ReadAll(**reader);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].gpus(), 1);
  EXPECT_EQ((*jobs)[1].gpus(), 1);
  EXPECT_EQ((*jobs)[2].gpus(), 3);
}

TEST_F(SwfTest, SummaryOfAnSwfLog) {
  auto reader = OpenTrace(Write("summary.swf", kLog), "auto", options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  auto s = SummarizeWorkload(**reader);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->jobs, 3);
  EXPECT_EQ(s->demand.peak_gpus, 21);  // 4 + 16 + 1 at t = 30
}

struct DetectCase {
  std::string name;
  std::string text;
  bool swf;
};

class SwfDetectTest : public SwfTest, public ::testing::WithParamInterface<DetectCase> {};

TEST_P(SwfDetectTest, AutoDetects) {
  const auto& c = GetParam();
  auto reader = OpenTrace(Write(StrCat("detect_", c.name), c.text), "auto", options_);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->Describe().rfind("swf:", 0) == 0, c.swf) << (*reader)->Describe();
}

INSTANTIATE_TEST_SUITE_P(Cases, SwfDetectTest,
                         ::testing::Values(DetectCase{"HeaderComment", "; Version: 2.2\n" + Line(1, 0, 1, 1), true},
                                           DetectCase{"NoHeader", "\n" + Line(1, 0, 1, 1), true},
                                           DetectCase{"OnlyComments", ";\n", true},
                                           DetectCase{"Csv", "submit_time,runtime,gpus\n0,1h,1\n", false}),
                         [](const auto& info) { return info.param.name; });

struct BadCase {
  std::string name;
  std::string text;
  std::string after_path;  // the message after "<path>"
};

class SwfErrorTest : public SwfTest, public ::testing::WithParamInterface<BadCase> {};

TEST_P(SwfErrorTest, NamesFileLineAndField) {
  const auto& c = GetParam();
  const std::string file = StrCat("bad_", c.name, ".swf");
  auto reader = OpenTrace(Write(file, c.text), "swf", options_);
  Status status = reader.status();
  if (reader.ok()) status = ReadAll(**reader).status();
  ASSERT_FALSE(status.ok()) << c.text;
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(Message(status)), StartsWith(StrCat(Path(file), c.after_path)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SwfErrorTest,
    ::testing::Values(
        BadCase{"TooFewFields", "; h\n1 0 5 10 4\n", ":2: expected 18 whitespace-separated fields, found 5"},
        BadCase{"CommaSeparated", "1,0,5,10,4,-1,-1,-1,-1,-1,1,3,1,-1,1,-1,-1,-1\n",
                ":1: expected 18 whitespace-separated fields, found 1"},
        BadCase{"NotANumber", "; h\n1 0 5 ten 4 -1 -1 -1 -1 -1 1 3 1 -1 1 -1 -1 -1\n",
                ":2: field 4 'run_time': expected a number, got 'ten'"},
        BadCase{"BadUser", "1 0 5 10 4 -1 -1 -1 -1 -1 1 bob 1 -1 1 -1 -1 -1\n",
                ":1: field 12 'user_id': expected a number, got 'bob'"},
        BadCase{"OutOfOrder", Line(1, 50, 10, 1) + Line(2, 40, 10, 1),
                ":2: field 2 'submit_time': jobs must be in submission order (40 < 50)"},
        BadCase{"NegativeSubmit", Line(1, -5, 10, 1), ":1: field 2 'submit_time': must be between 0 and"},
        BadCase{"FractionalProcessors", "1 0 5 10 2.5 -1 -1 -1 -1 -1 1 3 1 -1 1 -1 -1 -1\n",
                ":1: field 5 'allocated_processors': expected a whole number of processors, got '2.5'"},
        BadCase{"HugeRunTime", Line(1, 0, int64_t{400} * 365 * 86400, 1), ":1: field 4 'run_time': must be at most"},
        BadCase{"BadStartTime", "; UnixStartTime: soon\n" + Line(1, 0, 10, 1),
                ":1: header 'UnixStartTime': expected seconds since 1970"},
        // Found by fuzzing: 1e300 processors overflowed a conversion; inf passed.
        BadCase{"HugeProcessors", "1 0 5 10 1e300 -1 -1 -1 -1 -1 1 3 1 -1 1 -1 -1 -1\n",
                ":1: field 5 'allocated_processors': at most 1048576 processors, got 1e300"},
        BadCase{"InfiniteRunTime", "1 0 5 inf 4 -1 -1 -1 -1 -1 1 3 1 -1 1 -1 -1 -1\n",
                ":1: field 4 'run_time': expected a number, got 'inf'"},
        // Found by fuzzing: a control byte was echoed raw.
        BadCase{"ControlByte", "1 0 5 10 4\x1e -1 -1 -1 -1 -1 1 3 1 -1 1 -1 -1 -1\n",
                ":1: field 5 'allocated_processors': expected a number, got '4\\x1e'"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tide::trace
