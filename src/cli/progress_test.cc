#include "cli/progress.h"

#include <gtest/gtest.h>

#include <atomic>
#include <sstream>
#include <thread>

namespace tide::cli {
namespace {

TEST(ProgressLine, SaysSimulatedTimeJobsRateAndTimeLeft) {
  sim::SimProgress p[2];
  p[0].now = 1'767'614'400;  // 2026-01-05T12:00:00Z
  p[0].jobs_done = 250;
  p[0].events = 3000;
  p[1].now = 1'767'600'000;  // 08:00, behind: the line shows the slowest
  p[1].jobs_done = 250;
  p[1].events = 1000;
  EXPECT_EQ(ProgressLine(p, 2, 1000, 2.0),
            "simulating 2 policies: 2026-01-05 08:00 UTC, jobs 250/1,000 (25%), 2.0k events/s, about 6s left");
}

TEST(ProgressLine, FinishedPoliciesCountAsDone) {
  sim::SimProgress p[2];
  p[0].finished = true;
  p[0].jobs_done = 1000;
  p[1].now = 1'767'614'400;
  p[1].jobs_done = 0;
  EXPECT_EQ(ProgressLine(p, 2, 1000, 10.0),
            "simulating 2 policies: 2026-01-05 12:00 UTC, jobs 500/1,000 (50%), 0 events/s, about 10s left");
}

TEST(ProgressLine, NoEstimateBeforeThereIsProgress) {
  sim::SimProgress p[1];
  EXPECT_EQ(ProgressLine(p, 1, 1000, 0.0), "simulating 1 policy: jobs 0/1,000 (0%), estimating time left");
}

TEST(ProgressWanted, FollowsTheMode) {
  EXPECT_TRUE(ProgressWanted(ProgressMode::kAlways));
  EXPECT_FALSE(ProgressWanted(ProgressMode::kNever));
}

// A stream buffer that counts what was written, readable from another thread.
class CountingBuf : public std::stringbuf {
 public:
  std::atomic<int> writes{0};

 protected:
  int sync() override {
    ++writes;
    return std::stringbuf::sync();
  }
};

TEST(ProgressDisplay, RedrawsInPlaceAndClearsTheLineAtTheEnd) {
  sim::SimProgress p[1];
  p[0].jobs_done = 5;
  CountingBuf buf;
  std::ostream out(&buf);
  {
    ProgressDisplay d(&out, p, 1, 10, /*period_ms=*/1);
    while (buf.writes.load() == 0) std::this_thread::yield();
  }  // joined: the buffer is ours again
  const std::string s = buf.str();
  EXPECT_EQ(s.rfind("\r\033[Ksimulating 1 policy: jobs 5/10 (50%)", 0), 0u) << s;
  EXPECT_EQ(s.substr(s.size() - 4), "\r\033[K");  // nothing left on the terminal
}

}  // namespace
}  // namespace tide::cli
