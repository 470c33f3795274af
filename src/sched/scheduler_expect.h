// For tests: expects two scheduler passes to have decided the same.
#ifndef TIDE_SCHED_SCHEDULER_EXPECT_H_
#define TIDE_SCHED_SCHEDULER_EXPECT_H_

#include <string>

#include "gtest/gtest.h"
#include "sched/scheduler.h"

namespace tide::sched {

// The same placements (jobs, shares, backfilled or not), head and shadow time.
inline void ExpectSameDecisions(const SchedulerOutput& got, const SchedulerOutput& want, const std::string& where) {
  ASSERT_EQ(got.placements.size(), want.placements.size()) << where;
  for (size_t i = 0; i < want.placements.size(); ++i) {
    EXPECT_EQ(got.placements[i].job, want.placements[i].job) << where;
    EXPECT_EQ(got.placements[i].shares, want.placements[i].shares) << where;
    EXPECT_EQ(got.placements[i].backfilled, want.placements[i].backfilled) << where;
  }
  EXPECT_EQ(got.head, want.head) << where;
  EXPECT_EQ(got.shadow_time, want.shadow_time) << where;
}

}  // namespace tide::sched

#endif  // TIDE_SCHED_SCHEDULER_EXPECT_H_
