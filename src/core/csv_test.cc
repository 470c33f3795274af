#include "core/csv.h"

#include <bit>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/rng.h"
#include "core/status.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Msg(const Status& s) { return std::string(Message(s)); }

// Reads every data row as owned strings (the reader's views live only until
// the next row).
Result<std::vector<std::vector<std::string>>> ReadRows(CsvReader& csv) {
  std::vector<std::vector<std::string>> rows;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(auto row, csv.Next());
    if (!row) break;
    rows.emplace_back(row->begin(), row->end());
  }
  return rows;
}

TEST(CsvReaderTest, HeaderIsLowercasedAndTrimmed) {
  std::istringstream in("Job_ID, Submit_Time ,GPUS\n");
  CsvReader csv(&in, "jobs.csv");
  ASSERT_TRUE(csv.ReadHeader().ok());
  EXPECT_THAT(csv.header(), ElementsAre("job_id", "submit_time", "gpus"));
  EXPECT_EQ(csv.Column("job_id"), 0);
  EXPECT_EQ(csv.Column("submit_time"), 1);
  EXPECT_EQ(csv.Column("gpus"), 2);
  EXPECT_EQ(csv.Column("runtime"), -1);
  EXPECT_EQ(csv.name(), "jobs.csv");
  EXPECT_EQ(csv.line(), 1);
}

TEST(CsvReaderTest, ReadsPlainRowsAndTrimsFields) {
  std::istringstream in("a,b,c\n1, two ,3\n4,,6\n");
  CsvReader csv(&in, "t.csv");
  ASSERT_TRUE(csv.ReadHeader().ok());
  auto rows = ReadRows(csv);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(*rows, ElementsAre(ElementsAre("1", "two", "3"), ElementsAre("4", "", "6")));
}

// Rows of every length up to 80 bytes, with commas anywhere (next to each
// other, first, last, either side of each 16-byte block the splitter reads
// at once), blanks around some fields: split as a byte-by-byte reference
// splits them.
TEST(CsvReaderTest, SplitsLongRowsAsAByteByByteScanWould) {
  Rng rng(7);
  const std::string alphabet = "abc019.-_, ,,";
  for (int round = 0; round < 400; ++round) {
    const size_t length = static_cast<size_t>(round % 81);
    std::string line;
    for (size_t i = 0; i < length; ++i) {
      line.push_back(alphabet[static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(alphabet.size()) - 1))]);
    }
    if (StripWhitespace(line).empty()) continue;  // a blank line is skipped, not a row
    std::vector<std::string> want;
    size_t from = 0;
    for (size_t i = 0; i <= line.size(); ++i) {
      if (i == line.size() || line[i] == ',') {
        want.emplace_back(StripWhitespace(std::string_view(line).substr(from, i - from)));
        from = i + 1;
      }
    }
    std::istringstream in(line + "\n");
    CsvReader csv(&in, "t.csv");
    auto row = csv.Next();
    ASSERT_TRUE(row.ok()) << row.status();
    ASSERT_NE(*row, nullptr) << line;
    EXPECT_EQ(std::vector<std::string>((*row)->begin(), (*row)->end()), want) << "line '" << line << "'";
  }
}

TEST(CsvReaderTest, QuotedFieldsWithCommasAndDoubledQuotes) {
  std::istringstream in(
      "id,note,team\n"
      "1,\"a, b\",vision\n"
      "2,\"say \"\"hi\"\"\",\"nlp\"\n"
      "3,\"\",x\n"
      "4,plain\"quote,y\n");
  CsvReader csv(&in, "q.csv");
  ASSERT_TRUE(csv.ReadHeader().ok());
  auto rows = ReadRows(csv);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(*rows, ElementsAre(ElementsAre("1", "a, b", "vision"), ElementsAre("2", "say \"hi\"", "nlp"),
                                 ElementsAre("3", "", "x"), ElementsAre("4", "plain\"quote", "y")));
}

TEST(CsvReaderTest, QuotedHeader) {
  std::istringstream in("\"Job_ID\",\"A, B\"\nx,y\n");
  CsvReader csv(&in, "q.csv");
  ASSERT_TRUE(csv.ReadHeader().ok());
  EXPECT_THAT(csv.header(), ElementsAre("job_id", "a, b"));
}

TEST(CsvReaderTest, QuotedRowWithTrailingEmptyField) {
  std::istringstream in("a,b,c\n\"x\",y,\n");
  CsvReader csv(&in, "q.csv");
  ASSERT_TRUE(csv.ReadHeader().ok());
  auto rows = ReadRows(csv);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(*rows, ElementsAre(ElementsAre("x", "y", "")));
}

