// The MetricsView contract (model/cluster.h) as typed tests, run over every
// implementation by metrics_contract_test.cc. Each implementation is given
// the same utilization history of a few jobs, in its own way, through one
// traits struct:
//
//   struct MyTraits {
//     static constexpr const char* kName = "...";
//     // It knows a run's future (the simulator's job model): its answers
//     // about when a condition will hold are exact. A view that does not
//     // (the live history) answers "not yet" with a time after `t` that is
//     // no later than the truth: the next time it will know more.
//     static constexpr bool kSeesAhead = ...;
//     using Env = ...;
//     // A view of these histories; nullptr if it cannot be given them (the
//     // test is then skipped, saying so).
//     static std::unique_ptr<Env> Make(const std::vector<JobHistory>& jobs);
//     // The view as it stands at `now` (the live history: every sample up
//     // to `now` recorded). Called with `now` nondecreasing; the tests then
//     // ask at `now`, as the controller and the simulator do.
//     static void AdvanceTo(Env& env, Timestamp now);
//     static const model::MetricsView& View(const Env& env);
//   };
//
// The expected answers come from the history itself (Reference below).
#ifndef TIDE_TESTS_CONTRACT_METRICS_CONTRACT_H_
#define TIDE_TESTS_CONTRACT_METRICS_CONTRACT_H_

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/strings.h"
#include "core/time.h"
#include "gtest/gtest.h"
#include "model/cluster.h"

namespace tide::contract {

// `util` for `length`.
struct Piece {
  double util = 0;
  Duration length{};
};

// One job's run: its pieces back to back from `start`. Before `start` and
// from the end of the last piece on, the job has no run (no data).
struct JobHistory {
  model::JobId job = 0;
  Timestamp start{};
  std::vector<Piece> pieces;

  Timestamp End() const {
    Timestamp t = start;
    for (const auto& p : pieces) t += p.length;
    return t;
  }
  // The utilization at `t`, or nullopt outside the run.
  std::optional<double> UtilAt(Timestamp t) const {
    Timestamp from = start;
    for (const auto& p : pieces) {
      if (t >= from && t < from + p.length) return p.util;
      from += p.length;
    }
    return std::nullopt;
  }
};

// The answers the history implies.
class Reference {
 public:
  explicit Reference(const JobHistory& h) : h_(h) {}

  // The start of the stretch of pieces that `holds` throughout, ending in
  // the piece at `t`; nullopt if it does not hold at `t`.
  std::optional<Timestamp> Since(Timestamp t, const std::function<bool(double)>& holds) const {
    const auto u = h_.UtilAt(t);
    if (!u || !holds(*u)) return std::nullopt;
    Timestamp run_start = h_.start;
    Timestamp from = h_.start;
    for (const auto& p : h_.pieces) {
      if (!holds(p.util)) run_start = from + p.length;
      if (t < from + p.length) break;
      from += p.length;
    }
    return run_start;
  }

  // The earliest u >= t at which `holds` has held throughout [u - span, u]
  // within the run; kInfiniteFuture if never.
  Timestamp NextFor(Timestamp t, Duration span, const std::function<bool(double)>& holds) const {
    Timestamp from = h_.start;
    Timestamp run_start = kInfiniteFuture;  // of the stretch that holds up to `from`
    for (const auto& p : h_.pieces) {
      const Timestamp to = from + p.length;
      if (holds(p.util)) {
        if (run_start == kInfiniteFuture) run_start = from;
        // Holds over [run_start, to): u must be below `to`.
        if (to > t && run_start + span < to) return std::max(t, run_start + span);
      } else {
        run_start = kInfiniteFuture;
      }
      from = to;
    }
    return kInfiniteFuture;
  }

