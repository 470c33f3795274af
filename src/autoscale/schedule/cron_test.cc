#include "autoscale/schedule/cron.h"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "autoscale/coverage.h"
#include "core/status.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/builders.h"

namespace tide::autoscale {
namespace {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;
using model::Tier;
using testing::kT0;
using testing::Pool;
using testing::ReadyNode;

// kT0 is Monday 2026-01-05 00:00 UTC; day 0 is that Monday, day 4 the Friday.
enum Day { kMon, kTue, kWed, kThu, kFri, kSat, kSun, kNextMon };
Timestamp When(int day, int hour, int minute = 0) { return kT0 + Hours(24 * day + hour) + Minutes(minute); }

CronRule Rule(std::string name, std::vector<int> pools, std::string_view days, std::string_view from,
              std::string_view to) {
  CronRule r;
  r.name = std::move(name);
  r.pools = std::move(pools);
  r.days = ParseDays(days).value();
  r.from = ParseClock(from).value();
  r.to = ParseClock(to).value();
  return r;
}

// --- ParseClock -------------------------------------------------------------

TEST(ParseClockTest, ValidTimes) {
  struct Case {
    std::string_view text;
    int minutes;
  };
  for (const Case& c : std::vector<Case>{{"18:00", 1080},
                                         {"00:00", 0},
                                         {"09:30", 570},
                                         {"7:05", 425},
                                         {"23:59", 1439},
                                         {"24:00", 1440}}) {
    SCOPED_TRACE(c.text);
    const auto m = ParseClock(c.text);
    ASSERT_TRUE(m.ok()) << Message(m.status());
    EXPECT_EQ(*m, c.minutes);
  }
}

TEST(ParseClockTest, RejectsWhatIsNotATimeOfDay) {
  for (std::string_view text : {"", "18", "18:", ":30", "18:60", "25:00", "24:01", "-1:00", "18:00:00", "ab:cd",
                                "6pm", "18.00"}) {
    SCOPED_TRACE(text);
    const auto m = ParseClock(text);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(Message(m.status())), HasSubstr("HH:MM"));
  }
}

// --- ParseDays --------------------------------------------------------------

TEST(ParseDaysTest, ValidSets) {
  struct Case {
    std::string_view text;
    uint8_t mask;
  };
  for (const Case& c : std::vector<Case>{
           {"mon-fri", 0x1f},
           {"sat,sun", 0x60},
           {"weekdays", 0x1f},
           {"weekends", 0x60},
           {"daily", 0x7f},
           {"all", 0x7f},
           {"*", 0x7f},
           {"mon", 0x01},
           {"sun", 0x40},
           {"mon, wed ,fri", 0x15},
           {"MON-Fri", 0x1f},
           {"  weekdays ", 0x1f},
           {"fri-mon", 0x71},  // wraps: fri, sat, sun, mon
           {"sun-tue", 0x43},  // sun, mon, tue
           {"mon-tue,thu-fri", 0x1b},
           {"wed-wed", 0x04},
       }) {
    SCOPED_TRACE(c.text);
    const auto m = ParseDays(c.text);
    ASSERT_TRUE(m.ok()) << Message(m.status());
    EXPECT_EQ(*m, c.mask);
  }
}

TEST(ParseDaysTest, RejectsWhatIsNotASetOfDays) {
  for (std::string_view text : {"", " ", ",", "monday", "mon-", "-fri", "mon-tue-wed", "1-5", "mon;tue", "funday"}) {
    SCOPED_TRACE(text);
    const auto m = ParseDays(text);
    ASSERT_FALSE(m.ok()) << "mask " << int(*m);
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(Message(m.status())), HasSubstr("mon-fri"));
  }
}

// --- Active -----------------------------------------------------------------

TEST(ActiveTest, SameDayWindow) {
  const ScheduleOptions o;  // UTC
  const ScheduledCapacity sc(o);
  const CronRule r = Rule("office", {0}, "mon-fri", "09:00", "17:00");
  struct Case {
    const char* name;
    Timestamp t;
    bool active;
  };
  for (const Case& c : std::vector<Case>{
           {"monday at the start", When(kMon, 9), true},
           {"monday before the start", When(kMon, 8, 59), false},
           {"monday midday", When(kMon, 12), true},
           {"monday last minute", When(kMon, 16, 59), true},
           {"monday at the end", When(kMon, 17), false},
           {"friday midday", When(kFri, 12), true},
           {"saturday midday", When(kSat, 12), false},
           {"sunday midday", When(kSun, 12), false},
       }) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(sc.Active(r, c.t, Duration{0}), c.active);
  }
}