TEST(CsvReaderTest, StripsCarriageReturns) {
  std::istringstream in("a,b\r\n1,2\r\n\"3\",\"4\"\r\n");
  CsvReader csv(&in, "crlf.csv");
  ASSERT_TRUE(csv.ReadHeader().ok());
  EXPECT_THAT(csv.header(), ElementsAre("a", "b"));
  auto rows = ReadRows(csv);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(*rows, ElementsAre(ElementsAre("1", "2"), ElementsAre("3", "4")));
}

TEST(CsvReaderTest, SkipsBlankAndCommentLinesButCountsThem) {
  std::istringstream in(
      "# a comment before the header\n"
      "\n"
      "a,b\n"
      "1,2\n"
      "   \n"
      "# another comment, with, commas\n"
      "  # indented comment\n"
      "3,4\n"
      "\r\n"
      "5\n");  // line 10: one field short
  CsvReader csv(&in, "c.csv");
  ASSERT_TRUE(csv.ReadHeader().ok());
  EXPECT_EQ(csv.line(), 3);
  EXPECT_THAT(csv.header(), ElementsAre("a", "b"));

  auto r1 = csv.Next();
  ASSERT_TRUE(r1.ok() && (*r1 != nullptr));
  EXPECT_THAT(**r1, ElementsAre("1", "2"));
  EXPECT_EQ(csv.line(), 4);

  auto r2 = csv.Next();
  ASSERT_TRUE(r2.ok() && (*r2 != nullptr));
  EXPECT_THAT(**r2, ElementsAre("3", "4"));
  EXPECT_EQ(csv.line(), 8);

  auto r3 = csv.Next();
  ASSERT_FALSE(r3.ok());
  EXPECT_THAT(Msg(r3.status()), StartsWith("c.csv:10: "));
}

TEST(CsvReaderTest, LastLineWithoutNewline) {
  std::istringstream in("a,b\n1,2\n3,4");
  CsvReader csv(&in, "n.csv");
  ASSERT_TRUE(csv.ReadHeader().ok());
  auto rows = ReadRows(csv);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(*rows, ElementsAre(ElementsAre("1", "2"), ElementsAre("3", "4")));
  EXPECT_EQ(csv.line(), 3);
}

// The reader takes its input in blocks of 64 KiB: rows that cross a block's
// end, a line longer than a block, a "\r\n" split between two blocks, and a
// last line without a newline read as they would from one string, with the
// right line numbers.
TEST(CsvReaderTest, RowsAcrossBlocksReadWhole) {
  for (const bool crlf : {false, true}) {
    for (const bool final_newline : {false, true}) {
      std::string text = "a,b\n";
      std::vector<std::vector<std::string>> want;
      // Rows of every length from 1 to 300 bytes, past several block ends at
      // every offset; one row longer than two blocks; quoted rows among them.
      for (int i = 0; i < 1200; ++i) {
        const std::string x(static_cast<size_t>(1 + i % 300), static_cast<char>('a' + i % 26));
        const std::string y = i == 600 ? std::string(150000, 'z') : std::to_string(i);
        const bool quoted = i % 7 == 0;
        text += quoted ? StrCat("\"", x, ",\"\"\",", y) : StrCat(x, ",", y);
        want.push_back({quoted ? StrCat(x, ",\"") : x, y});
        if (i + 1 < 1200 || final_newline) text += crlf ? "\r\n" : "\n";
      }
      std::istringstream in(text);
      CsvReader csv(&in, "big.csv");
      ASSERT_TRUE(csv.ReadHeader().ok());
      auto rows = ReadRows(csv);
      ASSERT_TRUE(rows.ok()) << Msg(rows.status());
      ASSERT_EQ(rows->size(), want.size()) << "crlf " << crlf << ", final newline " << final_newline;
      for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ((*rows)[i], want[i]) << "row " << i;
      EXPECT_EQ(csv.line(), 1201);
    }
  }
}

TEST(CsvReaderTest, EndIsStable) {
  std::istringstream in("a\n1\n");
  CsvReader csv(&in, "e.csv");
  ASSERT_TRUE(csv.ReadHeader().ok());
  auto r = csv.Next();
  ASSERT_TRUE(r.ok() && (*r != nullptr));
  for (int i = 0; i < 3; ++i) {
    auto end = csv.Next();
    ASSERT_TRUE(end.ok());
    EXPECT_EQ(*end, nullptr);
  }
}

TEST(CsvReaderTest, HeaderOnlyHasNoRows) {
  std::istringstream in("a,b");
  CsvReader csv(&in, "h.csv");
  ASSERT_TRUE(csv.ReadHeader().ok());
  auto rows = ReadRows(csv);
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
}