 private:
  const JobHistory& h_;
};

inline std::string At(Timestamp t, Timestamp origin) {
  return t == kInfiniteFuture ? "never" : StrCat("t0+", (t - origin).count(), "s");
}

// The histories the tests use. t0 is their origin.
inline constexpr Timestamp kOrigin = FromUnixSeconds(1767571200);  // 2026-01-05
inline constexpr model::JobId kUnknownJob = 4242;

// Job 1: loading at 0.05 for 10 minutes, training at 0.9 for 30, then
// evaluating at 0.3 for 10 (the example of a job idle at its start).
inline JobHistory LoadTrainEval() {
  return {1, kOrigin, {{0.05, Minutes(10)}, {0.9, Minutes(30)}, {0.3, Minutes(10)}}};
}
// Job 2, from t0+2m: 0.9 for 20 minutes, then 0.2 for 10.
inline JobHistory BusyThenQuiet() { return {2, kOrigin + Minutes(2), {{0.9, Minutes(20)}, {0.2, Minutes(10)}}}; }
// Job 3, from t0+5m: 0.02 for 15 minutes, then 0.9 for 10.
inline JobHistory LongIdleStart() { return {3, kOrigin + Minutes(5), {{0.02, Minutes(15)}, {0.9, Minutes(10)}}}; }

inline std::vector<JobHistory> ThreeJobs() { return {LoadTrainEval(), BusyThenQuiet(), LongIdleStart()}; }

// The questions asked: below or above a threshold, for a span.
struct Question {
  bool below = true;
  double threshold = 0.5;
  Duration span{};
  std::function<bool(double)> Holds() const {
    const bool b = below;
    const double x = threshold;
    return [b, x](double u) { return b ? u < x : u > x; };
  }
  std::string Describe() const {
    return StrCat(below ? "below " : "above ", threshold, " for ", span.count(), "s");
  }
};

inline std::vector<Question> Questions() {
  return {{true, 0.5, Minutes(5)},  {true, 0.5, Minutes(15)}, {true, 0.1, Minutes(1)}, {true, 0.95, Minutes(30)},
          {false, 0.5, Minutes(10)}, {false, 0.2, Minutes(5)}, {false, 0.04, Minutes(45)}};
}

template <typename Traits>
class MetricsContractTest : public ::testing::Test {
 protected:
  // A view of `jobs` at `now`; skips (returns nullptr) if it cannot be given them.
  std::unique_ptr<typename Traits::Env> ViewAt(const std::vector<JobHistory>& jobs, Timestamp now) {
    auto env = Traits::Make(jobs);
    if (env != nullptr) Traits::AdvanceTo(*env, now);
    return env;
  }

  // Checks every answer about `h` at `t` against the history.
  void CheckAt(const model::MetricsView& v, const JobHistory& h, Timestamp t) {
    SCOPED_TRACE(StrCat("job ", h.job, " at ", At(t, kOrigin)));
    const Reference ref(h);
    const std::optional<double> util = h.UtilAt(t);
    const auto got = v.UtilAt(h.job, t);
    if (util) {
      ASSERT_TRUE(got.has_value());
      EXPECT_DOUBLE_EQ(*got, *util);
    } else {
      // No run: no data, which is never idle.
      EXPECT_FALSE(got.has_value()) << *got;
    }
    for (const Question& q : Questions()) {
      SCOPED_TRACE(q.Describe());
      const auto since = q.below ? v.BelowSince(h.job, q.threshold, t) : v.AboveSince(h.job, q.threshold, t);
      const auto want_since = util ? ref.Since(t, q.Holds()) : std::nullopt;
      EXPECT_EQ(since.has_value(), want_since.has_value());
      if (since && want_since) {
        EXPECT_EQ(At(*since, kOrigin), At(*want_since, kOrigin));
      }

      const Timestamp next = q.below ? v.NextBelowFor(h.job, q.threshold, q.span, t)
                                     : v.NextAboveFor(h.job, q.threshold, q.span, t);
      const Timestamp truth = util ? ref.NextFor(t, q.span, q.Holds()) : kInfiniteFuture;
      CheckNext(next, truth, t, util.has_value());
    }
  }