TEST(ActiveTest, WindowCrossingMidnightBelongsToTheDayItStarts) {
  const ScheduleOptions o;
  const ScheduledCapacity sc(o);
  const CronRule r = Rule("night", {0}, "mon-fri", "18:00", "09:00");
  struct Case {
    const char* name;
    Timestamp t;
    bool active;
  };
  for (const Case& c : std::vector<Case>{
           {"monday morning: sunday's window is off", When(kMon, 8), false},
           {"monday afternoon", When(kMon, 17, 59), false},
           {"monday evening", When(kMon, 18), true},
           {"tuesday morning: monday's window", When(kTue, 8, 59), true},
           {"tuesday at nine", When(kTue, 9), false},
           {"friday 20:00", When(kFri, 20), true},
           {"saturday 08:00: friday's window", When(kSat, 8), true},
           {"saturday 09:00", When(kSat, 9), false},
           {"saturday 20:00: saturday is off", When(kSat, 20), false},
           {"sunday 08:00", When(kSun, 8), false},
           {"sunday 20:00", When(kSun, 20), false},
       }) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(sc.Active(r, c.t, Duration{0}), c.active);
  }
}

TEST(ActiveTest, FromEqualToIsAWholeDay) {
  const ScheduleOptions o;
  const ScheduledCapacity sc(o);
  const CronRule r = Rule("monday", {0}, "mon", "09:00", "09:00");
  EXPECT_FALSE(sc.Active(r, When(kMon, 8, 59), Duration{0}));
  EXPECT_TRUE(sc.Active(r, When(kMon, 9), Duration{0}));
  EXPECT_TRUE(sc.Active(r, When(kMon, 23), Duration{0}));
  EXPECT_TRUE(sc.Active(r, When(kTue, 8, 59), Duration{0}));
  EXPECT_FALSE(sc.Active(r, When(kTue, 9), Duration{0}));
}

TEST(ActiveTest, LeadStartsTheWindowEarlyButEndsItOnTime) {
  const ScheduleOptions o;
  const ScheduledCapacity sc(o);
  const CronRule r = Rule("day", {0}, "mon-fri", "09:00", "18:00");
  const Duration lead = Minutes(3);
  EXPECT_FALSE(sc.Active(r, When(kMon, 8, 56), lead));
  EXPECT_TRUE(sc.Active(r, When(kMon, 8, 57), lead));
  EXPECT_TRUE(sc.Active(r, When(kMon, 17, 58), lead));  // the floor holds until `to`
  EXPECT_FALSE(sc.Active(r, When(kMon, 18), lead));
  // Friday's pre-warm starts on Friday; Monday's on Monday, not on the Sunday before.
  EXPECT_TRUE(sc.Active(r, When(kFri, 8, 57), lead));
  EXPECT_FALSE(sc.Active(r, When(kSat, 8, 57), lead));
  EXPECT_TRUE(sc.Active(r, When(kNextMon, 8, 57), lead));
}

TEST(ActiveTest, LocalTimeOfANamedZone) {
  ScheduleOptions o;
  o.time_zone = date::locate_zone("Asia/Shanghai");  // UTC+8, no daylight saving
  o.time_zone_name = "Asia/Shanghai";
  const ScheduledCapacity sc(o);
  const CronRule night = Rule("night", {0}, "mon-fri", "18:00", "09:00");
  EXPECT_FALSE(sc.Active(night, When(kMon, 9, 59), Duration{0}));  // 17:59 local
  EXPECT_TRUE(sc.Active(night, When(kMon, 10), Duration{0}));       // 18:00 local
  EXPECT_TRUE(sc.Active(night, When(kTue, 0, 59), Duration{0}));    // 08:59 local Tuesday
  EXPECT_FALSE(sc.Active(night, When(kTue, 1), Duration{0}));       // 09:00 local
  // Friday 23:00 UTC is Saturday 07:00 local: still Friday's window.
  EXPECT_TRUE(sc.Active(night, When(kFri, 23), Duration{0}));
  // Saturday 10:00 UTC is Saturday 18:00 local: Saturday is off.
  EXPECT_FALSE(sc.Active(night, When(kSat, 10), Duration{0}));

  // The weekday is the local one: Friday 16:00 UTC is Saturday 00:00 local.
  const CronRule saturday = Rule("saturday", {0}, "sat", "00:00", "24:00");
  EXPECT_FALSE(sc.Active(saturday, When(kFri, 15, 59), Duration{0}));
  EXPECT_TRUE(sc.Active(saturday, When(kFri, 16), Duration{0}));
  EXPECT_TRUE(sc.Active(saturday, When(kSat, 15, 59), Duration{0}));
  EXPECT_FALSE(sc.Active(saturday, When(kSat, 16), Duration{0}));
}

