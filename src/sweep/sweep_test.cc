#include "sweep/sweep.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::sweep {
namespace {

using ::testing::HasSubstr;

TEST(SweepTest, ListsAndRangesMultiply) {
  auto grid = ExpandSweeps({"reserved=10..20:5", "spot-share=0,0.3"});
  ASSERT_TRUE(grid.ok()) << grid.status();
  ASSERT_EQ(grid->size(), 6u);
  EXPECT_EQ((*grid)[0].Label(), "reserved=10 spot-share=0");
  EXPECT_EQ((*grid)[5].Label(), "reserved=20 spot-share=0.3");
}

TEST(SweepTest, Errors) {
  EXPECT_THAT(std::string(Message(ExpandSweeps({"cores=1"}).status())), HasSubstr("unknown setting 'cores'"));
  EXPECT_THAT(std::string(Message(ExpandSweeps({"reserved"}).status())), HasSubstr("write NAME=VALUES"));
  EXPECT_THAT(std::string(Message(ExpandSweeps({"reserved=5..1"}).status())), HasSubstr("runs backwards"));
  EXPECT_THAT(std::string(Message(ExpandSweeps({"reserved=1..x"}).status())), HasSubstr("FROM..TO:STEP"));
  EXPECT_THAT(std::string(Message(ExpandSweeps({"reserved=1..5:0"}).status())), HasSubstr("FROM..TO:STEP"));
  EXPECT_THAT(std::string(Message(ExpandSweeps({"threshold:gpu=1"}).status())), HasSubstr("only reserved and max"));
}

TEST(SweepTest, AppliesToAConfiguration) {
  auto c = config::ParseConfig(R"(
pools:
  - {name: res, instance_type: {gpus: 8}, tier: reserved, price_per_hour: 55, nodes: 20}
  - {name: od, instance_type: {gpus: 8}, price_per_hour: 100, max_nodes: 50}
policies:
  variants:
    tide-no-reclaim: {reclaim: {enabled: false}}
)",
                               "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  auto grid = ExpandSweeps({"reserved=10", "max=10", "threshold=0", "idle=5m"});
  ASSERT_TRUE(grid.ok());
  ASSERT_TRUE(Apply((*grid)[0], &*c).ok());
  EXPECT_EQ(c->cluster.pools[0].min_nodes, 10);
  EXPECT_EQ(c->cluster.pools[0].max_nodes, 10);
  EXPECT_EQ(c->cluster.pools[1].max_nodes, 10);
  EXPECT_EQ(c->policies.tide.scale_up.trigger.pending_threshold, 0);
  EXPECT_EQ(c->policies.tide.scale_down.idle.idle_after, Minutes(5));
  // The setting reaches whichever policy the points run.
  EXPECT_EQ(c->policies.variants[0].second.scale_up.trigger.pending_threshold, 0);
  EXPECT_EQ(c->policies.variants[0].second.scale_down.idle.idle_after, Minutes(5));
  EXPECT_FALSE(c->policies.variants[0].second.reclaim.enabled);
  EXPECT_EQ(c->policies.reactive.scale_down.idle.idle_after, Minutes(5));
  auto bad = ExpandSweeps({"max:nope=3"});
  ASSERT_TRUE(bad.ok());
  EXPECT_THAT(std::string(Message(Apply((*bad)[0], &*c))), HasSubstr("no pool named 'nope'"));
}

}  // namespace
}  // namespace tide::sweep
