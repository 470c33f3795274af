#include "sched/eligibility.h"

#include <string>
#include <vector>

#include "core/rng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/builders.h"

namespace tide::sched {
namespace {

using model::Tier;
using ::testing::ElementsAre;

constexpr int kHigh = 0, kNormal = 1, kLow = 2;

model::JobSpec Job(int gpus, int cls, bool preemptible) {
  model::JobSpec j = testing::JobSpecOf("j", 0, gpus, 1, 3600, cls);
  j.preemptible = preemptible;
  return j;
}

class EligibilityTest : public ::testing::Test {
 protected:
  // 0 reserved, 1 on-demand (north), 2 on-demand (west), 3 spot (west), 4 a small on-demand pool
  EligibilityTest()
      : spec_(testing::Spec({testing::Pool("res", 8, Tier::kReserved, 55, 2, 2),
                             testing::Pool("od-north", 8, Tier::kOnDemand, 100, 0, 10),
                             testing::Pool("od-west", 8, Tier::kOnDemand, 85, 0, 10),
                             testing::Pool("spot-west", 8, Tier::kSpot, 30, 0, 10),
                             testing::Pool("small", 2, Tier::kOnDemand, 30, 0, 10)})) {
    spec_.pools[1].region = "north";
    spec_.pools[2].region = "west";
    spec_.pools[3].region = "west";
  }
  model::ClusterSpec spec_;
};

TEST_F(EligibilityTest, NodeMustHoldAWorker) {
  EXPECT_EQ(EligiblePools(spec_, Job(4, kNormal, false)), PoolBit(0) | PoolBit(1) | PoolBit(2));
  EXPECT_EQ(EligiblePools(spec_, Job(2, kNormal, false)), PoolBit(0) | PoolBit(1) | PoolBit(2) | PoolBit(4));
  EXPECT_EQ(EligiblePools(spec_, Job(16, kNormal, false)), PoolMask{0});
}

TEST_F(EligibilityTest, CouldEverRunCountsEveryEligiblePoolAtItsMax) {
  // Non-preemptible 8-GPU workers: res 2 + od-north 10 + od-west 10 nodes.
  EXPECT_EQ(WorkersAtMax(spec_, EligiblePools(spec_, Job(8, kNormal, false)), 8), 22);
  model::JobSpec gang = testing::JobSpecOf("gang", 0, 8, 22, 3600, kNormal);
  EXPECT_TRUE(CouldEverRun(spec_, gang));
  gang.workers = 23;
  EXPECT_FALSE(CouldEverRun(spec_, gang));
  gang.preemptible = true;  // spot-west's 10 nodes join
  EXPECT_TRUE(CouldEverRun(spec_, gang));
  EXPECT_FALSE(CouldEverRun(spec_, Job(16, kNormal, false)));  // no node is that large
}

TEST_F(EligibilityTest, SpotTakesOnlyPreemptibleUnprotectedJobs) {
  EXPECT_FALSE(EligiblePools(spec_, Job(8, kHigh, false)) & PoolBit(3));
  EXPECT_FALSE(EligiblePools(spec_, Job(8, kNormal, false)) & PoolBit(3));
  EXPECT_TRUE(EligiblePools(spec_, Job(8, kLow, true)) & PoolBit(3));
  model::JobSpec eval = Job(8, kLow, true);
  eval.is_protected = true;  // a protected job is never put where it can be interrupted
  EXPECT_FALSE(EligiblePools(spec_, eval) & PoolBit(3));
}

TEST_F(EligibilityTest, GpuModelsRestrictPools) {
  spec_.pools[1].type.gpu_model = "V100M32";
  spec_.pools[2].type.gpu_model = "T4";
  struct Case {
    std::string name;
    std::vector<std::string> models;
    PoolMask want;
  };
  const PoolMask all_8 = PoolBit(0) | PoolBit(1) | PoolBit(2);
  for (const Case& c : std::vector<Case>{{"any", {}, all_8},
                                         {"one model", {"T4"}, PoolBit(2)},
                                         {"two models", {"T4", "V100M32"}, PoolBit(1) | PoolBit(2)},
                                         {"absent model", {"A10"}, PoolMask{0}}}) {
    model::JobSpec j = Job(4, kNormal, false);
    j.gpu_models = c.models;
    EXPECT_EQ(EligiblePools(spec_, j), c.want) << c.name;
  }
}

TEST_F(EligibilityTest, MinPriorityKeepsLowerClassesOff) {
  spec_.pools[0].min_priority = 100;  // the reserved base is for high priority only
  spec_.pools[1].min_priority = 50;
  EXPECT_TRUE(EligiblePools(spec_, Job(8, kHigh, false)) & PoolBit(0));
  EXPECT_FALSE(EligiblePools(spec_, Job(8, kNormal, false)) & PoolBit(0));
  EXPECT_TRUE(EligiblePools(spec_, Job(8, kNormal, false)) & PoolBit(1));
  EXPECT_FALSE(EligiblePools(spec_, Job(8, kLow, true)) & PoolBit(1));
  EXPECT_TRUE(EligiblePools(spec_, Job(8, kLow, true)) & PoolBit(2));
  EXPECT_TRUE(Eligible(spec_.pools[1], Job(8, kLow, true), /*priority=*/50));
  EXPECT_FALSE(Eligible(spec_.pools[1], Job(8, kLow, true), /*priority=*/49));
}

TEST_F(EligibilityTest, PreferenceByTier) {
  EXPECT_THAT(PlacementPreference(spec_, Job(8, kLow, true), /*data_first=*/false),
              ElementsAre(PoolBit(3), PoolBit(0), PoolBit(1) | PoolBit(2)));
  EXPECT_THAT(PlacementPreference(spec_, Job(8, kNormal, false), false),
              ElementsAre(PoolBit(0), PoolBit(1) | PoolBit(2)));
}

TEST_F(EligibilityTest, DataRegionFirstWithinATier) {
  model::JobSpec j = Job(8, kNormal, false);
  j.data_region = "west";
  j.data_gb = 200;
  EXPECT_THAT(PlacementPreference(spec_, j, /*data_first=*/true),
              ElementsAre(PoolBit(0), PoolBit(2), PoolBit(1)));
  // Blind to data: the tier is the only order.
  EXPECT_THAT(PlacementPreference(spec_, j, /*data_first=*/false), ElementsAre(PoolBit(0), PoolBit(1) | PoolBit(2)));
  // The reserved base stays first: it is paid for whether used or not.
  j.data_region = "north";
  EXPECT_THAT(PlacementPreference(spec_, j, true), ElementsAre(PoolBit(0), PoolBit(1), PoolBit(2)));
}

TEST_F(EligibilityTest, TheMemoAnswersAsTheRuleDoes) {
  spec_.pools[4].min_priority = 50;  // the small pool: high priority only
  spec_.pools[0].type.gpu_model = "A100";
  spec_.priority_classes = {{"high", 100, false}, {"normal", 50, false}, {"low", 0, true}};
  EligibilityMemo memo(spec_);
  Rng rng(5);
  for (int i = 0; i < 2000; ++i) {
    model::JobSpec j = Job(static_cast<int>(rng.UniformInt(1, 9)), static_cast<int>(rng.UniformInt(-1, 3)),
                           rng.Bernoulli(0.5));
    j.is_protected = rng.Bernoulli(0.2);
    if (rng.Bernoulli(0.1)) j.slice_units = static_cast<int>(rng.UniformInt(1, 7));
    if (rng.Bernoulli(0.1)) j.gpu_models = {rng.Bernoulli(0.5) ? "A100" : "H100"};
    ASSERT_EQ(memo(j), EligiblePools(spec_, j)) << "job " << i;
  }
}

}  // namespace
}  // namespace tide::sched