// --- ApplyLimits and Enforce -------------------------------------------------

class ScheduledCapacityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Pool 0 "core" is left alone by the rules; pool 1 "flex" is capped at
    // night and floored by day; pool 2 is reserved.
    spec_ = testing::Spec({Pool("core", 8, Tier::kOnDemand, 100, 0, 10), Pool("flex", 8, Tier::kOnDemand, 100, 1, 20),
                           Pool("res", 8, Tier::kReserved, 50, 2, 2)});
    state_.spec = &spec_;
    CronRule cap = Rule("night-cap", {1}, "mon-fri", "18:00", "09:00");
    cap.max_nodes = 2;
    CronRule floor = Rule("day-floor", {1}, "mon-fri", "09:00", "18:00");
    floor.min_nodes = 6;
    options_.rules = {cap, floor};
  }

  // ApplyLimits, then Enforce, on a fresh context; the context is kept in ctx_.
  ScalingPlan Run(Timestamp now, bool enforce = true) {
    ScalingPlan plan;
    ctx_ = std::make_unique<PassContext>(state_, now);
    IndexState(ctx_.get());
    const ScheduledCapacity sc(options_);
    sc.ApplyLimits(ctx_.get(), &plan);
    if (enforce) sc.Enforce(ctx_.get(), &plan);
    return plan;
  }

  model::ClusterSpec spec_;
  model::ClusterState state_;
  ScheduleOptions options_;
  std::unique_ptr<PassContext> ctx_;
};

TEST_F(ScheduledCapacityTest, WithoutRulesTheLimitsAreThePools) {
  options_.rules.clear();
  const ScalingPlan plan = Run(When(kMon, 12));
  EXPECT_EQ(ctx_->min_nodes, std::vector<int>({0, 1, 2}));
  EXPECT_EQ(ctx_->max_nodes, std::vector<int>({10, 20, 2}));
  EXPECT_TRUE(plan.actions.empty());
  EXPECT_EQ(plan.next_wakeup, kInfiniteFuture);
}

TEST_F(ScheduledCapacityTest, ApplyLimitsNarrowsTheRulesPoolsOnly) {
  // `next` is the next time a limit changes: plan.next_wakeup is after now
  // and no later (it may be earlier: an extra pass is harmless, a missed
  // boundary is not).
  struct Case {
    const char* name;
    Timestamp now;
    std::vector<int> min, max;
    Timestamp next;
  };
  for (const Case& c : std::vector<Case>{
           // Monday morning: Sunday's night is off; the floor's pre-warm starts a boot delay (3 min) ahead.
           {"monday 08:00", When(kMon, 8), {0, 1, 2}, {10, 20, 2}, When(kMon, 8, 57)},
           // Day: the floor holds until 18:00, when the cap starts.
           {"monday noon", When(kMon, 12), {0, 6, 2}, {10, 20, 2}, When(kMon, 18)},
           {"monday evening", When(kMon, 20), {0, 1, 2}, {10, 2, 2}, When(kTue, 8, 57)},
           {"pre-warm under the cap", When(kTue, 8, 57), {0, 2, 2}, {10, 2, 2}, When(kTue, 9)},  // the cap wins
           {"tuesday 09:00", When(kTue, 9), {0, 6, 2}, {10, 20, 2}, When(kTue, 18)},
           {"floor's last minute", When(kTue, 17, 59), {0, 6, 2}, {10, 20, 2}, When(kTue, 18)},
           // Friday night's cap lasts to Saturday 09:00; no rule starts again until Monday's pre-warm.
           {"saturday 08:00", When(kSat, 8), {0, 1, 2}, {10, 2, 2}, When(kSat, 9)},
           {"saturday noon", When(kSat, 12), {0, 1, 2}, {10, 20, 2}, When(kNextMon, 8, 57)},
       }) {
    SCOPED_TRACE(c.name);
    const ScalingPlan plan = Run(c.now, /*enforce=*/false);
    EXPECT_EQ(ctx_->min_nodes, c.min);
    EXPECT_EQ(ctx_->max_nodes, c.max);
    EXPECT_GT(plan.next_wakeup, c.now) << FormatTimestamp(plan.next_wakeup);
    EXPECT_LE(plan.next_wakeup, c.next) << FormatTimestamp(plan.next_wakeup);
  }
}

