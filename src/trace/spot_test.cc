#include "trace/spot.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::trace {
namespace {

using ::testing::HasSubstr;

// (offset seconds, available) pairs, for comparing series.
using Series = std::vector<std::pair<int64_t, int>>;

Series Of(const std::vector<SupplyPoint>& points) {
  Series out;
  for (const auto& p : points) out.emplace_back(p.offset.count(), p.available);
  return out;
}

// Writes `text` to a fresh file in the test temp dir and returns its path.
std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = StrCat(::testing::TempDir(), "/tide_spot_test_", name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return path;
}

constexpr const char* kBamboo =
    "0,add,node1\n"
    "0,add,node2\n"
    "1500,add,node3\n"     // second 1
    "2000,remove,node1\n"  // second 2: the last row of a second wins
    "2000,add,node4\n"
    "5000,remove,node2\n"
    "5999,remove,node9\n"  // not alive: no change
    "7000,add,node3\n";    // already alive: no change

constexpr const char* kGcloud =
    "2021-12-11, 11:11:30, 55\n"
    "2021-12-11, 11:13:10, 54\n"
    "2021-12-11, 23:59:50, 10\n"
    "2021-12-12, 00:00:10, 0\n";

constexpr const char* kAws =
    "0.000,0\n"
    "0.030,0\n"
    "0.030,9\n"  // 108 s; the last row of a time wins
    "0.5,12\n"
    "1.25,3\n";

TEST(ReadSpotSupplyTest, ReadsEachFormatExplicitlyAndByDetection) {
  struct Case {
    const char* name;
    const char* text;
    const char* format;
    Series series;
  };
  for (const Case& c : std::vector<Case>{
           {"bamboo", kBamboo, "bamboo", {{0, 2}, {1, 3}, {2, 3}, {5, 2}, {7, 2}}},
           {"gcloud", kGcloud, "gcloud", {{0, 55}, {100, 54}, {46100, 10}, {46120, 0}}},
           {"aws", kAws, "aws", {{0, 0}, {108, 9}, {1800, 12}, {4500, 3}}},
       }) {
    SCOPED_TRACE(c.name);
    const std::string path = WriteFile(StrCat(c.name, ".csv"), c.text);
    for (std::string_view format : {std::string_view(c.format), std::string_view("auto")}) {
      SCOPED_TRACE(format);
      const auto s = ReadSpotSupply(path, format);
      ASSERT_TRUE(s.ok()) << Message(s.status());
      EXPECT_EQ(Of(*s), c.series);
    }
    // "auto" is the default.
    const auto s = ReadSpotSupply(path);
    ASSERT_TRUE(s.ok()) << Message(s.status());
    EXPECT_EQ(Of(*s), c.series);
  }
}

TEST(ReadSpotSupplyTest, GcloudRowsNeedNotBeSortedAfterTheFirst) {
  const std::string path = WriteFile("gcloud_unsorted.txt",
                                     "2021-12-11, 10:00:00, 5\n"
                                     "2021-12-11, 10:10:00, 7\n"
                                     "2021-12-11, 10:05:00, 6\n");
  const auto s = ReadSpotSupply(path);
  ASSERT_TRUE(s.ok()) << Message(s.status());
  EXPECT_EQ(Of(*s), (Series{{0, 5}, {300, 6}, {600, 7}}));
}

TEST(ReadSpotSupplyTest, SkipsCommentsBlankLinesAndCarriageReturns) {
  const std::string path = WriteFile("bamboo_crlf.csv",
                                     "# an EC2 spot fleet\r\n"
                                     "\r\n"
                                     "0,add,node1\r\n"
                                     "   \n"
                                     "  # another comment\n"
                                     "3000 , add , node2\r\n");
  const auto s = ReadSpotSupply(path);
  ASSERT_TRUE(s.ok()) << Message(s.status());
  EXPECT_EQ(Of(*s), (Series{{0, 1}, {3, 2}}));
}

TEST(ReadSpotSupplyTest, ErrorsNameTheFileLineAndField) {
  struct Case {
    const char* name;
    const char* text;
    const char* format;
    int line;
    const char* what;
  };
  for (const Case& c : std::vector<Case>{
           {"bamboo_time", "0,add,node1\nsoon,add,node2\n", "auto", 2, "field 'time_ms'"},
           {"bamboo_negative", "0,add,node1\n-5,add,node2\n", "bamboo", 2, "field 'time_ms'"},
           {"bamboo_event", "0,add,node1\n10,join,node2\n", "auto", 2, "field 'event'"},
           {"bamboo_fields", "0,add,node1\n10,add\n", "auto", 2, "expected 3 fields"},
           {"bamboo_line_numbers", "# comment\n\n0,add,node1\n1000,add,node2\nx,add,node3\n", "auto", 5,
            "field 'time_ms'"},
           {"gcloud_time", "2021-12-11, 11:11:30, 5\n2021-12-11, noon, 5\n", "auto", 2, "field 'time'"},
           {"gcloud_count", "2021-12-11, 11:11:30, 5\n2021-12-11, 11:12:00, many\n", "auto", 2,
            "field 'available_instances'"},
           {"gcloud_negative", "2021-12-11, 11:11:30, -1\n", "gcloud", 1, "field 'available_instances'"},
           {"gcloud_earlier", "2021-12-11, 11:11:30, 5\n2021-12-11, 11:00:00, 5\n", "auto", 2,
            "earlier than the first row"},
           {"gcloud_fields", "2021-12-11, 11:11:30, 5\n2021-12-11, 11:12:00\n", "gcloud", 2, "expected 3 fields"},
           {"aws_hours", "0,1\nlater,2\n", "auto", 2, "field 'hours'"},
           {"aws_negative_hours", "0,1\n-1,2\n", "aws", 2, "field 'hours'"},
           {"aws_count", "0,1\n1,-2\n", "auto", 2, "field 'count'"},
           {"aws_fields", "0,1\n1,2,3\n", "auto", 2, "expected 2 fields"},
           {"bamboo_as_aws", "0,add,node1\n", "aws", 1, "expected 2 fields"},
           {"unknown_shape", "a,b,c,d\n", "auto", 1, "cannot tell the spot trace format"},
           {"unknown_shape_after_comments", "# x\n\nhello\n", "auto", 3, "cannot tell the spot trace format"},
       }) {
    SCOPED_TRACE(c.name);
    const std::string path = WriteFile(StrCat(c.name, ".csv"), c.text);
    const auto s = ReadSpotSupply(path, c.format);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    const std::string msg(Message(s.status()));
    EXPECT_THAT(msg, HasSubstr(StrCat(path, ":", c.line, ": ")));
    EXPECT_THAT(msg, HasSubstr(c.what));
  }
}

TEST(ReadSpotSupplyTest, EmptyMissingAndUnknownFormat) {
  auto s = ReadSpotSupply(WriteFile("empty.csv", "# only a comment\n\n"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(Message(s.status())), HasSubstr("empty"));

  s = ReadSpotSupply(StrCat(::testing::TempDir(), "/tide_spot_test_no_such_file.csv"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(Message(s.status())), HasSubstr("no_such_file.csv"));

  s = ReadSpotSupply(WriteFile("format.csv", kAws), "csv");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(Message(s.status())), HasSubstr("unknown spot trace format 'csv'"));
}

TEST(ReadSpotSupplyTest, RealBambooP3Trace) {
  const std::string path = TIDE_TRACES_DIR "/spot-bamboo/traces/p3-trace.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "traces not found: " << path;
  const auto s = ReadSpotSupply(path);
  ASSERT_TRUE(s.ok()) << Message(s.status());
  ASSERT_FALSE(s->empty());
  EXPECT_EQ(s->front().offset, Seconds(0));
  const auto peak = std::max_element(s->begin(), s->end(), [](const SupplyPoint& a, const SupplyPoint& b) {
    return a.available < b.available;
  });
  EXPECT_EQ(peak->available, 32);
  EXPECT_TRUE(std::is_sorted(s->begin(), s->end(), [](const SupplyPoint& a, const SupplyPoint& b) {
    return a.offset < b.offset;
  }));
  for (const auto& p : *s) EXPECT_GE(p.available, 0);
  const auto explicit_format = ReadSpotSupply(path, "bamboo");
  ASSERT_TRUE(explicit_format.ok());
  EXPECT_EQ(Of(*explicit_format), Of(*s));
}

// Found by fuzzing: 1e308 hours overflowed an offset, "nan" passed the test
// for a negative number, and a control byte was echoed raw.
TEST(ReadSpotSupplyTest, OutOfRangeAndControlBytesAreClearErrors) {
  for (const auto& [text, want] : std::vector<std::pair<std::string, std::string>>{
           {"0,1\n1e308,2\n", ":2: field 'hours': expected a number from 0 to 876000, got '1e308'"},
           {"0,1\nnan,2\n", ":2: field 'hours': expected a number from 0 to 876000, got 'nan'"},
           {"0,1\n1,1e300\n", ":2: field 'count': expected a count from 0 to 1048576, got '1e300'"},
           {"0,1\n0.\x01,2\n", ":2: field 'hours': expected a number from 0 to 876000, got '0.\\x01'"}}) {
    const std::string path = WriteFile("spot_fuzz_found.csv", text);
    const auto s = ReadSpotSupply(path, "aws");
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(std::string(Message(s.status())), path + want);
  }
}

}  // namespace
}  // namespace tide::trace
