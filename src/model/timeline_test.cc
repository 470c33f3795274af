#include "model/timeline.h"

#include <gtest/gtest.h>

namespace tide::model {
namespace {

const Timestamp kT0 = FromUnixSeconds(1'000'000);

TEST(TimelineRecorder, LevelsAreTimeWeightedMeansPerBucket) {
  TimelineRecorder r(kT0, Seconds(60), {"gpus"}, {});
  r.Hold(kT0, kT0 + Seconds(30), {10});
  r.Hold(kT0 + Seconds(30), kT0 + Seconds(90), {20});  // spans two buckets
  const Timeline t = r.Finish(kT0 + Seconds(120));
  ASSERT_EQ(t.buckets, 2);
  EXPECT_DOUBLE_EQ(t.levels[0][0], 15);  // 30 s at 10, 30 s at 20
  EXPECT_DOUBLE_EQ(t.levels[0][1], 20);  // only the recorded 30 s count
}

TEST(TimelineRecorder, TotalsCarryForwardToLaterBuckets) {
  TimelineRecorder r(kT0, Seconds(60), {}, {"count"});
  r.Set(kT0 + Seconds(10), {1});
  r.Set(kT0 + Seconds(50), {2});
  r.Set(kT0 + Seconds(200), {5});
  const Timeline t = r.Finish(kT0 + Seconds(240));
  ASSERT_EQ(t.buckets, 4);
  EXPECT_EQ(t.totals[0], (std::vector<double>{2, 2, 2, 5}));
}

TEST(TimelineRecorder, DoublesTheStepToStayWithinTheLimit) {
  TimelineRecorder r(kT0, Seconds(10), {"v"}, {"n"}, 4);
  for (int i = 0; i < 16; ++i) {
    r.Hold(kT0 + Seconds(10 * i), kT0 + Seconds(10 * (i + 1)), {static_cast<double>(i)});
    r.Set(kT0 + Seconds(10 * i), {static_cast<double>(i)});
  }
  const Timeline t = r.Finish(kT0 + Seconds(160));
  EXPECT_EQ(t.step, Seconds(40));
  ASSERT_EQ(t.buckets, 4);
  // Means of 0..3, 4..7, ...: the area is kept.
  EXPECT_EQ(t.levels[0], (std::vector<double>{1.5, 5.5, 9.5, 13.5}));
  EXPECT_EQ(t.totals[0], (std::vector<double>{3, 7, 11, 15}));
}

TEST(TimelineRecorder, IntegralsOfPerHourRatesAreExactAtBucketEnds) {
  TimelineRecorder r(kT0, Seconds(3600), {"rate"}, {}, 2048, {{"rate", "cost"}});
  r.Hold(kT0, kT0 + Seconds(1800), {100});             // 50
  r.Hold(kT0 + Seconds(1800), kT0 + Seconds(7200), {10});  // 5 + 10
  const Timeline t = r.Finish(kT0 + Seconds(7200));
  const auto* cost = t.Find("cost");
  ASSERT_NE(cost, nullptr);
  EXPECT_DOUBLE_EQ((*cost)[0], 55);
  EXPECT_DOUBLE_EQ((*cost)[1], 65);
  EXPECT_EQ(t.Find("nope"), nullptr);
}

TEST(TimelineRecorder, IgnoresTimesBeforeTheStartAndRepeats) {
  TimelineRecorder r(kT0, Seconds(60), {"v"}, {});
  r.Hold(kT0 - Seconds(100), kT0 + Seconds(60), {4});
  r.Hold(kT0, kT0 + Seconds(60), {100});  // already recorded: ignored
  const Timeline t = r.Finish(kT0 + Seconds(60));
  ASSERT_EQ(t.buckets, 1);
  EXPECT_DOUBLE_EQ(t.levels[0][0], 4);
}

TEST(TimelineRecorder, EmptyRunHasNoBuckets) {
  TimelineRecorder r(kT0, Seconds(60), {"v"}, {"n"});
  const Timeline t = r.Finish(kT0);
  EXPECT_EQ(t.buckets, 0);
  EXPECT_TRUE(t.levels[0].empty());
}

TEST(Percentiles0To100, NearestRank) {
  const auto q = Percentiles0To100({40, 10, 30, 20});
  ASSERT_EQ(q.size(), 101u);
  EXPECT_EQ(q[0], 10);   // the smallest
  EXPECT_EQ(q[25], 10);  // ceil(0.25 * 4) = 1st
  EXPECT_EQ(q[26], 20);
  EXPECT_EQ(q[50], 20);  // 2nd, as sim::ComputePercentiles' p50
  EXPECT_EQ(q[99], 40);
  EXPECT_EQ(q[100], 40);  // the largest
  EXPECT_TRUE(Percentiles0To100({}).empty());
}

}  // namespace
}  // namespace tide::model
