#include "sim/sim_metrics.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "core/rng.h"
#include "core/strings.h"
#include "gtest/gtest.h"
#include "sim/result.h"
#include "testutil/builders.h"

namespace tide::sim {
namespace {

using testing::At;

model::JobPhases Phases() {
  model::JobPhases p;
  p.load = Seconds(100);
  p.load_util = 0.05;
  p.train_util = 0.9;
  p.eval_share = 0.1;
  p.eval_util = 0.3;
  p.checkpoint_util = 0.02;
  return p;
}

model::CheckpointPolicy Ckpt(int64_t interval, int64_t cost) {
  model::CheckpointPolicy c;
  c.interval = Seconds(interval);
  c.cost = Seconds(cost);
  return c;
}

// Job 1's one segment: 1000 s of work from At(0), 100 s of loading, a 50 s
// checkpoint every 400 s of work, evaluation over the last 100 of work:
//   [0, 100)     0.05  load
//   [100, 500)   0.9   train
//   [500, 550)   0.02  checkpoint
//   [550, 950)   0.9   train
//   [950, 1000)  0.02  checkpoint
//   [1000, 1100) 0.9   train
//   [1100, 1200) 0.3   evaluation; the run ends at 1200
JobRun Segment1() { return JobRun(At(0), 0, 1000, 1.0, Seconds(100), Ckpt(400, 50), Phases()); }

// Job 2 is job 1 resized at 520 (in its first checkpoint): a second segment
// from 400 of work at twice the rate, after 60 s of loading:
//   [520, 580) 0.05  load
//   [580, 830) 0.9   train (250 s: 500 of work)
//   [830, 880) 0.3   evaluation; ends at 880
JobRun Segment2() { return JobRun(At(520), 400, 1000, 2.0, Seconds(60), Ckpt(400, 50), Phases()); }

class SimMetricsTest : public ::testing::Test {
 protected:
  SimMetricsTest() : metrics_(&runs_) {
    runs_[1].segments = {Segment1()};
    runs_[2].segments = {Segment1(), Segment2()};
  }
  RunMap runs_;
  SimMetrics metrics_;

