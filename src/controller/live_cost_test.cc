// The live cost: the store's billed intervals summed by cost::Ledger.
#include "controller/live_cost.h"

#include <string>
#include <vector>

#include "controller/store.h"
#include "controller/store_fixtures_test.h"
#include "core/strings.h"
#include "gtest/gtest.h"

namespace tide::controller {
namespace {

using model::Tier;
using testing::At;
using testing::Instance;
using testing::OpenOrDie;
using testing::StoreFileTest;
using testing::StoreTest;


TEST_F(StoreTest, CostByTierWithLiveAndDeletedInstances) {
  ASSERT_TRUE(store_->PutInstance(Instance("r-1", "gpu1", Tier::kReserved, 20, 0)).ok());      // live
  ASSERT_TRUE(store_->PutInstance(Instance("o-1", "gpu2", Tier::kOnDemand, 36, 0)).ok());     // 30 min
  ASSERT_TRUE(store_->PutInstance(Instance("s-1", "gpu3", Tier::kSpot, 12, 3600)).ok());       // live
  ASSERT_TRUE(store_->PutInstance(Instance("s-2", "gpu4", Tier::kSpot, 12, 0)).ok());          // 2 h
  ASSERT_TRUE(store_->PutInstance(Instance("o-2", "gpu5", Tier::kOnDemand, 36, 9000)).ok());  // starts after now
  ASSERT_TRUE(store_->MarkInstanceDeleted("o-1", At(1800), "deleted").ok());
  ASSERT_TRUE(store_->MarkInstanceDeleted("s-2", At(7200), "lost").ok());
  auto cost = LiveCost(store_.get(), At(7200));
  ASSERT_TRUE(cost.ok()) << cost.status();
  EXPECT_DOUBLE_EQ(cost->reserved, 40.0);     // 2 h live
  EXPECT_DOUBLE_EQ(cost->on_demand, 18.0);    // closed entry; o-2 not yet started
  EXPECT_DOUBLE_EQ(cost->spot, 12.0 + 24.0);  // 1 h live + 2 h closed
  EXPECT_DOUBLE_EQ(cost->total(), 94.0);
  EXPECT_DOUBLE_EQ(LiveCost(store_.get(), At(0))->total(), 18.0 + 24.0);  // closed entries never shrink
}

// The live cost, summed by cost::Ledger, against the sum the store made
// before it (the ledger table's recorded costs plus each live instance
// priced to now), on prices and durations that do not divide evenly.
TEST_F(StoreFileTest, LiveCostEqualsTheLedgerTableSum) {
  auto store = OpenOrDie(path_);
  ASSERT_NE(store, nullptr);
  struct Row {
    const char* id;
    Tier tier;
    double price;
    int64_t created, deleted;  // deleted < 0: live
  };
  const std::vector<Row> rows = {
      {"r-1", Tier::kReserved, 17.37, 0, -1},       {"r-2", Tier::kReserved, 17.37, 13, 7777},
      {"o-1", Tier::kOnDemand, 32.77, 5, 1801},     {"o-2", Tier::kOnDemand, 0.1, 7, 100003},
      {"o-3", Tier::kOnDemand, 41.3, 99, -1},       {"o-4", Tier::kOnDemand, 32.77, 200000, -1},  // after now
      {"s-1", Tier::kSpot, 3.14159, 1, 3599},       {"s-2", Tier::kSpot, 9.99, 3600, 3601},
      {"s-3", Tier::kSpot, 9.99, 42, -1},           {"s-4", Tier::kSpot, 3.14159, 17, 61},
  };
  for (const Row& r : rows) {
    ASSERT_TRUE(store->PutInstance(Instance(r.id, StrCat("n-", r.id), r.tier, r.price, r.created)).ok());
    if (r.deleted >= 0) {
      ASSERT_TRUE(store->MarkInstanceDeleted(r.id, At(r.deleted), "deleted").ok());
    }
  }
  const int64_t now = 123457;
  auto cost = LiveCost(store.get(), At(now));
  ASSERT_TRUE(cost.ok()) << cost.status();
  for (Tier tier : {Tier::kReserved, Tier::kOnDemand, Tier::kSpot}) {
    SCOPED_TRACE(model::TierName(tier));
    const std::string name(model::TierName(tier));
    const double old_sum =
        QueryDouble(StrCat("SELECT TOTAL(cost) FROM ledger WHERE tier = '", name, "'")) +
        QueryDouble(StrCat("SELECT TOTAL(price_per_hour * MAX(0, ", ToUnixSeconds(At(now)),
                           " - created) / 3600.0) FROM instances WHERE deleted IS NULL AND tier = '", name, "'"));
    const double got = tier == Tier::kReserved   ? cost->reserved
                       : tier == Tier::kOnDemand ? cost->on_demand
                                                 : cost->spot;
    EXPECT_GT(old_sum, 0);
    EXPECT_NEAR(got, old_sum, 1e-12 * old_sum);
  }
}

}  // namespace
}  // namespace tide::controller