  // NextBelowFor/NextAboveFor: `t` itself when it holds already; a view
  // that sees ahead gives the truth; one that does not answers a time
  // after `t` and no later than the truth.
  void CheckNext(Timestamp next, Timestamp truth, Timestamp t, bool known) {
    if (truth == t) {
      EXPECT_EQ(At(next, kOrigin), At(t, kOrigin)) << "it holds already";
      return;
    }
    EXPECT_GT(next, t) << "due at " << At(next, kOrigin) << ", which it is not";
    if (!known) return;  // nothing known: any later time (kInfiniteFuture included)
    if (Traits::kSeesAhead) {
      EXPECT_EQ(At(next, kOrigin), At(truth, kOrigin));
    } else {
      EXPECT_LE(next, truth) << "answers " << At(next, kOrigin) << ", after the truth " << At(truth, kOrigin);
    }
  }
};

TYPED_TEST_SUITE_P(MetricsContractTest);

// A job the view has no data for is unknown everywhere: nullopt, never 0
// (missing data is never idle), and never due.
TYPED_TEST_P(MetricsContractTest, UnknownJobIsUnknownEverywhere) {
  for (const Timestamp now : {kOrigin, kOrigin + Minutes(20)}) {
    auto env = this->ViewAt(ThreeJobs(), now);
    if (env == nullptr) GTEST_SKIP() << "cannot be given these histories";
    const model::MetricsView& v = TypeParam::View(*env);
    EXPECT_FALSE(v.UtilAt(kUnknownJob, now).has_value());
    for (const Question& q : Questions()) {
      SCOPED_TRACE(q.Describe());
      EXPECT_FALSE(v.BelowSince(kUnknownJob, q.threshold, now).has_value());
      EXPECT_FALSE(v.AboveSince(kUnknownJob, q.threshold, now).has_value());
      EXPECT_GT(v.NextBelowFor(kUnknownJob, q.threshold, q.span, now), now);
      EXPECT_GT(v.NextAboveFor(kUnknownJob, q.threshold, q.span, now), now);
    }
    std::vector<model::JobId> visited;
    (void)v.VisitByDue(true, 0.5, Minutes(5), now, [&](model::JobId j, Timestamp) {
      visited.push_back(j);
      return true;
    });
    EXPECT_EQ(std::count(visited.begin(), visited.end(), kUnknownJob), 0);
  }
}

// Before a job's run starts there is no data for it either.
TYPED_TEST_P(MetricsContractTest, NoDataBeforeTheRunStarts) {
  const JobHistory h = LongIdleStart();
  auto env = this->ViewAt({h}, h.start - Minutes(1));
  if (env == nullptr) GTEST_SKIP() << "cannot be given these histories";
  const model::MetricsView& v = TypeParam::View(*env);
  const Timestamp t = h.start - Minutes(1);
  EXPECT_FALSE(v.UtilAt(h.job, t).has_value());
  EXPECT_FALSE(v.BelowSince(h.job, 0.5, t).has_value());
  EXPECT_GT(v.NextBelowFor(h.job, 0.5, Minutes(1), t), t);
}

// Named cases of the example history (job 1: 0.05 for 10 minutes, 0.9 for
// 30, 0.3 for 10), each at its own `now`.
TYPED_TEST_P(MetricsContractTest, AnswersAboutTheExampleHistory) {
  struct Case {
    const char* name;
    int64_t at_s;  // now, from t0
    std::optional<double> util;
    std::optional<int64_t> below_half_since, above_half_since, above_fifth_since;  // from t0
    int64_t below_half_for_5m;  // NextBelowFor(0.5, 5m), from t0; -1: never
  };
  const std::vector<Case> cases = {
      {"LoadingJustStarted", 0, 0.05, 0, std::nullopt, std::nullopt, 300},
      {"LoadingForFourMinutes", 240, 0.05, 0, std::nullopt, std::nullopt, 300},
      {"LoadingForFiveMinutesIsDue", 300, 0.05, 0, std::nullopt, std::nullopt, 300},
      {"TrainingStarts", 600, 0.9, std::nullopt, 600, 600, 2700},
      {"Training", 1800, 0.9, std::nullopt, 600, 600, 2700},
      {"Evaluating", 2500, 0.3, 2400, std::nullopt, 600, 2700},
      {"EvaluatingForFiveMinutesIsDue", 2700, 0.3, 2400, std::nullopt, 600, 2700},
  };
  const JobHistory h = LoadTrainEval();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Timestamp t = kOrigin + Seconds(c.at_s);
    auto env = this->ViewAt({h}, t);
    if (env == nullptr) GTEST_SKIP() << "cannot be given these histories";
    const model::MetricsView& v = TypeParam::View(*env);
    EXPECT_EQ(v.UtilAt(h.job, t), c.util);
    auto from_origin = [](std::optional<Timestamp> x) {
      return x ? std::optional<int64_t>((*x - kOrigin).count()) : std::nullopt;
    };
    EXPECT_EQ(from_origin(v.BelowSince(h.job, 0.5, t)), c.below_half_since);
    EXPECT_EQ(from_origin(v.AboveSince(h.job, 0.5, t)), c.above_half_since);
    EXPECT_EQ(from_origin(v.AboveSince(h.job, 0.2, t)), c.above_fifth_since);
    const Timestamp next = v.NextBelowFor(h.job, 0.5, Minutes(5), t);
    const Timestamp truth = kOrigin + Seconds(c.below_half_for_5m);
    this->CheckNext(next, truth, t, true);
  }
}

