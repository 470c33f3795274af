#include "bound/bound.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/builders.h"

namespace tide::bound {
namespace {

using model::Tier;
using ::testing::HasSubstr;
using tide::testing::kT0;

constexpr int64_t kHour = 3600;

JobDemand Job(int64_t submit_h, int64_t hours, int64_t gpus, bool spot_ok = false) {
  return JobDemand{kT0 + Seconds(submit_h * kHour), Seconds(hours * kHour), gpus, spot_ok};
}

TEST(CheapestPricesTest, PerGpuHourOfTheCheapestPoolOfEachTier) {
  using tide::testing::Pool;
  const auto spec = tide::testing::Spec({
      Pool("r8", 8, Tier::kReserved, 48, 2, 2),    // 6 / GPU-hour
      Pool("r4", 4, Tier::kReserved, 20, 1, 1),    // 5
      Pool("od", 8, Tier::kOnDemand, 100, 0, 50),  // 12.5
      Pool("spot", 8, Tier::kSpot, 16, 0, 0),      // max_nodes 0: not a pool one can use
  });
  const TierPrices p = CheapestPrices(spec);
  EXPECT_EQ(p.reserved, 5.0);
  EXPECT_EQ(p.on_demand, 12.5);
  EXPECT_FALSE(p.spot.has_value());
}

TEST(BuildHistogramTest, TimeAtEachLevelOverTheBillingWindow) {
  // 2 GPUs [1h, 3h), 3 preemptible GPUs [2h, 4h); the window starts at time
  // zero, not at the first submission.
  auto h = BuildHistogram(kT0, {Job(1, 2, 2), Job(2, 2, 3, true)});
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->Span(), 4 * kHour);
  EXPECT_EQ(h->seconds_np, (std::vector<int64_t>{2 * kHour, 0, 2 * kHour}));
  EXPECT_EQ(h->seconds_total, (std::vector<int64_t>{kHour, 0, kHour, kHour, 0, kHour}));
  EXPECT_EQ(h->gpu_seconds_np, 4 * kHour);
  EXPECT_EQ(h->gpu_seconds_spot_ok, 6 * kHour);
}

TEST(BuildHistogramTest, BackToBackJobsDoNotStack) {
  auto h = BuildHistogram(kT0, {Job(1, 1, 4), Job(0, 1, 4)});  // any order
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->PeakTotal(), 4);
  EXPECT_EQ(h->seconds_total[4], 2 * kHour);
}

TEST(BuildHistogramTest, RejectsJobsBeforeTheStart) {
  auto h = BuildHistogram(kT0 + Seconds(10), {Job(0, 1, 1)});
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(Message(h.status())), HasSubstr("job 0 is submitted at"));
}

struct BoundCase {
  std::string name;
  std::vector<JobDemand> jobs;
  TierPrices prices;
  int64_t reserved_gpus;
  double reserved_gpu_hours, on_demand_gpu_hours, spot_gpu_hours;
  double total;
};

class ComputeBoundTest : public ::testing::TestWithParam<BoundCase> {};

TEST_P(ComputeBoundTest, HandComputed) {
  const auto& c = GetParam();
  auto h = BuildHistogram(kT0, c.jobs);
  ASSERT_TRUE(h.ok()) << h.status();
  auto b = ComputeBound(*h, c.prices);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->reserved_gpus, c.reserved_gpus);
  EXPECT_DOUBLE_EQ(b->reserved_gpu_hours, c.reserved_gpu_hours);
  EXPECT_DOUBLE_EQ(b->on_demand_gpu_hours, c.on_demand_gpu_hours);
  EXPECT_DOUBLE_EQ(b->spot_gpu_hours, c.spot_gpu_hours);
  EXPECT_DOUBLE_EQ(b->total, c.total);
  EXPECT_DOUBLE_EQ(b->reserved_cost + b->on_demand_cost + b->spot_cost, b->total);
}

// Prices per GPU-hour: reserved 5, on-demand 10, spot 3.
const TierPrices kAll{5.0, 10.0, 3.0};
const TierPrices kNoReserved{std::nullopt, 10.0, 3.0};
const TierPrices kNoSpot{5.0, 10.0, std::nullopt};
const TierPrices kNoOnDemand{5.0, std::nullopt, 3.0};
// 4 GPUs for 10h, and 6 preemptible GPUs for the first 5h.
const std::vector<JobDemand> kMixed = {Job(0, 10, 4), Job(0, 5, 6, true)};

