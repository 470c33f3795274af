#include "metrics/util_history.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::metrics {
namespace {

constexpr model::JobId kJob = 42;

// Seconds after an arbitrary origin.
Timestamp T(int64_t s) { return FromUnixSeconds(1'767'600'000 + s); }

// Options: runs break on gaps over 60 s; polls every 10 s.
UtilHistory Make(std::vector<std::pair<int64_t, double>> samples, UtilHistoryOptions o = {}) {
  UtilHistory h(o);
  for (const auto& [at, u] : samples) h.Record(kJob, u, T(at));
  return h;
}

std::optional<int64_t> Rel(std::optional<Timestamp> t) {
  if (!t) return std::nullopt;
  return ToUnixSeconds(*t) - ToUnixSeconds(T(0));
}

TEST(UtilHistoryTest, UtilAt) {
  struct Case {
    std::string name;
    std::vector<std::pair<int64_t, double>> samples;
    int64_t t;
    std::optional<double> want;
  };
  const std::vector<Case> cases = {
      {"no data is unknown, not idle", {}, 100, std::nullopt},
      {"the latest sample", {{0, 0.9}, {10, 0.2}}, 15, 0.2},
      {"at the sample's time", {{0, 0.9}, {10, 0.2}}, 10, 0.2},
      {"max_gap old still counts", {{0, 0.4}}, 60, 0.4},
      {"older than max_gap is unknown", {{0, 0.4}}, 61, std::nullopt},
      {"before the latest sample is unknown", {{0, 0.4}, {10, 0.5}}, 5, std::nullopt},
      {"clamped to 0..1", {{0, 1.7}}, 0, 1.0},
      {"negative clamps to 0", {{0, -0.5}}, 0, 0.0},
      {"NaN is ignored", {{0, 0.3}, {10, std::nan("")}}, 10, 0.3},
      {"an older sample is ignored", {{10, 0.3}, {5, 0.9}}, 10, 0.3},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Make(c.samples).UtilAt(kJob, T(c.t)), c.want);
  }
}

TEST(UtilHistoryTest, BelowAndAboveSince) {
  struct Case {
    std::string name;
    std::vector<std::pair<int64_t, double>> samples;
    double threshold;
    int64_t t;
    std::optional<int64_t> below;
    std::optional<int64_t> above;
  };
  const std::vector<Case> cases = {
      {"no data", {}, 0.1, 100, std::nullopt, std::nullopt},
      {"one low sample", {{0, 0.0}}, 0.1, 5, 0, std::nullopt},
      {"always low", {{0, 0.0}, {10, 0.05}, {20, 0.02}, {30, 0.0}}, 0.1, 30, 0, std::nullopt},
      {"always high", {{0, 0.9}, {10, 0.8}, {20, 0.95}}, 0.5, 25, std::nullopt, 0},
      {"crossed down", {{0, 0.9}, {10, 0.8}, {20, 0.05}, {30, 0.0}}, 0.1, 30, 20, std::nullopt},
      {"crossed up", {{0, 0.0}, {10, 0.05}, {20, 0.8}, {30, 0.9}}, 0.5, 35, std::nullopt, 20},
      {"dipped and rose: latest decides", {{0, 0.0}, {10, 0.9}, {20, 0.0}, {30, 0.01}}, 0.1, 30, 20, std::nullopt},
      {"equal to the threshold is neither", {{0, 0.0}, {10, 0.1}}, 0.1, 10, std::nullopt, std::nullopt},
      {"equal breaks a below run", {{0, 0.0}, {10, 0.1}, {20, 0.0}}, 0.1, 20, 20, std::nullopt},
      {"equal breaks an above run", {{0, 0.9}, {10, 0.5}, {20, 0.9}}, 0.5, 20, std::nullopt, 20},
      {"a gap breaks the run", {{0, 0.0}, {10, 0.0}, {100, 0.0}, {110, 0.0}}, 0.1, 110, 100, std::nullopt},
      {"a gap of exactly max_gap does not", {{0, 0.0}, {60, 0.0}, {70, 0.0}}, 0.1, 70, 0, std::nullopt},
      {"latest too old at t", {{0, 0.0}, {10, 0.0}}, 0.1, 71, std::nullopt, std::nullopt},
      {"t before the latest sample", {{0, 0.0}, {10, 0.0}}, 0.1, 5, std::nullopt, std::nullopt},
      {"high after a gap is not above since before it", {{0, 0.9}, {100, 0.9}}, 0.5, 100, std::nullopt, 100},
      {"same time: the later record wins", {{0, 0.9}, {10, 0.9}, {10, 0.0}}, 0.1, 10, 10, std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    UtilHistory h = Make(c.samples);
    EXPECT_EQ(Rel(h.BelowSince(kJob, c.threshold, T(c.t))), c.below);
    EXPECT_EQ(Rel(h.AboveSince(kJob, c.threshold, T(c.t))), c.above);
  }
}

TEST(UtilHistoryTest, AnyThresholdOnTheSameHistory) {
  // 0: .5, 10: .9, 20: .3, 30: .7, 40: .2, 50: .4, 60: .1
  UtilHistory h = Make({{0, 0.5}, {10, 0.9}, {20, 0.3}, {30, 0.7}, {40, 0.2}, {50, 0.4}, {60, 0.1}});
  struct Case {
    double threshold;
    std::optional<int64_t> below;
  };
  for (const auto& c :
       std::vector<Case>{{0.05, std::nullopt}, {0.15, 60}, {0.3, 60}, {0.45, 40}, {0.8, 20}, {0.95, 0}, {1.5, 0}}) {
    SCOPED_TRACE(c.threshold);
    EXPECT_EQ(Rel(h.BelowSince(kJob, c.threshold, T(60))), c.below);
  }
  // Above: the latest (.1) is above only thresholds under it.
  EXPECT_EQ(Rel(h.AboveSince(kJob, 0.05, T(60))), 0);
  EXPECT_EQ(h.AboveSince(kJob, 0.1, T(60)), std::nullopt);
  h.Record(kJob, 0.6, T(70));
  EXPECT_EQ(Rel(h.AboveSince(kJob, 0.5, T(70))), 70);
  EXPECT_EQ(Rel(h.AboveSince(kJob, 0.1, T(70))), 70);  // 60 was .1, not above
  EXPECT_EQ(Rel(h.AboveSince(kJob, 0.09, T(70))), 0);
  EXPECT_EQ(h.AboveSince(kJob, 0.6, T(70)), std::nullopt);
}

TEST(UtilHistoryTest, NextTimes) {
  struct Case {
    std::string name;
    std::vector<std::pair<int64_t, double>> samples;
    int64_t span;
    int64_t t;
    int64_t below_for;
    int64_t above_for;
  };
  const std::vector<Case> cases = {
      {"no data: next poll", {}, 20, 100, 110, 110},
      {"low, not long enough yet", {{0, 0.0}, {10, 0.0}}, 30, 10, 30, 20},
      {"low long enough: now", {{0, 0.0}, {10, 0.0}, {20, 0.0}, {30, 0.0}}, 20, 30, 30, 40},
      {"high, crossed at 20", {{0, 0.0}, {10, 0.0}, {20, 0.9}}, 60, 25, 35, 80},
      {"stale: next poll", {{0, 0.0}}, 20, 100, 110, 110},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    UtilHistory h = Make(c.samples);
    EXPECT_EQ(Rel(h.NextBelowFor(kJob, 0.1, Seconds(c.span), T(c.t))), c.below_for);
    EXPECT_EQ(Rel(h.NextAboveFor(kJob, 0.5, Seconds(c.span), T(c.t))), c.above_for);
    EXPECT_EQ(Rel(h.NextUtilChange(kJob, T(c.t))), c.t + 10);
  }
}

TEST(UtilHistoryTest, ForgetDropsTheJob) {
  UtilHistory h = Make({{0, 0.0}, {10, 0.0}});
  h.Record(7, 0.5, T(10));
  ASSERT_EQ(h.size(), 2u);
  h.Forget(kJob);
  EXPECT_EQ(h.size(), 1u);
  EXPECT_EQ(h.UtilAt(kJob, T(10)), std::nullopt);
  EXPECT_EQ(h.BelowSince(kJob, 0.1, T(10)), std::nullopt);
  EXPECT_EQ(Rel(h.NextBelowFor(kJob, 0.1, Seconds(30), T(10))), 20);
  EXPECT_EQ(h.UtilAt(7, T(10)), 0.5);  // others untouched
  // A new run after Forget starts from scratch.
  h.Record(kJob, 0.0, T(20));
  EXPECT_EQ(Rel(h.BelowSince(kJob, 0.1, T(20))), 20);
  h.Forget(12345);  // unknown: nothing happens
  EXPECT_EQ(h.size(), 2u);
}

TEST(UtilHistoryTest, JobsAreIndependent) {
  UtilHistory h;
  h.Record(1, 0.0, T(0));
  h.Record(2, 0.9, T(0));
  h.Record(1, 0.0, T(10));
  h.Record(2, 0.0, T(10));
  EXPECT_EQ(Rel(h.BelowSince(1, 0.1, T(10))), 0);
  EXPECT_EQ(Rel(h.BelowSince(2, 0.1, T(10))), 10);
}

TEST(UtilHistoryTest, OptionsChangeTheGapAndPoll) {
  UtilHistoryOptions o;
  o.max_gap = Seconds(30);
  o.poll_interval = Seconds(5);
  UtilHistory h = Make({{0, 0.0}, {40, 0.0}}, o);
  EXPECT_EQ(Rel(h.BelowSince(kJob, 0.1, T(40))), 40);  // 40 s > 30 s: a gap
  EXPECT_EQ(h.UtilAt(kJob, T(71)), std::nullopt);
  EXPECT_EQ(Rel(h.NextUtilChange(kJob, T(40))), 45);
}

TEST(UtilHistoryTest, MemoryIsBoundedAndLongRunsErrOnTheLateSide) {
  UtilHistoryOptions o;
  o.horizon = Minutes(10);
  UtilHistory h(o);
  // Falling utilization keeps every sample a suffix maximum: the worst case.
  for (int64_t s = 0; s <= 3600; s += 10) h.Record(kJob, 1.0 - static_cast<double>(s) / 4000, T(s));
  // The whole hour is below 1.01, but only the horizon is remembered: the
  // run is reported to start later than it did, never earlier.
  auto since = Rel(h.BelowSince(kJob, 1.01, T(3600)));
  ASSERT_TRUE(since.has_value());
  EXPECT_GE(*since, 3600 - 600);
  EXPECT_LE(*since, 3600 - 590);
  // Within the horizon the answer is exact: 0.2 was crossed at s = 3200.
  EXPECT_EQ(Rel(h.BelowSince(kJob, 1.0 - 3200.0 / 4000, T(3600))), 3210);
  // Steady utilization keeps one point however long it runs, and the
  // answer stays exact beyond the horizon.
  UtilHistory steady(o);
  for (int64_t s = 0; s <= 36000; s += 10) steady.Record(kJob, 0.5, T(s));
  EXPECT_EQ(Rel(steady.BelowSince(kJob, 0.6, T(36000))), 0);
  EXPECT_EQ(Rel(steady.AboveSince(kJob, 0.4, T(36000))), 0);
}

}  // namespace
}  // namespace tide::metrics
