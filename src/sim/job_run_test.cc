#include "sim/job_run.h"

#include "gtest/gtest.h"
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

TEST(JobRunTest, UninterruptedRunEndsAtItsRuntime) {
  for (int64_t runtime : {50, 100, 1000, 3600, 3700, 7260, 86400}) {
    SCOPED_TRACE(runtime);
    const auto ck = Ckpt(1800, 60);
    const double w = WorkFor(Seconds(runtime), Phases(), ck);
    const JobRun r(At(0), 0, w, 1.0, std::min(Seconds(runtime), Seconds(100)), ck, Phases());
    EXPECT_EQ(r.EndTime(), At(runtime));
  }
}

TEST(JobRunTest, ProgressPausesForStartupAndCheckpoints) {
  // 100 s startup, checkpoint every 1000 s of work costing 50 s, 2500 s of work.
  const JobRun r(At(0), 0, 2500, 1.0, Seconds(100), Ckpt(1000, 50), Phases());
  EXPECT_DOUBLE_EQ(r.ProgressAt(At(50)), 0);
  EXPECT_DOUBLE_EQ(r.ProgressAt(At(600)), 500);
  EXPECT_DOUBLE_EQ(r.ProgressAt(At(1100)), 1000);  // checkpoint 1 starts
  EXPECT_DOUBLE_EQ(r.ProgressAt(At(1140)), 1000);
  EXPECT_DOUBLE_EQ(r.SavedAt(At(1140)), 0);        // not complete yet
  EXPECT_DOUBLE_EQ(r.SavedAt(At(1150)), 1000);
  EXPECT_DOUBLE_EQ(r.ProgressAt(At(1650)), 1500);
  EXPECT_EQ(r.EndTime(), At(100 + 2500 + 2 * 50));  // two checkpoints, none at the end
  EXPECT_DOUBLE_EQ(r.ProgressAt(r.EndTime()), 2500);
  EXPECT_DOUBLE_EQ(r.SavedAt(r.EndTime()), 2000);
}

TEST(JobRunTest, ResumesFromSavedProgressAtAnotherRate) {
  const JobRun r(At(1000), 400, 1000, 2.0, Seconds(10), Ckpt(0, 0), Phases());
  EXPECT_DOUBLE_EQ(r.ProgressAt(At(1010)), 400);
  EXPECT_DOUBLE_EQ(r.ProgressAt(At(1110)), 600);
  EXPECT_EQ(r.EndTime(), At(1000 + 10 + 300));
  EXPECT_DOUBLE_EQ(r.SavedAt(At(1200)), 400);  // never checkpoints
}

TEST(JobRunTest, UtilisationFollowsActivityAndPhase) {
  const JobRun r(At(0), 0, 2000, 1.0, Seconds(100), Ckpt(1000, 50), Phases());
  EXPECT_DOUBLE_EQ(r.UtilAt(At(0)), 0.05);    // loading
  EXPECT_DOUBLE_EQ(r.UtilAt(At(500)), 0.9);   // training
  EXPECT_DOUBLE_EQ(r.UtilAt(At(1120)), 0.02); // checkpoint
  EXPECT_DOUBLE_EQ(r.UtilAt(At(2000)), 0.3);  // progress 1850 >= 1800: evaluation
  EXPECT_EQ(r.NextChange(At(0)), At(100));
  EXPECT_EQ(r.NextChange(At(500)), At(1100));
  EXPECT_EQ(r.NextChange(At(1100)), At(1150));
  EXPECT_EQ(r.NextChange(At(1200)), At(1950));  // evaluation starts at progress 1800
  EXPECT_EQ(r.PrevChange(At(500)), At(100));
  EXPECT_EQ(r.PrevChange(At(1120)), At(1100));
  EXPECT_EQ(r.PrevChange(At(2000)), At(1950));
}

TEST(JobRunTest, WorkForShortAndCheckpointFreeJobs) {
  EXPECT_DOUBLE_EQ(WorkFor(Seconds(60), Phases(), Ckpt(1800, 60)), 0);  // all load
  EXPECT_DOUBLE_EQ(WorkFor(Seconds(1000), Phases(), Ckpt(0, 0)), 900);
  EXPECT_DOUBLE_EQ(WorkFor(Seconds(1900), Phases(), Ckpt(1800, 60)), 1800);
  EXPECT_DOUBLE_EQ(WorkFor(Seconds(1960), Phases(), Ckpt(1800, 60)), 1800);  // a checkpoint would end it
  EXPECT_DOUBLE_EQ(WorkFor(Seconds(1961), Phases(), Ckpt(1800, 60)), 1801);
}

}  // namespace
}  // namespace tide::sim