INSTANTIATE_TEST_SUITE_P(
    Cases, ComputeBoundTest,
    ::testing::Values(
        // 2 GPU-hours then 8: all on demand at 10.
        BoundCase{"PureOnDemand", {Job(0, 1, 2), Job(1, 2, 4)}, {std::nullopt, 10.0, std::nullopt}, 0, 0, 10, 0, 100},
        // 12 GPUs for 1h, then 4 for 9h: a base of 4 (busy 10h of 10) beats
        // on demand; the 5th GPU would be busy 1h of 10 and costs 50 vs 10.
        BoundCase{"ReservedBase", {Job(0, 10, 4), Job(0, 1, 8)}, kAll, 4, 40, 8, 0, 280},
        // The base covers the non-preemptible 4; the 6 preemptible GPUs go to
        // spot: 200 + 30 x 3.
        BoundCase{"Spot", kMixed, kAll, 4, 40, 0, 30, 290},
        BoundCase{"NoReservedPool", kMixed, kNoReserved, 0, 0, 40, 30, 490},
        // Preemptible work pays on-demand 10 without spot; 6 preemptible GPUs
        // busy 6h of 10 make reserving them cheaper (50 < 60 per GPU).
        BoundCase{"NoSpotPool", {Job(0, 10, 4), Job(0, 6, 6, true)}, kNoSpot, 10, 100, 0, 0, 500},
        // Without on demand the base must hold the non-preemptible peak.
        BoundCase{"NoOnDemandPool", {Job(0, 10, 4), Job(0, 1, 8)}, kNoOnDemand, 12, 120, 0, 0, 600},
        // Equal costs for every base from 0 to 2 (50 = 5 x 10): the smallest.
        BoundCase{"TiesGoToTheSmallerBase", {Job(0, 5, 2), Job(5, 5, 0)}, kAll, 0, 0, 10, 0, 100},
        BoundCase{"EmptyTrace", {}, kAll, 0, 0, 0, 0, 0}),
    [](const auto& info) { return info.param.name; });

TEST(ComputeBoundTest, NoTierForNonPreemptibleDemand) {
  auto h = BuildHistogram(kT0, {Job(0, 1, 3)});
  ASSERT_TRUE(h.ok());
  auto b = ComputeBound(*h, TierPrices{std::nullopt, std::nullopt, 3.0});
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(Message(b.status())), HasSubstr("no pool can run the non-preemptible demand (3 GPUs"));
}

TEST(BoundAtReservedTest, FixedBase) {
  auto h = BuildHistogram(kT0, kMixed);
  ASSERT_TRUE(h.ok());
  // 8 reserved GPUs over 10h (400) hold the 4 non-preemptible GPUs and 4 of
  // the 6 preemptible ones; 2 x 5h go to spot at 3.
  auto b = BoundAtReserved(*h, kAll, 8);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->reserved_gpus, 8);
  EXPECT_DOUBLE_EQ(b->spot_gpu_hours, 10);
  EXPECT_DOUBLE_EQ(b->total, 430);
  // Far above the peak: only the base's price grows.
  auto big = BoundAtReserved(*h, kAll, 100);
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_DOUBLE_EQ(big->total, 5000);
}

TEST(BoundAtReservedTest, BaseThatLeavesDemandUnserved) {
  auto h = BuildHistogram(kT0, kMixed);
  ASSERT_TRUE(h.ok());
  auto b = BoundAtReserved(*h, kNoOnDemand, 2);  // 4 non-preemptible GPUs, no on-demand
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(BoundAtReserved(*h, kNoReserved, 8).ok());
}

TEST(ConfiguredReservedGpusTest, SumsTheReservedPools) {
  using tide::testing::Pool;
  const auto spec =
      tide::testing::Spec({Pool("r8", 8, Tier::kReserved, 48, 2, 2), Pool("r4", 4, Tier::kReserved, 20, 3, 3),
                           Pool("od", 8, Tier::kOnDemand, 100, 1, 50)});
  EXPECT_EQ(ConfiguredReservedGpus(spec), 28);
}

// The definition, evaluated second by second for every base: the sweep must
// agree with it on small random workloads.
double BruteForce(const std::vector<JobDemand>& jobs, const TierPrices& pr, int64_t span, int64_t max_base) {
  const double pp = std::min(pr.spot.value_or(1e18), pr.on_demand.value_or(1e18));
  double best = 1e300;
  for (int64_t base = pr.reserved ? 0 : max_base + 1; base <= max_base + 1; ++base) {
    const int64_t r = pr.reserved ? base : 0;
    double cost = pr.reserved.value_or(0) * static_cast<double>(r * span);
    for (int64_t t = 0; t < span; ++t) {
      int64_t np = 0, p = 0;
      for (const auto& j : jobs) {
        const int64_t s = (j.submit - kT0).count();
        if (s <= t && t < s + j.runtime.count()) (j.spot_ok ? p : np) += j.gpus;
      }
      cost += pr.on_demand.value_or(0) * static_cast<double>(std::max<int64_t>(0, np - r));
      cost += pp * static_cast<double>(std::max<int64_t>(0, p - std::max<int64_t>(0, r - np)));
    }
    best = std::min(best, cost);
  }
  return best / 3600.0;
}

TEST(ComputeBoundTest, AgreesWithTheDefinitionOnRandomWorkloads) {
  uint64_t state = 12345;
  auto next = [&](int64_t n) {  // a small LCG: deterministic on every platform
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(n));
  };
  const TierPrices cases[] = {kAll, kNoReserved, kNoSpot, {5.0, 10.0, 12.0}, {2.0, 10.0, 1.0}};
  for (int round = 0; round < 40; ++round) {
    std::vector<JobDemand> jobs;
    const int n = 1 + static_cast<int>(next(8));
    for (int i = 0; i < n; ++i) {
      jobs.push_back(JobDemand{kT0 + Seconds(next(50)), Seconds(1 + next(40)), 1 + next(6), next(2) == 1});
    }
    auto h = BuildHistogram(kT0, jobs);
    ASSERT_TRUE(h.ok());
    for (const auto& prices : cases) {
      auto b = ComputeBound(*h, prices);
      ASSERT_TRUE(b.ok()) << b.status();
      EXPECT_NEAR(b->total, BruteForce(jobs, prices, h->Span(), h->PeakTotal()), 1e-9) << "round " << round;
    }
  }
}

}  // namespace
}  // namespace tide::bound