TEST(CsvReaderTest, EmptyInputHasNoHeader) {
  for (const char* text : {"", "\n\n", "# only a comment\n"}) {
    std::istringstream in(text);
    CsvReader csv(&in, "empty.csv");
    const Status s = csv.ReadHeader();
    ASSERT_FALSE(s.ok()) << "input: '" << text << "'";
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Msg(s), HasSubstr("empty.csv"));
    EXPECT_THAT(Msg(s), HasSubstr("header"));
  }
}

struct BadRowCase {
  std::string name;
  std::string text;  // a header row, then rows
  std::string want_prefix;
  std::string want_part;
};

class CsvBadRowTest : public ::testing::TestWithParam<BadRowCase> {};

TEST_P(CsvBadRowTest, ErrorNamesFileAndLine) {
  const auto& c = GetParam();
  std::istringstream in(c.text);
  CsvReader csv(&in, "bad.csv");
  ASSERT_TRUE(csv.ReadHeader().ok());
  auto rows = ReadRows(csv);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(rows.status()), StartsWith(c.want_prefix));
  EXPECT_THAT(Msg(rows.status()), HasSubstr(c.want_part));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CsvBadRowTest,
    ::testing::Values(
        BadRowCase{"TooFewFields", "a,b,c\n1,2,3\n4,5\n", "bad.csv:3: ", "expected 3 fields (a,b,c), found 2"},
        BadRowCase{"TooManyFields", "a,b\n1,2,3\n", "bad.csv:2: ", "expected 2 fields (a,b), found 3"},
        BadRowCase{"TooManyQuotedFields", "a,b\n\"1\",\"2\",\"3\"\n", "bad.csv:2: ", "found 3"},
        BadRowCase{"AfterSkippedLines", "a,b\n\n#c\n1,2\n\n1\n", "bad.csv:6: ", "found 1"},
        BadRowCase{"UnterminatedQuote", "a,b\n\"1,2\n", "bad.csv:2: ", "unterminated quoted field"},
        BadRowCase{"TextAfterClosingQuote", "a,b\n\"1\"x,2\n", "bad.csv:2: ", "text after a closing quote"}),
    [](const auto& info) { return info.param.name; });

// A reader positioned on line 7 of "f.csv", for the typed accessors.
class CsvTypedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    in_.str("a\n\n\n\n\n\n1\n");
    ASSERT_TRUE(csv_.ReadHeader().ok());
    auto r = csv_.Next();
    ASSERT_TRUE(r.ok() && (*r != nullptr));
    ASSERT_EQ(csv_.line(), 7);
  }
  std::istringstream in_;
  CsvReader csv_{&in_, "f.csv"};
};

struct IntCase {
  std::string name;
  std::string value;
  int64_t want;
};

class CsvIntGoodTest : public CsvTypedTest, public ::testing::WithParamInterface<IntCase> {};

TEST_P(CsvIntGoodTest, Parses) {
  auto v = csv_.Int("gpus", GetParam().value);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(Cases, CsvIntGoodTest,
                         ::testing::Values(IntCase{"Zero", "0", 0}, IntCase{"Positive", "42", 42},
                                           IntCase{"Negative", "-7", -7},
                                           IntCase{"IntegralFloat", "66.0", 66},
                                           IntCase{"IntegralFloatNoFraction", "66.", 66},
                                           IntCase{"LargeIntegralFloat", "2951.000", 2951},
                                           IntCase{"Large", "9000000000", 9000000000}),
                         [](const auto& info) { return info.param.name; });

struct BadValueCase {
  std::string name;
  std::string value;
};

class CsvIntBadTest : public CsvTypedTest, public ::testing::WithParamInterface<BadValueCase> {};

TEST_P(CsvIntBadTest, ErrorNamesFileLineAndField) {
  auto v = csv_.Int("gpus", GetParam().value);
  ASSERT_FALSE(v.ok()) << "parsed '" << GetParam().value << "' as " << *v;
  EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Msg(v.status()), "f.csv:7: field 'gpus': expected an integer, got '" + GetParam().value + "'");
}

INSTANTIATE_TEST_SUITE_P(Cases, CsvIntBadTest,
                         ::testing::Values(BadValueCase{"Empty", ""}, BadValueCase{"Word", "eight"},
                                           BadValueCase{"Fraction", "66.5"}, BadValueCase{"Suffix", "8x"},
                                           BadValueCase{"Overflow", "99999999999999999999"},
                                           BadValueCase{"Infinity", "inf"}, BadValueCase{"NaN", "nan"}),
                         [](const auto& info) { return info.param.name; });

TEST_F(CsvTypedTest, DoubleParses) {
  auto v = csv_.Double("duration", "2951.5");
  ASSERT_TRUE(v.ok());
  EXPECT_DOUBLE_EQ(*v, 2951.5);
  v = csv_.Double("duration", "66");
  ASSERT_TRUE(v.ok());
  EXPECT_DOUBLE_EQ(*v, 66);
  v = csv_.Double("duration", "-1e3");
  ASSERT_TRUE(v.ok());
  EXPECT_DOUBLE_EQ(*v, -1000);
}