// Every answer about every job, at every minute of the histories, from one
// view moving forward in time (as the driver's view does).
TYPED_TEST_P(MetricsContractTest, AnswersFollowTheHistoryAsTimeMovesOn) {
  const std::vector<JobHistory> jobs = ThreeJobs();
  auto env = TypeParam::Make(jobs);
  if (env == nullptr) GTEST_SKIP() << "cannot be given these histories";
  Timestamp end = kOrigin;
  for (const auto& h : jobs) end = std::max(end, h.End());
  for (Timestamp t = kOrigin; t < end; t += Seconds(30)) {
    TypeParam::AdvanceTo(*env, t);
    for (const auto& h : jobs) {
      // While each job runs (the driver forgets a run once it ends).
      if (t >= h.start && t < h.End()) this->CheckAt(TypeParam::View(*env), h, t);
    }
    if (::testing::Test::HasFailure()) return;  // one time's failures are enough to read
  }
}

// VisitByDue either declines (false, visiting nothing) or visits each job
// with a run whose answer is not kInfiniteFuture, once, in nondecreasing
// order of due, with due its NextBelowFor/NextAboveFor, and stops when the
// visitor says so.
TYPED_TEST_P(MetricsContractTest, VisitByDueVisitsInOrderOfDue) {
  const std::vector<JobHistory> jobs = ThreeJobs();
  auto env = TypeParam::Make(jobs);
  if (env == nullptr) GTEST_SKIP() << "cannot be given these histories";
  for (Timestamp t = kOrigin; t < kOrigin + Minutes(50); t += Minutes(1)) {
    TypeParam::AdvanceTo(*env, t);
    const model::MetricsView& v = TypeParam::View(*env);
    for (const Question& q : Questions()) {
      SCOPED_TRACE(StrCat(q.Describe(), " at ", At(t, kOrigin)));
      std::vector<std::pair<Timestamp, model::JobId>> visits;
      const bool kept = v.VisitByDue(q.below, q.threshold, q.span, t, [&](model::JobId j, Timestamp due) {
        visits.emplace_back(due, j);
        return true;
      });
      if (!kept) {
        EXPECT_TRUE(visits.empty()) << "declined, yet visited";
        continue;
      }
      for (size_t i = 1; i < visits.size(); ++i) {
        EXPECT_LE(visits[i - 1].first, visits[i].first) << "out of order at visit " << i;
      }
      std::vector<model::JobId> seen;
      for (const auto& [due, j] : visits) {
        const bool known = std::any_of(jobs.begin(), jobs.end(), [&, &j = j](const JobHistory& h) { return h.job == j; });
        EXPECT_TRUE(known) << "visited job " << j << ", of which it has no run";
        const Timestamp own = q.below ? v.NextBelowFor(j, q.threshold, q.span, t)
                                      : v.NextAboveFor(j, q.threshold, q.span, t);
        EXPECT_EQ(At(due, kOrigin), At(own, kOrigin)) << "job " << j;
        EXPECT_NE(due, kInfiniteFuture) << "job " << j << " is never due";
        EXPECT_EQ(std::count(seen.begin(), seen.end(), j), 0) << "job " << j << " twice";
        seen.push_back(j);
      }
      for (const auto& h : jobs) {
        const Timestamp own = q.below ? v.NextBelowFor(h.job, q.threshold, q.span, t)
                                      : v.NextAboveFor(h.job, q.threshold, q.span, t);
        if (own != kInfiniteFuture && t >= h.start && t < h.End()) {
          EXPECT_EQ(std::count(seen.begin(), seen.end(), h.job), 1) << "job " << h.job << " due "
                                                                    << At(own, kOrigin) << " not visited";
        }
      }
      // The visitor stops it.
      int calls = 0;
      (void)v.VisitByDue(q.below, q.threshold, q.span, t, [&](model::JobId, Timestamp) {
        ++calls;
        return false;
      });
      EXPECT_EQ(calls, visits.empty() ? 0 : 1);
    }
    if (::testing::Test::HasFailure()) return;
  }
}

REGISTER_TYPED_TEST_SUITE_P(MetricsContractTest, UnknownJobIsUnknownEverywhere, NoDataBeforeTheRunStarts,
                            AnswersAboutTheExampleHistory, AnswersFollowTheHistoryAsTimeMovesOn,
                            VisitByDueVisitsInOrderOfDue);

}  // namespace tide::contract

#endif  // TIDE_TESTS_CONTRACT_METRICS_CONTRACT_H_