TEST_F(ScheduledCapacityTest, NextWakeupIsTheNextBoundaryIncludingThePreWarm) {
  struct Case {
    const char* name;
    Timestamp now, next;
  };
  for (const Case& c : std::vector<Case>{
           {"night: the floor's pre-warm", When(kMon, 20), When(kTue, 8, 57)},
           {"pre-warm: the cap ends", When(kTue, 8, 57), When(kTue, 9)},
           {"just before the cap", When(kTue, 17, 59), When(kTue, 18)},
           {"monday morning: the floor's pre-warm", When(kMon, 8), When(kMon, 8, 57)},
       }) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Run(c.now, false).next_wakeup, c.next) << FormatTimestamp(Run(c.now, false).next_wakeup);
  }
}

TEST_F(ScheduledCapacityTest, ApplyLimitsKeepsAnEarlierWakeupAndNeverWidensALimit) {
  CronRule loose = Rule("loose", {1}, "daily", "00:00", "24:00");
  loose.max_nodes = 50;  // above the pool's 20
  loose.min_nodes = 0;   // below the pool's 1
  options_.rules = {loose};
  ScalingPlan plan;
  plan.next_wakeup = When(kMon, 0, 5);
  PassContext ctx(state_, When(kMon, 0, 1));
  IndexState(&ctx);
  ScheduledCapacity(options_).ApplyLimits(&ctx, &plan);
  EXPECT_EQ(ctx.min_nodes, std::vector<int>({0, 1, 2}));
  EXPECT_EQ(ctx.max_nodes, std::vector<int>({10, 20, 2}));
  EXPECT_EQ(plan.next_wakeup, When(kMon, 0, 5));
}

TEST_F(ScheduledCapacityTest, LeadIsThePoolsBootDelayUnlessGiven) {
  spec_.pools[1].boot_delay.kind = model::BootDelay::Kind::kUniform;
  spec_.pools[1].boot_delay.min = Minutes(5);
  spec_.pools[1].boot_delay.max = Minutes(15);  // expected: 10 min
  // Monday morning (Sunday's night is off, so no cap): the floor from 08:50.
  Run(When(kMon, 8, 49), false);
  EXPECT_EQ(ctx_->min_nodes[1], 1);
  ScalingPlan plan = Run(When(kMon, 8, 50), false);
  EXPECT_EQ(ctx_->min_nodes[1], 6);
  EXPECT_EQ(plan.next_wakeup, When(kMon, 9));
  // An explicit lead wins.
  options_.rules[1].lead = Minutes(30);
  Run(When(kMon, 8, 29), false);
  EXPECT_EQ(ctx_->min_nodes[1], 1);
  plan = Run(When(kMon, 8, 30), false);
  EXPECT_EQ(ctx_->min_nodes[1], 6);
  EXPECT_EQ(plan.next_wakeup, When(kMon, 9));
  // Before it, the wakeup is the pre-warm itself.
  EXPECT_EQ(Run(When(kMon, 8), false).next_wakeup, When(kMon, 8, 30));
}

TEST_F(ScheduledCapacityTest, NextWakeupInANamedZone) {
  options_.time_zone = date::locate_zone("Asia/Shanghai");
  options_.time_zone_name = "Asia/Shanghai";
  // Monday 10:00 UTC is 18:00 local: the cap is on, the floor off.
  ScalingPlan plan = Run(When(kMon, 10), false);
  EXPECT_EQ(ctx_->max_nodes[1], 2);
  EXPECT_EQ(ctx_->min_nodes[1], 1);
  // Next: Tuesday's pre-warm at 08:57 local = Tuesday 00:57 UTC.
  EXPECT_EQ(plan.next_wakeup, When(kTue, 0, 57));
  plan = Run(When(kMon, 9, 59), false);  // 17:59 local
  EXPECT_EQ(ctx_->min_nodes[1], 6);
  EXPECT_EQ(plan.next_wakeup, When(kMon, 10));
}