// Short decimals are read without from_chars; every one must be the very
// double from_chars gives (the same bits), and text it refuses is refused.
TEST_F(CsvTypedTest, DoubleReadsShortDecimalsExactlyAsFromChars) {
  Rng rng(17);
  std::vector<std::string> texts = {"0", "-0", "0.85", "5.", ".5", "-.5", "000.100", "123456789012345",
                                    "1234567890123456", "0.000000000000001", "9007199254740993", "99999.9999999999",
                                    "1.7976931348623157", "-", ".", "-.", "1..2", "+1", "1e5", "0x10", "", " 1"};
  for (int i = 0; i < 20000; ++i) {
    std::string t = rng.Bernoulli(0.3) ? "-" : "";
    const int before = static_cast<int>(rng.UniformInt(0, 9)), after = static_cast<int>(rng.UniformInt(0, 9));
    for (int k = 0; k < before; ++k) t += static_cast<char>('0' + rng.UniformInt(0, 9));
    if (after > 0 || rng.Bernoulli(0.5)) t += '.';
    for (int k = 0; k < after; ++k) t += static_cast<char>('0' + rng.UniformInt(0, 9));
    texts.push_back(t);
  }
  for (const std::string& t : texts) {
    double want = 0;
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), want);
    const bool ok = ec == std::errc() && p == t.data() + t.size() && !t.empty();
    const auto got = csv_.Double("x", t);
    ASSERT_EQ(got.ok(), ok) << "'" << t << "'";
    if (ok) {
      ASSERT_EQ(std::bit_cast<uint64_t>(*got), std::bit_cast<uint64_t>(want)) << "'" << t << "'";
    }
  }
}

TEST_F(CsvTypedTest, DoubleErrorNamesFileLineAndField) {
  for (const char* bad : {"", "abc", "1.5s", "nan", "inf"}) {
    auto v = csv_.Double("duration", bad);
    ASSERT_FALSE(v.ok()) << bad;
    EXPECT_EQ(Msg(v.status()), StrCat("f.csv:7: field 'duration': expected a number, got '", bad, "'"));
  }
}

TEST_F(CsvTypedTest, BoolAcceptsCommonSpellings) {
  for (const char* t : {"1", "true", "TRUE", "True", "yes", "Y", "y"}) {
    auto v = csv_.Bool("preemptible", t);
    ASSERT_TRUE(v.ok()) << t;
    EXPECT_TRUE(*v) << t;
  }
  for (const char* f : {"0", "false", "False", "no", "N", ""}) {
    auto v = csv_.Bool("preemptible", f);
    ASSERT_TRUE(v.ok()) << f;
    EXPECT_FALSE(*v) << f;
  }
}

TEST_F(CsvTypedTest, BoolErrorNamesFileLineAndField) {
  auto v = csv_.Bool("preemptible", "maybe");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(Msg(v.status()), "f.csv:7: field 'preemptible': expected true/false, got 'maybe'");
}

TEST_F(CsvTypedTest, FieldAndLineErrors) {
  EXPECT_EQ(Msg(csv_.FieldError("team", "too long")), "f.csv:7: field 'team': too long");
  EXPECT_EQ(Msg(csv_.LineError("bad row")), "f.csv:7: bad row");
  EXPECT_EQ(csv_.LineError("x").code(), absl::StatusCode::kInvalidArgument);
}

TEST(CsvReaderOpenTest, MissingFileIsNotFound) {
  const std::string path = ::testing::TempDir() + "/tide_csv_test_no_such_file.csv";
  auto r = CsvReader::Open(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(r.status()), HasSubstr(path));
}

TEST(CsvReaderOpenTest, ReadsAFileAndNamesItInErrors) {
  const std::string path = ::testing::TempDir() + "/tide_csv_test_open.csv";
  {
    std::ofstream out(path, std::ios::binary);
    out << "A,B\r\n1,2\r\n3";
  }
  auto r = CsvReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status();
  CsvReader& csv = **r;
  EXPECT_EQ(csv.name(), path);
  ASSERT_TRUE(csv.ReadHeader().ok());
  EXPECT_THAT(csv.header(), ElementsAre("a", "b"));
  auto row = csv.Next();
  ASSERT_TRUE(row.ok() && (*row != nullptr));
  EXPECT_THAT(**row, ElementsAre("1", "2"));
  auto bad = csv.Next();
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(Msg(bad.status()), StartsWith(path + ":3: "));
}

}  // namespace
}  // namespace tide
