#include "cost/ledger.h"

#include "gtest/gtest.h"
#include "testutil/builders.h"

namespace tide::cost {
namespace {

using model::Tier;
using testing::At;
using testing::Pool;

TEST(LedgerTest, BillsPerSecondByTierAndClipsToTheWindow) {
  const model::ClusterSpec spec = testing::Spec(
      {Pool("res", 8, Tier::kReserved, 36, 1, 1), Pool("od", 8, Tier::kOnDemand, 72, 0, 9)});
  Ledger l(&spec);
  l.Open(0, At(0));                      // open to the end
  const size_t h = l.Open(1, At(100));   // 100..190: 90 s
  l.Close(h, At(190));
  l.Close(l.Open(1, At(3000)), At(9000));  // clipped to 3000..3600
  const CostSummary s = l.Summarize(At(0), At(3600));
  EXPECT_DOUBLE_EQ(s.by_tier[static_cast<int>(Tier::kReserved)], 36.0);
  EXPECT_DOUBLE_EQ(s.by_tier[static_cast<int>(Tier::kOnDemand)], 72.0 * 690 / 3600);
  EXPECT_DOUBLE_EQ(s.total, 36.0 + 72.0 * 690 / 3600);
  EXPECT_DOUBLE_EQ(s.gpu_hours_paid, 8.0 + 8.0 * 690 / 3600);
  EXPECT_DOUBLE_EQ(s.by_pool[1], 72.0 * 690 / 3600);
}

}  // namespace
}  // namespace tide::cost
