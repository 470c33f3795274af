#include "autoscale/predict/forecast.h"

#include <memory>
#include <optional>
#include <vector>

#include "autoscale/coverage.h"
#include "autoscale/schedule/cron.h"
#include "core/rng.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/state_index.h"
#include "testutil/builders.h"

namespace tide::autoscale {
namespace {

using ::testing::HasSubstr;
using model::Tier;
using testing::kT0;
using testing::Pool;
using testing::ReadyNode;

// kT0 is Monday 2026-01-05 00:00 UTC: day 0 is a Monday, days 5 and 6 the weekend.
Timestamp When(int day, int hour, int minute = 0) { return kT0 + Hours(24 * day + hour) + Minutes(minute); }

ForecastOptions Enabled(int days = 7, int min_days = 2) {
  ForecastOptions o;
  o.enabled = true;
  o.days = days;
  o.min_days = min_days;
  return o;
}

// --- Expected ---------------------------------------------------------------

class ExpectedTest : public ::testing::Test {
 protected:
  std::optional<double> Expected(const ForecastOptions& o, Timestamp t, Duration horizon) {
    return Forecast(o, Seconds(60)).Expected(state_, t, horizon, &days_);
  }
  model::ClusterState state_;
  int days_ = -1;
};

TEST_F(ExpectedTest, MeanOfTheSameWindowOnPreviousDays) {
  // Monday to Thursday; the window is 09:00-09:10 of each day.
  state_.arrivals = {
      {When(0, 8, 59), 100},  // before the window: history starts here
      {When(0, 9, 0), 4},     // the window's start counts
      {When(0, 9, 2), 4},    {When(0, 9, 20), 100},  // after the window
      {When(1, 9, 5), 16},
      // Wednesday: nothing in the window (a day of history with 0 GPUs).
      {When(2, 12), 100},    {When(3, 9, 9), 24},
  };
  const auto e = Expected(Enabled(), When(4, 9), Minutes(10));  // Friday 09:00
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(days_, 4);
  EXPECT_DOUBLE_EQ(*e, (8 + 16 + 0 + 24) / 4.0);
}

// A driver that counts the GPUs before each arrival gets the same forecast
// as one that does not, after the front of its log was dropped too.
TEST_F(ExpectedTest, CountsBeforeEachArrivalGiveTheSameForecast) {
  Rng rng(17);
  for (int trial = 0; trial < 200; ++trial) {
    state_.arrivals.clear();
    Timestamp at = When(0, 0);
    const Timestamp last = When(static_cast<int>(rng.UniformInt(7, 12)), 0);  // a window may reach past it
    while (at < last) {
      at += Seconds(rng.UniformInt(0, 1800));
      state_.arrivals.push_back({at, static_cast<int>(rng.UniformInt(0, 64))});
    }
    model::ClusterState counted = state_;
    model::SetArrivalsBefore(&counted.arrivals);
    const size_t dropped = static_cast<size_t>(rng.UniformInt(0, 100));
    for (auto* arr : {&state_.arrivals, &counted.arrivals}) arr->erase(arr->begin(), arr->begin() + dropped);
    const Timestamp t = When(8, 0) + Seconds(rng.UniformInt(0, 4 * 86400));
    const Duration horizon = Seconds(rng.UniformInt(1, 7200));
    const ForecastOptions o = Enabled(static_cast<int>(rng.UniformInt(1, 7)), 1);
    const auto want = Expected(o, t, horizon);
    const int want_days = days_;
    const auto got = Forecast(o, Seconds(60)).Expected(counted, t, horizon, &days_);
    ASSERT_EQ(got.has_value(), want.has_value()) << "trial " << trial;
    EXPECT_EQ(days_, want_days);
    if (want) { EXPECT_EQ(*got, *want) << "trial " << trial; }  // the same sums, to the bit
  }
}

TEST_F(ExpectedTest, StartsKeptFromTheLastCallGiveTheSameForecast) {
  // One list of starts carried through calls as a pass would carry it: the
  // clock moves on, new arrivals are logged, old ones are dropped from the
  // front (which moves every position), and the window and day count change.
  // Each answer must be the one a call without starts gives.
  Rng rng(23);
  std::vector<size_t> starts;
  model::ClusterState counted = state_;
  Timestamp at = When(0, 0);
  Timestamp t = When(2, 0);
  int64_t logged = 0;
  for (int call = 0; call < 3000; ++call) {
    while (at < t) {
      at += Seconds(rng.UniformInt(0, 900));
      const int gpus = static_cast<int>(rng.UniformInt(0, 64));
      counted.arrivals.push_back({at, gpus, logged});
      logged += gpus;
    }
    if (rng.Bernoulli(0.01) && counted.arrivals.size() > 10) {
      const auto drop = static_cast<long>(rng.UniformInt(1, static_cast<int64_t>(counted.arrivals.size()) / 2));
      counted.arrivals.erase(counted.arrivals.begin(), counted.arrivals.begin() + drop);
    }
    if (rng.Bernoulli(0.01)) starts.assign(starts.size(), rng.UniformInt(0, 1000000));  // hints that are all wrong
    const Duration horizon = Seconds(rng.UniformInt(1, 7200));
    const ForecastOptions o = Enabled(static_cast<int>(rng.UniformInt(5, 7)), 1);
    const Forecast f(o, Seconds(60));
    int want_days = 0, got_days = 0;
    const auto want = f.Expected(counted, t, horizon, &want_days);
    const auto got = f.Expected(counted, t, horizon, &got_days, &starts);
    ASSERT_EQ(got.has_value(), want.has_value()) << "call " << call;
    ASSERT_EQ(got_days, want_days) << "call " << call;
    if (want) { ASSERT_EQ(*got, *want) << "call " << call; }
    t += Seconds(rng.UniformInt(0, 600));
  }
}

TEST_F(ExpectedTest, OnlyTheLastDaysAndScaled) {
  state_.arrivals = {{When(0, 9, 1), 40}, {When(1, 9, 1), 10}, {When(2, 9, 1), 20}, {When(3, 9, 1), 30}};
  ForecastOptions o = Enabled(/*days=*/2);
  auto e = Expected(o, When(4, 9), Minutes(5));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(days_, 2);
  EXPECT_DOUBLE_EQ(*e, 25);  // Thursday and Wednesday
  o.scale = 1.5;
  e = Expected(o, When(4, 9), Minutes(5));
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(*e, 37.5);
}

TEST_F(ExpectedTest, TooLittleHistory) {
  EXPECT_FALSE(Expected(Enabled(), When(4, 9), Minutes(10)).has_value());  // none at all
  EXPECT_EQ(days_, 0);
  // History from Monday 08:00: on Tuesday 09:00 one day back, on Wednesday two.
  state_.arrivals = {{When(0, 8), 8}, {When(0, 9, 1), 8}, {When(1, 9, 1), 8}};
  EXPECT_FALSE(Expected(Enabled(), When(1, 9), Minutes(10)).has_value());
  EXPECT_EQ(days_, 1);
  auto e = Expected(Enabled(7, /*min_days=*/1), When(1, 9), Minutes(10));
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(*e, 8);
  e = Expected(Enabled(), When(2, 9), Minutes(10));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(days_, 2);
  EXPECT_DOUBLE_EQ(*e, 8);
  // A window before the first arrival is not history.
  EXPECT_FALSE(Expected(Enabled(), When(1, 7), Minutes(10)).has_value());
  EXPECT_EQ(days_, 0);
}

TEST_F(ExpectedTest, WeekendsAndWorkingDaysAreNotMixed) {
  // Saturday 2026-01-03 to Sunday 2026-01-11, 09:05 each day: 8 GPUs on
  // working days, 100 at weekends. History starts on Saturday 00:00.
  state_.arrivals.push_back({When(-2, 0), 0});
  for (int day = -2; day <= 6; ++day) {
    const bool weekend = day == -2 || day == -1 || day == 5 || day == 6;
    state_.arrivals.push_back({When(day, 9, 5), weekend ? 100 : 8});
  }
  struct Case {
    const char* name;
    Timestamp t;
    int days;
    double gpus;
  };
  for (const Case& c : std::vector<Case>{
           // Monday 01-12: Sunday and Saturday are skipped; Friday to Monday 01-05 count.
           {"monday", When(7, 9), 5, 8},
           // Sunday 01-11: Saturday 01-10 and Sunday 01-04 (a week back).
           {"sunday", When(6, 9), 2, 100},
           // Saturday 01-10: Sunday 01-04 and Saturday 01-03.
           {"saturday", When(5, 9), 2, 100},
           // Friday 01-09: Thursday to Monday; the weekend before is skipped, and
           // Friday 01-02 is before the history.
           {"friday", When(4, 9), 4, 8},
       }) {
    SCOPED_TRACE(c.name);
    const auto e = Expected(Enabled(7, 1), c.t, Minutes(10));
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(days_, c.days);
    EXPECT_DOUBLE_EQ(*e, c.gpus);
  }
}

// --- Evaluate ---------------------------------------------------------------

class ForecastEvaluateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Per GPU: spot 1.25 (not on-demand: never chosen), od8 10, od4 9 (the
    // cheapest on-demand), res 6 (reserved: never bought).
    spec_ = testing::Spec({Pool("spot", 8, Tier::kSpot, 10, 0, 10), Pool("od8", 8, Tier::kOnDemand, 80, 0, 10),
                           Pool("od4", 4, Tier::kOnDemand, 36, 0, 10), Pool("res", 8, Tier::kReserved, 48, 0, 0)});
    state_.spec = &spec_;
    // Monday to Thursday, 12 GPUs on average submitted 09:00-09:10:
    // 8, 16, 0 (Wednesday) and 24.
    state_.arrivals = {{When(0, 8, 59), 100}, {When(0, 9, 2), 8}, {When(1, 9, 5), 16}, {When(2, 12), 100},
                       {When(3, 9, 9), 24}};
    options_ = Enabled();
    options_.horizon = Minutes(10);
  }

