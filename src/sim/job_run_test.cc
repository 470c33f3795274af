#include "sim/job_run.h"

#include <utility>
#include <vector>

#include "core/rng.h"
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

TEST(JobRunTest, UtilizationFollowsActivityAndPhase) {
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

// The pieces ForEachPiece gives are those of a walk by NextChange and UtilAt,
// with equal values: the simulator adds them up in that order, so a sum that
// differed in its last bit would change a figure.
TEST(JobRunTest, PiecesAreThoseOfAWalkByNextChange) {
  Rng rng(23);
  int pieces = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    model::JobPhases ph = Phases();
    ph.eval_share = rng.UniformInt(0, 4) * 0.1 + (rng.Bernoulli(0.3) ? rng.Uniform() * 0.05 : 0);
    const double work = rng.Bernoulli(0.5) ? static_cast<double>(rng.UniformInt(1, 20000)) : 1 + rng.Uniform() * 20000;
    const double p0 = rng.Bernoulli(0.3) ? 0 : rng.Uniform() * work;
    const double rate = rng.Bernoulli(0.4) ? 1.0 : 0.2 + rng.Uniform() * 2;
    const int64_t interval = rng.Bernoulli(0.2) ? 0 : rng.UniformInt(1, 3000);
    const int64_t cost = rng.Bernoulli(0.1) ? 0 : rng.UniformInt(1, 200);
    const Timestamp start = At(rng.UniformInt(0, 100000));
    const JobRun r(start, p0, work, rate, Seconds(rng.UniformInt(0, 400)), Ckpt(interval, cost), ph);
    const int64_t span = (r.EndTime() - start).count();
    const Timestamp from = start + Seconds(rng.Bernoulli(0.5) ? 0 : rng.UniformInt(0, span));
    const Timestamp to = start + Seconds(rng.Bernoulli(0.5) ? span : rng.UniformInt((from - start).count(), span));
    std::vector<std::pair<double, int64_t>> want, got;
    for (Timestamp t = from; t < to;) {
      const Timestamp next = std::min(to, r.NextChange(t));
      want.emplace_back(r.UtilAt(t), (next - t).count());
      t = next;
    }
    r.ForEachPiece(from, to, [&](double util, int64_t seconds) { got.emplace_back(util, seconds); });
    ASSERT_EQ(got, want) << "trial " << trial << ": work " << work << " from " << p0 << " at rate " << rate
                         << ", checkpoint every " << interval << " s for " << cost << " s";
    pieces += static_cast<int>(got.size());
  }
  EXPECT_GT(pieces, 10000);  // most walks cross many checkpoints
}

}  // namespace
}  // namespace tide::sim