  // A SimMetrics that has found no answers yet (answers live in the records).
  SimMetrics Fresh() {
    for (auto& [id, r] : runs_) r.answers = {};
    return SimMetrics(&runs_);
  }
};

TEST_F(SimMetricsTest, TheSegmentsAreAsDescribed) {
  ASSERT_EQ(Segment1().EndTime(), At(1200));
  ASSERT_EQ(Segment2().EndTime(), At(880));
}

TEST_F(SimMetricsTest, UtilAt) {
  struct Case {
    model::JobId job;
    int64_t t;
    double util;
  };
  for (const Case& c : std::vector<Case>{
           {1, 0, 0.05},   {1, 99, 0.05},  {1, 100, 0.9},  {1, 499, 0.9},  {1, 500, 0.02}, {1, 549, 0.02},
           {1, 550, 0.9},  {1, 960, 0.02}, {1, 1099, 0.9}, {1, 1100, 0.3}, {1, 1199, 0.3},
           {2, 510, 0.02},  // still the first segment
           {2, 520, 0.05}, {2, 579, 0.05}, {2, 580, 0.9},  {2, 829, 0.9},  {2, 830, 0.3},
       }) {
    SCOPED_TRACE(StrCat(c.job, "@", c.t));
    const auto u = metrics_.UtilAt(c.job, At(c.t));
    ASSERT_TRUE(u.has_value());
    EXPECT_DOUBLE_EQ(*u, c.util);
  }
}

TEST_F(SimMetricsTest, UnknownJobOrBeforeTheRunIsUnknown) {
  EXPECT_FALSE(metrics_.UtilAt(9, At(100)).has_value());
  EXPECT_FALSE(metrics_.UtilAt(1, At(-1)).has_value());
  EXPECT_FALSE(metrics_.BelowSince(9, 0.5, At(100)).has_value());
  EXPECT_FALSE(metrics_.AboveSince(9, 0.5, At(100)).has_value());
  EXPECT_FALSE(metrics_.BelowSince(1, 0.5, At(-1)).has_value());
  EXPECT_EQ(metrics_.NextUtilChange(9, At(100)), kInfiniteFuture);
  EXPECT_EQ(metrics_.NextUtilChange(1, At(-1)), kInfiniteFuture);
  EXPECT_EQ(metrics_.NextBelowFor(9, 0.5, Seconds(10), At(100)), kInfiniteFuture);
  EXPECT_EQ(metrics_.NextAboveFor(9, 0.5, Seconds(10), At(100)), kInfiniteFuture);
  EXPECT_EQ(metrics_.NextAboveFor(1, 0.5, Seconds(10), At(-1)), kInfiniteFuture);
  runs_[3] = {};  // known, but no segment
  EXPECT_FALSE(metrics_.UtilAt(3, At(100)).has_value());
  EXPECT_EQ(metrics_.NextBelowFor(3, 0.5, Seconds(10), At(100)), kInfiniteFuture);
}

TEST_F(SimMetricsTest, BelowAndAboveSinceWalkBackOverPieces) {
  struct Case {
    const char* name;
    model::JobId job;
    bool below;
    double threshold;
    int64_t t;
    std::optional<int64_t> since;
  };
  for (const Case& c : std::vector<Case>{
           {"loading, from the start", 1, true, 0.5, 50, 0},
           {"in a checkpoint", 1, true, 0.5, 520, 500},
           {"checkpoint's first second", 1, true, 0.5, 500, 500},
           {"evaluation", 1, true, 0.5, 1150, 1100},
           {"training is not below", 1, true, 0.5, 300, std::nullopt},
           {"below 0.95 throughout", 1, true, 0.95, 1150, 0},
           {"training", 1, false, 0.5, 300, 100},
           {"second training stretch", 1, false, 0.5, 700, 550},
           {"a checkpoint is not above", 1, false, 0.5, 520, std::nullopt},
           {"above 0.01 throughout", 1, false, 0.01, 1199, 0},
           {"above 0.1 from the third stretch", 1, false, 0.1, 1050, 1000},
           {"above 0.2 over the evaluation", 1, false, 0.2, 1150, 1000},
           // Job 2: across the resize at 520. Its load follows a checkpoint,
           // so it has been low since 500, in the first segment.
           {"into the earlier segment", 2, true, 0.5, 560, 500},
           {"at the resize", 2, true, 0.5, 520, 500},
           {"above 0.01 through both segments", 2, false, 0.01, 700, 0},
           {"the new segment's training", 2, false, 0.5, 700, 580},
           // A threshold the earlier segment's last piece misses stops at the resize.
           {"stops at the resize", 2, false, 0.03, 560, 520},
       }) {
    SCOPED_TRACE(c.name);
    const auto since = c.below ? metrics_.BelowSince(c.job, c.threshold, At(c.t))
                               : metrics_.AboveSince(c.job, c.threshold, At(c.t));
    if (!c.since) {
      EXPECT_FALSE(since.has_value()) << FormatTimestamp(*since);
    } else {
      ASSERT_TRUE(since.has_value());
      EXPECT_EQ(*since, At(*c.since)) << FormatTimestamp(*since);
    }
  }
}

TEST_F(SimMetricsTest, NextUtilChange) {
  struct Case {
    model::JobId job;
    int64_t t, next;
  };
  for (const Case& c : std::vector<Case>{
           {1, 0, 100},     {1, 99, 100},     {1, 100, 500},  {1, 300, 500}, {1, 500, 550},
           {1, 549, 550},   {1, 550, 950},    {1, 950, 1000}, {1, 1000, 1100}, {1, 1100, 1200},
           {2, 520, 580},   {2, 600, 830},    {2, 830, 880},
       }) {
    SCOPED_TRACE(StrCat(c.job, "@", c.t));
    EXPECT_EQ(metrics_.NextUtilChange(c.job, At(c.t)), At(c.next));
  }
}

TEST_F(SimMetricsTest, NextAboveFor) {
  struct Case {
    const char* name;
    double threshold;
    int64_t span, t;
    Timestamp next;
  };
  for (const Case& c : std::vector<Case>{
           {"held long enough already", 0.5, 300, 450, At(450)},
           {"held exactly long enough now", 0.5, 300, 400, At(400)},
           {"later in the same stretch", 0.5, 300, 150, At(400)},
           {"from the load", 0.5, 300, 0, At(400)},
           {"in the next stretch", 0.5, 350, 520, At(900)},
           {"never: stretches are 400 s at most", 0.5, 450, 150, kInfiniteFuture},
           {"after the last long stretch", 0.5, 350, 960, kInfiniteFuture},
           {"a low threshold holds from the start", 0.01, 600, 0, At(600)},
       }) {
    SCOPED_TRACE(c.name);
    SimMetrics fresh = Fresh();
    const Timestamp next = fresh.NextAboveFor(1, c.threshold, Seconds(c.span), At(c.t));
    EXPECT_EQ(next, c.next) << FormatTimestamp(next);
  }
}

TEST_F(SimMetricsTest, NextBelowFor) {
  struct Case {
    const char* name;
    double threshold;
    int64_t span, t;
    Timestamp next;
  };
  for (const Case& c : std::vector<Case>{
           {"the load is long enough", 0.5, 60, 30, At(60)},
           {"already", 0.5, 60, 80, At(80)},
           {"checkpoints are too short; the evaluation is not", 0.5, 60, 150, At(1160)},
           {"a checkpoint will do", 0.5, 40, 150, At(540)},
           {"walks back into the evaluation's start", 0.5, 60, 1130, At(1160)},
           {"never", 0.5, 120, 150, kInfiniteFuture},
           {"nothing is below 0.01", 0.01, 1, 0, kInfiniteFuture},
       }) {
    SCOPED_TRACE(c.name);
    SimMetrics fresh = Fresh();
    const Timestamp next = fresh.NextBelowFor(1, c.threshold, Seconds(c.span), At(c.t));
    EXPECT_EQ(next, c.next) << FormatTimestamp(next);
  }
}

TEST_F(SimMetricsTest, NextForLooksOnlyAtTheCurrentSegment) {
  // Job 2 has been low since 500 (in the first segment): by 560 for 60 s.
  EXPECT_EQ(metrics_.NextBelowFor(2, 0.5, Seconds(60), At(520)), At(560));
  // Its training stretch of 250 s.
  EXPECT_EQ(metrics_.NextAboveFor(2, 0.5, Seconds(200), At(520)), At(780));
  EXPECT_EQ(metrics_.NextAboveFor(2, 0.5, Seconds(250), At(520)), kInfiniteFuture);
}

TEST_F(SimMetricsTest, CachedAnswersStayRightForLaterTimes) {
  // One SimMetrics asked again and again as time moves on.
  struct Step {
    int64_t t;
    Timestamp next;
  };
  for (const Step& s : std::vector<Step>{
           {150, At(450)},  // train since 100: 350 s at 450
           {300, At(450)},
           {450, At(450)},
           {460, At(460)},  // held long enough: now
           {499, At(499)},
           {500, At(900)},  // checkpoint: the next stretch from 550
           {520, At(900)},
           {600, At(900)},
           {900, At(900)},
           {949, At(949)},
           {950, kInfiniteFuture},  // no stretch of 350 s is left
           {1050, kInfiniteFuture},
       }) {
    SCOPED_TRACE(s.t);
    EXPECT_EQ(metrics_.NextAboveFor(1, 0.5, Seconds(350), At(s.t)), s.next);
    // The same question of a fresh SimMetrics agrees.
    const RunAnswers kept = runs_[1].answers;
    SimMetrics fresh = Fresh();
    EXPECT_EQ(fresh.NextAboveFor(1, 0.5, Seconds(350), At(s.t)), s.next);
    runs_[1].answers = kept;
  }
  // Other thresholds, spans and directions are separate questions.
  EXPECT_EQ(metrics_.NextAboveFor(1, 0.5, Seconds(300), At(150)), At(400));
  EXPECT_EQ(metrics_.NextAboveFor(1, 0.8, Seconds(350), At(150)), At(450));
  EXPECT_EQ(metrics_.NextBelowFor(1, 0.5, Seconds(40), At(150)), At(540));
}

TEST_F(SimMetricsTest, ANewSegmentIsANewQuestion) {
  // Asked while job 3 has one segment, then after a resize adds another.
  runs_[3].segments = {Segment1()};
  EXPECT_EQ(metrics_.NextAboveFor(3, 0.5, Seconds(350), At(510)), At(900));
  runs_[3].segments.push_back(Segment2());
  // The resized run trains from 580 for 250 s only.
  EXPECT_EQ(metrics_.NextAboveFor(3, 0.5, Seconds(350), At(520)), kInfiniteFuture);
  EXPECT_EQ(metrics_.NextAboveFor(3, 0.5, Seconds(200), At(520)), At(780));
}

// NextBelowFor and NextAboveFor against a second-by-second walk of random
// runs: the earliest u >= t such that the condition held at every second of
// [u - span, u] (never before the run started).
TEST(SimMetricsOracleTest, NextForAgreesWithASecondBySecondWalk) {
  Rng rng(11);
  const double levels[] = {0.02, 0.15, 0.5, 0.95};
  for (int round = 0; round < 300; ++round) {
    model::JobPhases ph;
    ph.load = Seconds(rng.UniformInt(0, 300));
    ph.load_util = levels[rng.UniformInt(0, 3)];
    ph.train_util = levels[rng.UniformInt(0, 3)];
    ph.eval_util = levels[rng.UniformInt(0, 3)];
    ph.checkpoint_util = levels[rng.UniformInt(0, 3)];
    ph.eval_share = rng.UniformInt(0, 3) * 0.1;
    const JobRun seg(At(0), static_cast<double>(rng.UniformInt(0, 500)), static_cast<double>(rng.UniformInt(600, 4000)),
                     rng.UniformInt(0, 1) ? 1.0 : 0.5, ph.load, Ckpt(rng.UniformInt(0, 1) ? 0 : rng.UniformInt(100, 700),
                                                                     rng.UniformInt(5, 120)),
                     ph);
    RunMap runs;
    runs[1].segments = {seg};
    SimMetrics m(&runs);
    const int64_t end = (seg.EndTime() - At(0)).count();
    for (const bool below : {true, false}) {
      const double thr = below ? 0.1 : 0.9;
      const int64_t span = rng.UniformInt(1, 900);
      auto holds = [&](int64_t s) {
        const double u = seg.UtilAt(At(s));
        return below ? u < thr : u > thr;
      };
      for (int64_t t = 0; t < end; t += rng.UniformInt(1, 200)) {
        Timestamp want = kInfiniteFuture;
        int64_t run = 0;  // seconds in a row, up to u, on which it held
        for (int64_t u = 0; u < end; ++u) {
          run = holds(u) ? run + 1 : 0;
          if (u >= t && run > span) {
            want = At(u);
            break;
          }
        }
        const Timestamp got = below ? m.NextBelowFor(1, thr, Seconds(span), At(t))
                                    : m.NextAboveFor(1, thr, Seconds(span), At(t));
        ASSERT_EQ(got, want) << "round " << round << (below ? " below" : " above") << " span " << span << " t " << t;
      }
    }
  }
}

// VisitByDue walks the runs in the order of their answers, whatever changed
// between two questions: every visit agrees with asking each run.
TEST(SimMetricsDueTest, VisitsRunsInTheOrderOfTheirAnswers) {
  Rng rng(5);
  RunMap runs;
  SimMetrics metrics(&runs);
  model::JobId next = 1;
  auto random_run = [&](int64_t t) {
    const double rate = rng.UniformInt(1, 3) == 1 ? 0.5 : 1.0;
    return JobRun(At(t - rng.UniformInt(0, 900)), 0, static_cast<double>(rng.UniformInt(200, 3000)), rate,
                  Seconds(rng.UniformInt(0, 200)), Ckpt(rng.UniformInt(100, 600), rng.UniformInt(10, 120)), Phases());
  };
  for (int i = 0; i < 30; ++i) runs[next++].segments = {random_run(0)};
  for (int64_t t = 0; t < 4000; t += rng.UniformInt(1, 60)) {
    // Change a few runs between questions, telling SimMetrics.
    for (int k = static_cast<int>(rng.UniformInt(0, 3)); k > 0; --k) {
      const int64_t what = rng.UniformInt(0, 2);
      model::JobId id = what == 0 ? next++ : rng.UniformInt(1, next - 1);
      if (what == 2) {
        runs.erase(id);
      } else {
        runs[id] = RunRecord{{random_run(t)}, {}};
      }
      metrics.RunChanged(id);
    }
    for (const bool below : {true, false}) {
      const double threshold = below ? 0.1 : 0.5;
      const Duration span = Seconds(below ? 40 : 200);
      std::vector<std::pair<Timestamp, model::JobId>> want;
      for (const auto& [id, rec] : runs) {
        if (rec.segments.empty()) continue;
        const Timestamp due = below ? metrics.NextBelowFor(id, threshold, span, At(t))
                                    : metrics.NextAboveFor(id, threshold, span, At(t));
        if (due != kInfiniteFuture) want.emplace_back(due, id);
      }
      std::sort(want.begin(), want.end());
      std::vector<std::pair<Timestamp, model::JobId>> got;
      ASSERT_TRUE(metrics.VisitByDue(below, threshold, span, At(t), [&](model::JobId id, Timestamp due) {
        got.emplace_back(due, id);
        return true;
      }));
      ASSERT_EQ(got, want) << "at " << t << (below ? ", below" : ", above");
      // A visit that stops early sees the start of the same order.
      got.clear();
      metrics.VisitByDue(below, threshold, span, At(t), [&](model::JobId id, Timestamp due) {
        got.emplace_back(due, id);
        return got.size() < 2;
      });
      EXPECT_EQ(got.size(), std::min<size_t>(2, want.size()));
    }
  }
}

// Nearest-rank percentiles, selected in place, against the ranks of a sorted
// copy: small lists (where ranks coincide), duplicates, and a long list.
TEST(PercentilesTest, SelectedRanksAreThoseOfASortedList) {
  Rng rng(11);
  for (size_t n : {size_t{1}, size_t{2}, size_t{3}, size_t{19}, size_t{20}, size_t{21}, size_t{99}, size_t{100},
                   size_t{101}, size_t{5000}}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<int64_t> v(n);
      const int64_t spread = trial % 2 == 0 ? 5 : 1000000;  // many equal values, or few
      for (auto& x : v) x = static_cast<int64_t>(rng.Uniform() * static_cast<double>(spread));
      std::vector<int64_t> sorted = v;
      std::sort(sorted.begin(), sorted.end());
      auto at = [&](double q) {
        const size_t idx = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
        return sorted[std::clamp<size_t>(idx, 1, n) - 1];
      };
      double sum = 0;
      for (int64_t x : sorted) sum += static_cast<double>(x);
      const Percentiles p = ComputePercentiles(&v);
      EXPECT_EQ(p.count, static_cast<int64_t>(n));
      EXPECT_EQ(p.p50, at(0.50)) << n;
      EXPECT_EQ(p.p95, at(0.95)) << n;
      EXPECT_EQ(p.p99, at(0.99)) << n;
      EXPECT_EQ(p.max, sorted.back()) << n;
      EXPECT_EQ(p.mean, sum / static_cast<double>(n)) << n;
      std::sort(v.begin(), v.end());
      EXPECT_EQ(v, sorted);  // reordered, nothing lost
    }
  }
  std::vector<int64_t> none;
  EXPECT_EQ(ComputePercentiles(&none).count, 0);
}

}  // namespace
}  // namespace tide::sim