  // `leaving`: nodes an earlier step of the pass took away (a cap's release).
  ScalingPlan Evaluate(Timestamp now, const std::vector<model::NodeId>& leaving = {}) {
    ScalingPlan plan;
    ctx_ = std::make_unique<PassContext>(state_, now);
    IndexState(ctx_.get());
    for (model::NodeId id : leaving) ctx_->leaving.insert(id);
    const ScheduleOptions no_rules;
    ScheduledCapacity(no_rules).ApplyLimits(ctx_.get(), &plan);
    BuildCoverage(ScaleUpOptions{}, ctx_.get(), &plan);
    Forecast(options_, Seconds(60)).Evaluate(ctx_.get(), &plan);
    return plan;
  }

  model::ClusterSpec spec_;
  model::ClusterState state_;
  ForecastOptions options_;
  std::unique_ptr<PassContext> ctx_;
};

TEST_F(ForecastEvaluateTest, BuysTheShortfallOfTheCheapestOnDemandPoolPerGpu) {
  const ScalingPlan plan = Evaluate(When(4, 9));
  ASSERT_EQ(plan.actions.size(), 1u);
  const Action& a = plan.actions[0];
  EXPECT_EQ(a.kind, ActionKind::kScaleUp);
  EXPECT_EQ(a.pool, 2);
  EXPECT_EQ(a.count, 3);  // ceil(12 / 4)
  EXPECT_TRUE(a.forecast);
  EXPECT_THAT(a.reason, HasSubstr("forecast"));
  EXPECT_THAT(a.reason, HasSubstr("od4"));
  EXPECT_EQ(ctx_->live[2], 3);
}

TEST_F(ForecastEvaluateTest, RoundsUpToWholeNodesAfterFreeCapacity) {
  struct Case {
    const char* name;
    std::vector<model::Node> nodes;
    int count;  // od4 nodes bought; 0: nothing
  };
  for (const Case& c : std::vector<Case>{
           {"no capacity", {}, 3},
           {"one free GPU", {ReadyNode(1, 1, 8, 1)}, 3},        // 11 short: ceil(11 / 4)
           {"eight free", {ReadyNode(1, 1, 8, 8)}, 1},          // 4 short
           {"a booting node counts", {testing::BootingNode(1, 1, 8, 1000)}, 1},
           {"nine free", {ReadyNode(1, 1, 8, 8), ReadyNode(2, 2, 4, 1)}, 1},  // 3 short: one node
           {"twelve free: covered", {ReadyNode(1, 1, 8, 8), ReadyNode(2, 2, 4, 4)}, 0},
           {"more than enough", {ReadyNode(1, 1, 8, 8), ReadyNode(2, 1, 8, 8)}, 0},
       }) {
    SCOPED_TRACE(c.name);
    state_.nodes = c.nodes;
    const ScalingPlan plan = Evaluate(When(4, 9));
    if (c.count == 0) {
      EXPECT_TRUE(plan.actions.empty());
    } else {
      ASSERT_EQ(plan.actions.size(), 1u);
      EXPECT_EQ(plan.actions[0].pool, 2);
      EXPECT_EQ(plan.actions[0].count, c.count);
      EXPECT_TRUE(plan.actions[0].forecast);
    }
  }
}

// With a driver's index, the GPUs free are summed from its counts; a node
// this pass releases holds none of them, with or without the index.
TEST_F(ForecastEvaluateTest, ANodeLeavingThisPassIsNotFreeCapacity) {
  state_.nodes = {ReadyNode(1, 1, 8, 8), ReadyNode(2, 2, 4, 4)};  // twelve free: covered
  for (bool indexed : {false, true}) {
    SCOPED_TRACE(indexed ? "indexed" : "scanned");
    const model::StateIndex index = model::StateIndex::Build(state_);
    state_.index = indexed ? &index : nullptr;
    EXPECT_TRUE(Evaluate(When(4, 9)).actions.empty());
    const ScalingPlan plan = Evaluate(When(4, 9), {1});  // four free: 8 short
    ASSERT_EQ(plan.actions.size(), 1u);
    EXPECT_EQ(plan.actions[0].pool, 2);
    EXPECT_EQ(plan.actions[0].count, 2);
    state_.index = nullptr;
  }
}

TEST_F(ForecastEvaluateTest, FreeCapacityIsWhatPendingJobsLeave) {
  // Sixteen free GPUs would cover the forecast, but a pending job claims eight of them.
  state_.nodes = {ReadyNode(1, 1, 8, 8), ReadyNode(2, 1, 8, 8)};
  state_.jobs = {testing::Pending(10, 8, 1)};
  const ScalingPlan plan = Evaluate(When(4, 9));
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_EQ(plan.actions[0].count, 1);  // 12 - 8 = 4 short
  EXPECT_EQ(plan.covered.size(), 1u);
}

TEST_F(ForecastEvaluateTest, NextCheapestPoolWhenTheCheapestIsFullAndCappedByMax) {
  spec_.pools[2].max_nodes = 1;
  state_.nodes = {ReadyNode(1, 2, 4, 0)};  // od4 full, its GPUs in use
  ScalingPlan plan = Evaluate(When(4, 9));
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_EQ(plan.actions[0].pool, 1);
  EXPECT_EQ(plan.actions[0].count, 2);  // ceil(12 / 8)

  spec_.pools[2].max_nodes = 2;  // one more od4 node may be bought, not three
  plan = Evaluate(When(4, 9));
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_EQ(plan.actions[0].pool, 2);
  EXPECT_EQ(plan.actions[0].count, 1);

  // No on-demand pool with room: nothing.
  spec_.pools[1].max_nodes = 0;
  spec_.pools[2].max_nodes = 1;
  EXPECT_TRUE(Evaluate(When(4, 9)).actions.empty());
}

TEST_F(ForecastEvaluateTest, DisabledDoesNothing) {
  options_.enabled = false;
  const ScalingPlan plan = Evaluate(When(4, 9, 2));
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_EQ(plan.next_wakeup, kInfiniteFuture);
}

TEST_F(ForecastEvaluateTest, NothingWithTooLittleHistoryOrNoDemand) {
  options_.min_days = 5;
  EXPECT_TRUE(Evaluate(When(4, 9)).actions.empty());
  options_.min_days = 2;
  EXPECT_TRUE(Evaluate(When(4, 13)).actions.empty());  // nothing was submitted at 13:00
}

TEST_F(ForecastEvaluateTest, DefaultHorizonIsTheBootDelayPlusAScan) {
  // od4 boots in 180 s; the scan is 60 s: a 4-minute horizon.
  options_.horizon.reset();
  state_.arrivals = {{When(0, 8), 1}, {When(0, 9, 3), 4}, {When(0, 9, 5), 100}, {When(1, 9, 3), 4},
                     {When(1, 9, 6), 100}};
  const ScalingPlan plan = Evaluate(When(2, 9));
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_EQ(plan.actions[0].count, 1);  // 4 GPUs: one od4 node
  EXPECT_THAT(plan.actions[0].reason, HasSubstr("in the next 4m"));
}

TEST_F(ForecastEvaluateTest, WakesOnTheEveryGrid) {
  struct Case {
    const char* name;
    Timestamp now, next;
    Duration every;
  };
  for (const Case& c : std::vector<Case>{
           {"on the grid", When(4, 9), When(4, 9, 5), Minutes(5)},
           {"between", When(4, 9, 2) + Seconds(30), When(4, 9, 5), Minutes(5)},
           {"a second before", When(4, 9, 5) - Seconds(1), When(4, 9, 5), Minutes(5)},
           {"a coarser grid", When(4, 9, 20), When(4, 10), Hours(1)},
       }) {
    SCOPED_TRACE(c.name);
    options_.every = c.every;
    EXPECT_EQ(Evaluate(c.now).next_wakeup, c.next);
  }
  // It never moves an earlier wakeup later.
  options_.every = Minutes(5);
  ScalingPlan plan;
  plan.next_wakeup = When(4, 9, 1);
  PassContext ctx(state_, When(4, 9));
  IndexState(&ctx);
  const ScheduleOptions no_rules;
  ScheduledCapacity(no_rules).ApplyLimits(&ctx, &plan);
  BuildCoverage(ScaleUpOptions{}, &ctx, &plan);
  Forecast(options_, Seconds(60)).Evaluate(&ctx, &plan);
  EXPECT_EQ(plan.next_wakeup, When(4, 9, 1));
}

}  // namespace
}  // namespace tide::autoscale