TEST_F(ScheduledCapacityTest, EnforceBuysUpToTheFloorAhead) {
  // Two flex nodes (one booting) and one core node; the floor of 6 starts
  // at 09:00 and is bought a boot delay ahead.
  state_.nodes = {ReadyNode(1, 1, 8, 8), testing::BootingNode(2, 1, 8, 100), ReadyNode(3, 0, 8, 8)};
  ScalingPlan plan = Run(When(kMon, 8, 56));
  EXPECT_TRUE(plan.actions.empty());

  plan = Run(When(kMon, 8, 57));
  ASSERT_EQ(plan.actions.size(), 1u);
  const Action& a = plan.actions[0];
  EXPECT_EQ(a.kind, ActionKind::kScaleUp);
  EXPECT_EQ(a.pool, 1);
  EXPECT_EQ(a.count, 4);  // floor 6 - 2 nodes
  EXPECT_FALSE(a.forecast);
  EXPECT_THAT(a.reason, HasSubstr("day-floor"));
  EXPECT_THAT(a.reason, HasSubstr("at least 6"));
  EXPECT_EQ(ctx_->extra_nodes[1], 4);
  EXPECT_EQ(ctx_->live[1], 6);
  EXPECT_EQ(ctx_->extra_nodes[0], 0);
}

TEST_F(ScheduledCapacityTest, EnforceDoesNotCountNodesThatAreGoing) {
  state_.nodes = {ReadyNode(1, 1, 8, 8), ReadyNode(2, 1, 8, 8), ReadyNode(3, 1, 8, 8)};
  state_.nodes[1].state = model::NodeState::kDraining;
  state_.nodes[2].interrupt_at = When(kMon, 12, 2);  // under spot notice
  const ScalingPlan plan = Run(When(kMon, 12));
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_EQ(plan.actions[0].kind, ActionKind::kScaleUp);
  EXPECT_EQ(plan.actions[0].count, 5);
}

TEST_F(ScheduledCapacityTest, EnforceAtOrAboveTheFloorBuysNothing) {
  for (int k = 1; k <= 7; ++k) state_.nodes.push_back(ReadyNode(k, 1, 8, 8));
  EXPECT_TRUE(Run(When(kMon, 12)).actions.empty());
}

TEST_F(ScheduledCapacityTest, EnforceNeverBuysReservedNodes) {
  CronRule r = Rule("res-floor", {2}, "daily", "00:00", "24:00");
  r.min_nodes = 2;
  options_.rules = {r};
  EXPECT_TRUE(Run(When(kMon, 12)).actions.empty());
}

TEST_F(ScheduledCapacityTest, EnforceReleasesIdleAndDrainsBusyAboveTheCap) {
  // Six flex nodes above a cap of 2 at night: 4 must go. Idle ones are
  // released; then the busy ones with the most free GPUs are drained.
  state_.nodes = {ReadyNode(1, 1, 8, 8),  ReadyNode(2, 1, 8, 8), ReadyNode(3, 1, 8, 8),
                  ReadyNode(4, 1, 8, 8),  ReadyNode(5, 1, 8, 8), ReadyNode(6, 1, 8, 8),
                  ReadyNode(7, 0, 8, 8)};  // core: untouched
  testing::AddRunning(&state_, testing::Pending(10, 4, 1), {{3, 1}}, 100000);  // node 3: 4 free
  testing::AddRunning(&state_, testing::Pending(11, 8, 1), {{4, 1}}, 100000);  // node 4: 0 free
  testing::AddRunning(&state_, testing::Pending(12, 2, 1), {{5, 1}}, 100000);  // node 5: 6 free
  testing::AddRunning(&state_, testing::Pending(13, 6, 1), {{6, 1}}, 100000);  // node 6: 2 free
  const ScalingPlan plan = Run(When(kMon, 20));
  ASSERT_EQ(plan.actions.size(), 2u);
  const Action& release = plan.actions[0];
  const Action& drain = plan.actions[1];
  EXPECT_EQ(release.kind, ActionKind::kRelease);
  EXPECT_EQ(release.pool, 1);
  EXPECT_EQ(release.nodes, std::vector<model::NodeId>({2, 1}));
  EXPECT_EQ(release.count, 2);
  EXPECT_THAT(release.reason, HasSubstr("night-cap"));
  EXPECT_THAT(release.reason, HasSubstr("at most 2"));
  EXPECT_EQ(drain.kind, ActionKind::kDrain);
  EXPECT_EQ(drain.pool, 1);
  EXPECT_EQ(drain.nodes, std::vector<model::NodeId>({5, 3}));
  EXPECT_EQ(drain.count, 2);
  // No node is both released and drained; all four are marked as leaving.
  for (model::NodeId id : release.nodes) {
    EXPECT_EQ(std::count(drain.nodes.begin(), drain.nodes.end(), id), 0) << id;
  }
  EXPECT_THAT(ctx_->leaving, UnorderedElementsAre(1, 2, 3, 5));
}

