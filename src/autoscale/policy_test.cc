#include "autoscale/policy.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/builders.h"

namespace tide::autoscale {
namespace {

using ::testing::HasSubstr;
using model::Tier;
using testing::Pool;

class PolicyTest : public ::testing::Test {
 protected:
  model::ClusterSpec spec_ = testing::Spec({Pool("res", 8, Tier::kReserved, 55, 2, 2),
                                            Pool("od8", 8, Tier::kOnDemand, 100, 0, 50),
                                            Pool("od2", 2, Tier::kOnDemand, 27, 0, 50)});
  PolicyDefaults defaults_;
};

TEST_F(PolicyTest, BuildsEachNamedPolicy) {
  auto tide = MakePolicy("tide", defaults_, spec_, std::nullopt);
  ASSERT_TRUE(tide.ok());
  EXPECT_EQ(tide->autoscaler.scale_up.trigger.pending_threshold, 0);
  EXPECT_EQ(tide->autoscaler.scale_up.hedge.nodes, 3);
  EXPECT_TRUE(tide->autoscaler.consolidation.enabled);
  auto seed = MakePolicy("tide-seed", defaults_, spec_, std::nullopt);
  ASSERT_TRUE(seed.ok());
  EXPECT_EQ(seed->kind, "tide");
  EXPECT_EQ(seed->autoscaler.scale_up.trigger.pending_threshold, 3);
  EXPECT_EQ(seed->autoscaler.scale_up.trigger.pending_grace, Seconds(30));
  EXPECT_EQ(seed->autoscaler.scale_down.idle.idle_after, Minutes(10));
  EXPECT_EQ(seed->autoscaler.scale_up.hedge.nodes, 0);
  EXPECT_FALSE(seed->autoscaler.consolidation.enabled);
  auto reactive = MakePolicy("reactive", defaults_, spec_, std::nullopt);
  ASSERT_TRUE(reactive.ok());
  EXPECT_EQ(reactive->autoscaler.scale_up.trigger.pending_threshold, 0);
  EXPECT_FALSE(reactive->autoscaler.scale_up.gang_aware);
  EXPECT_EQ(reactive->autoscaler.scan_interval, Seconds(10));
  EXPECT_EQ(reactive->autoscaler.scale_up.hedge.nodes, 0);  // tide's spares are not cluster-autoscaler's
  EXPECT_FALSE(reactive->autoscaler.consolidation.enabled);
  auto ps = MakePolicy("slurm-powersave", defaults_, spec_, std::nullopt);
  ASSERT_TRUE(ps.ok());
  EXPECT_TRUE(ps->scheduler.place_on_provisioning);
  EXPECT_EQ(ps->start_tick, Seconds(30));
}

TEST_F(PolicyTest, FixedHoldsOnePoolAndFreezesTheRest) {
  auto p = MakePolicy("fixed:20", defaults_, spec_, std::nullopt);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->fixed_pool, 1);  // the non-reserved pool with the largest nodes
  const model::ClusterSpec s = p->ApplyTo(spec_);
  EXPECT_EQ(s.pools[0].min_nodes, 2);
  EXPECT_EQ(s.pools[1].min_nodes, 20);
  EXPECT_EQ(s.pools[1].max_nodes, 20);
  EXPECT_EQ(s.pools[2].max_nodes, 0);
  EXPECT_FALSE(p->autoscaler.scale_up.enabled);
}

TEST_F(PolicyTest, FixedPeakIsSizedFromDemandBeyondTheReservedBase) {
  auto p = MakePolicy("fixed:peak", defaults_, spec_, DemandStats{100, 30.0});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->fixed_nodes, 11);  // (100 - 16 reserved GPUs) / 8, rounded up
  auto m = MakePolicy("fixed:mean:od2", defaults_, spec_, DemandStats{100, 30.0});
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->fixed_pool, 2);
  EXPECT_EQ(m->fixed_nodes, 7);  // (30 - 16) / 2
  EXPECT_THAT(m->description, HasSubstr("7 x od2"));
}

TEST_F(PolicyTest, Errors) {
  EXPECT_THAT(std::string(Message(MakePolicy("magic", defaults_, spec_, std::nullopt).status())),
              HasSubstr("unknown policy 'magic'"));
  EXPECT_THAT(std::string(Message(MakePolicy("fixed:lots", defaults_, spec_, std::nullopt).status())),
              HasSubstr("expected fixed:N"));
  EXPECT_THAT(std::string(Message(MakePolicy("fixed:3:nope", defaults_, spec_, std::nullopt).status())),
              HasSubstr("no pool named 'nope'"));
  EXPECT_THAT(std::string(Message(MakePolicies("tide,tide", defaults_, spec_, std::nullopt).status())),
              HasSubstr("listed twice"));
  EXPECT_TRUE(NeedsDemandStats("tide,fixed:peak"));
  EXPECT_FALSE(NeedsDemandStats("tide,fixed:4"));
}

}  // namespace
}  // namespace tide::autoscale
