#include "cost/ledger.h"

#include <tuple>
#include <vector>

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

// A priced interval keeps the tier and price it was opened with, whatever
// the pools say; it adds to the tiers and the total, not to any pool.
TEST(LedgerTest, PricedIntervalsBillTheirOwnTierAndPrice) {
  const model::ClusterSpec spec = testing::Spec({Pool("od", 8, Tier::kOnDemand, 72, 0, 9)});
  Ledger l(&spec);
  l.Close(l.Open(0, At(0)), At(1800));                                   // 36 on-demand
  l.ClosePriced(l.OpenPriced(Tier::kOnDemand, 10, 4, At(0)), At(3600));  // 10 on-demand
  l.OpenPriced(Tier::kSpot, 12, 8, At(1800));                            // open: 1800..3600 = 6 spot
  l.ClosePriced(l.OpenPriced(Tier::kSpot, 12, 8, At(3000)), At(9000));   // clipped: 600 s = 2 spot
  const CostSummary s = l.Summarize(At(0), At(3600));
  EXPECT_DOUBLE_EQ(s.by_tier[static_cast<int>(Tier::kOnDemand)], 36.0 + 10.0);
  EXPECT_DOUBLE_EQ(s.by_tier[static_cast<int>(Tier::kSpot)], 6.0 + 2.0);
  EXPECT_DOUBLE_EQ(s.total, 54.0);
  ASSERT_EQ(s.by_pool.size(), 1u);
  EXPECT_DOUBLE_EQ(s.by_pool[0], 36.0);
  EXPECT_DOUBLE_EQ(s.gpu_hours_paid, 4.0 + 4.0 + 8.0 * 2400 / 3600);
}

// Without a ClusterSpec a ledger bills priced intervals only, the same sum in
// any order.
TEST(LedgerTest, PricedOnlyLedgerSumsInAnyOrder) {
  Ledger a, b;
  const std::vector<std::tuple<Tier, double, int64_t, int64_t>> intervals = {
      {Tier::kReserved, 17.37, 0, 7777}, {Tier::kSpot, 3.14159, 1, 3599}, {Tier::kReserved, 17.37, 13, 99999},
      {Tier::kSpot, 9.99, 3600, 3601},   {Tier::kOnDemand, 0.1, 7, 100003}};
  for (const auto& [tier, price, start, end] : intervals) {
    a.ClosePriced(a.OpenPriced(tier, price, 8, At(start)), At(end));
  }
  for (auto it = intervals.rbegin(); it != intervals.rend(); ++it) {
    const auto& [tier, price, start, end] = *it;
    b.ClosePriced(b.OpenPriced(tier, price, 8, At(start)), At(end));
  }
  const CostSummary sa = a.Summarize(kInfinitePast, kInfiniteFuture);
  const CostSummary sb = b.Summarize(kInfinitePast, kInfiniteFuture);
  EXPECT_TRUE(sa.by_pool.empty());
  EXPECT_EQ(sa.by_tier, sb.by_tier);
  EXPECT_EQ(sa.total, sb.total);
  EXPECT_NEAR(sa.by_tier[static_cast<int>(Tier::kReserved)], 17.37 * (7777 + 99986) / 3600.0, 1e-9);
}

}  // namespace
}  // namespace tide::cost
