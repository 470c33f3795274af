// The `simulation:` section's spot supply trace: parsing records it and reads
// nothing; ReadSupplyTraces (run by LoadConfig) reads it.
#include <fstream>
#include <string>

#include "config/config.h"
#include "core/status.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::config {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

std::string Msg(const Status& s) { return std::string(Message(s)); }

constexpr char kMinimal[] = R"(pools:
  - name: gpu
    instance_type: {gpus: 8}
    price_per_hour: 100
)";

// Writes `text` to a fresh file in the test temp dir and returns its path.
std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = StrCat(::testing::TempDir(), "/tide_config_test_", name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return path;
}

// A configuration naming a spot supply trace; `trace` relative to it.
std::string WithSupply(const std::string& trace) {
  return StrCat("simulation:\n  spot:\n    supply: ", trace, "\n", kMinimal);
}

TEST(SupplyTraceTest, SupplyTraceIsRecordedNotRead) {
  // The trace does not exist: parsing reads no file, so this parses.
  auto c = ParseConfig(WithSupply("traces/p3.csv"), "dir/cluster.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->simulation.supply_trace.has_value());
  const SupplyTraceFile& t = *c->simulation.supply_trace;
  EXPECT_EQ(t.path, "dir/traces/p3.csv");
  EXPECT_EQ(t.source, "traces/p3.csv");
  EXPECT_EQ(t.format, "auto");
  EXPECT_EQ(t.where, "dir/cluster.yaml:3:13: simulation.spot.supply");
  EXPECT_THAT(c->simulation.world.spot.supply, IsEmpty());
  EXPECT_EQ(c->simulation.world.spot.supply_source, "");

  // Reading it then fails at the field that names it.
  Status s = ReadSupplyTraces(&*c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Msg(s), "dir/cluster.yaml:3:13: simulation.spot.supply: dir/traces/p3.csv: cannot open the spot supply trace");

  auto none = ParseConfig(kMinimal, "min.yaml");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->simulation.supply_trace.has_value());
  EXPECT_TRUE(ReadSupplyTraces(&*none).ok());
}

TEST(SupplyTraceTest, UnknownSupplyFormatIsAParseError) {
  auto c = ParseConfig(StrCat("simulation:\n  spot: {supply: p3.csv, supply_format: azure}\n", kMinimal), "f.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(Msg(c.status()),
            "f.yaml:2:18: simulation.spot.supply: unknown spot trace format 'azure'; known: auto, bamboo, gcloud, aws");
}

TEST(SupplyTraceTest, ReadsTheSupplyTraceItNames) {
  WriteTemp("supply-aws.csv", "0,4\n1,2\n");
  const std::string path = WriteTemp("supply.yaml", WithSupply("tide_config_test_supply-aws.csv"));
  auto c = LoadConfig(path);
  ASSERT_TRUE(c.ok()) << c.status();
  const auto& spot = c->simulation.world.spot;
  ASSERT_EQ(spot.supply.size(), 2u);
  EXPECT_EQ(spot.supply[0].offset, Seconds(0));
  EXPECT_EQ(spot.supply[0].available, 4);
  EXPECT_EQ(spot.supply[1].offset, Hours(1));
  EXPECT_EQ(spot.supply[1].available, 2);
  EXPECT_EQ(spot.supply_source, "tide_config_test_supply-aws.csv");

  // A bad row: the configuration's line and field, then the trace's file and line.
  WriteTemp("supply-bad.csv", "0,4\nsoon,2\n");
  const std::string bad = WriteTemp("supply-bad.yaml", WithSupply("tide_config_test_supply-bad.csv"));
  auto b = LoadConfig(bad);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(b.status()), StartsWith(StrCat(bad, ":3:13: simulation.spot.supply: ")));
  EXPECT_THAT(Msg(b.status()),
              HasSubstr("tide_config_test_supply-bad.csv:2: field 'hours': expected a number from 0 to 876000, got 'soon'"));
}

}  // namespace
}  // namespace tide::config