TEST_F(ScheduledCapacityTest, EnforceOnlyReleasesWhenIdleNodesCoverTheExcess) {
  state_.nodes = {ReadyNode(1, 1, 8, 8), ReadyNode(2, 1, 8, 8), ReadyNode(3, 1, 8, 8), ReadyNode(4, 1, 8, 8)};
  testing::AddRunning(&state_, testing::Pending(10, 8, 1), {{1, 1}}, 100000);
  const ScalingPlan plan = Run(When(kMon, 20));
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_EQ(plan.actions[0].kind, ActionKind::kRelease);
  EXPECT_EQ(plan.actions[0].nodes, std::vector<model::NodeId>({4, 3}));
}

TEST_F(ScheduledCapacityTest, EnforceWithoutDrainLeavesBusyNodes) {
  options_.rules[0].drain = false;
  state_.nodes = {ReadyNode(1, 1, 8, 8), ReadyNode(2, 1, 8, 8), ReadyNode(3, 1, 8, 8), ReadyNode(4, 1, 8, 8)};
  testing::AddRunning(&state_, testing::Pending(10, 8, 1), {{1, 1}}, 100000);
  testing::AddRunning(&state_, testing::Pending(11, 8, 1), {{2, 1}}, 100000);
  testing::AddRunning(&state_, testing::Pending(12, 8, 1), {{3, 1}}, 100000);
  const ScalingPlan plan = Run(When(kMon, 20));
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_EQ(plan.actions[0].kind, ActionKind::kRelease);
  EXPECT_EQ(plan.actions[0].nodes, std::vector<model::NodeId>({4}));
}

TEST_F(ScheduledCapacityTest, EnforceLeavesBootingDrainingAndLeavingNodesAlone) {
  state_.nodes = {ReadyNode(1, 1, 8, 8), testing::BootingNode(2, 1, 8, 100000), ReadyNode(3, 1, 8, 8),
                  ReadyNode(4, 1, 8, 8)};
  state_.nodes[2].state = model::NodeState::kDraining;  // already going: not counted
  // Staying: 1 (idle), 2 (booting), 4 (idle): one above the cap of 2.
  ScalingPlan plan = Run(When(kMon, 20));
  ASSERT_EQ(plan.actions.size(), 1u);
  EXPECT_EQ(plan.actions[0].kind, ActionKind::kRelease);
  EXPECT_EQ(plan.actions[0].nodes, std::vector<model::NodeId>({4}));

  // Only booting nodes above the cap: nothing can go now.
  state_.nodes = {testing::BootingNode(1, 1, 8, 100000), testing::BootingNode(2, 1, 8, 100000),
                  testing::BootingNode(3, 1, 8, 100000)};
  plan = Run(When(kMon, 20));
  EXPECT_TRUE(plan.actions.empty());
}

TEST_F(ScheduledCapacityTest, EnforceAtOrBelowTheCapDoesNothing) {
  state_.nodes = {ReadyNode(1, 1, 8, 8), ReadyNode(2, 1, 8, 8), ReadyNode(3, 0, 8, 8), ReadyNode(4, 0, 8, 8),
                  ReadyNode(5, 0, 8, 8)};
  EXPECT_TRUE(Run(When(kMon, 20)).actions.empty());
}

}  // namespace
}  // namespace tide::autoscale
