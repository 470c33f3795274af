#include "autoscale/scaledown/budget.h"

#include <vector>

#include "gtest/gtest.h"
#include "testutil/builders.h"

namespace tide::autoscale {
namespace {

using testing::At;

BudgetOptions Budget(int max_nodes, Duration window = Minutes(10)) {
  BudgetOptions o;
  o.max_nodes = max_nodes;
  o.window = window;
  return o;
}

TEST(DisruptionAllowanceTest, ZeroMaxIsUnlimited) {
  model::ClusterState state;
  for (int i = 0; i < 100; ++i) state.recent_disruptions.push_back(At(1000 - i));
  Timestamp next = kInfiniteFuture;
  const int allowance = DisruptionAllowance(Budget(0), state, At(1000), &next);
  EXPECT_GE(allowance, 1000000);
  EXPECT_EQ(next, kInfiniteFuture);
}

TEST(DisruptionAllowanceTest, CountsDisruptionsInTheWindow) {
  // Budget: 4 nodes per 10 minutes; now = 1000 s, so the window is (400, 1000].
  struct Case {
    const char* name;
    std::vector<int64_t> disruptions;  // seconds after kT0
    int allowance;
    Timestamp next;  // kInfiniteFuture: none in the window
  };
  for (const Case& c : std::vector<Case>{
           {"none", {}, 4, kInfiniteFuture},
           {"one just now", {1000}, 3, At(1600)},
           {"oldest sets when it grows", {500, 900, 990}, 1, At(1100)},
           {"the window's start is out", {400}, 4, kInfiniteFuture},
           {"a second later is in", {401}, 3, At(1001)},
           {"long ago", {0, 100, 399}, 4, kInfiniteFuture},
           {"the future does not count", {1001, 2000}, 4, kInfiniteFuture},
           {"unsorted", {990, 700, 1000, 450}, 0, At(1050)},
           {"more than the budget", {600, 700, 800, 900, 950, 999}, 0, At(1200)},
           {"mixed", {100, 399, 400, 401, 1000, 1001}, 2, At(1001)},
       }) {
    SCOPED_TRACE(c.name);
    model::ClusterState state;
    for (int64_t s : c.disruptions) state.recent_disruptions.push_back(At(s));
    Timestamp next = kInfiniteFuture;
    EXPECT_EQ(DisruptionAllowance(Budget(4), state, At(1000), &next), c.allowance);
    EXPECT_EQ(next, c.next);
  }
}

TEST(DisruptionAllowanceTest, OnlyLowersNext) {
  model::ClusterState state;
  state.recent_disruptions = {At(900)};
  Timestamp next = At(1200);
  EXPECT_EQ(DisruptionAllowance(Budget(2), state, At(1000), &next), 1);
  EXPECT_EQ(next, At(1200));  // 900 + 600 = 1500 is later
  next = At(2000);
  DisruptionAllowance(Budget(2), state, At(1000), &next);
  EXPECT_EQ(next, At(1500));
}

TEST(DisruptionAllowanceTest, AnotherWindow) {
  model::ClusterState state;
  state.recent_disruptions = {At(0), At(30), At(59), At(60)};
  Timestamp next = kInfiniteFuture;
  // Window (0, 60]: three disruptions of a budget of one.
  EXPECT_EQ(DisruptionAllowance(Budget(1, Seconds(60)), state, At(60), &next), 0);
  EXPECT_EQ(next, At(90));
  // The allowance grows as they leave the window.
  next = kInfiniteFuture;
  EXPECT_EQ(DisruptionAllowance(Budget(3, Seconds(60)), state, At(90), &next), 1);  // 59 and 60 remain
  EXPECT_EQ(next, At(119));
  next = kInfiniteFuture;
  EXPECT_EQ(DisruptionAllowance(Budget(3, Seconds(60)), state, At(120), &next), 3);
  EXPECT_EQ(next, kInfiniteFuture);
}

}  // namespace
}  // namespace tide::autoscale
