// The MetricsView contract (metrics_contract.h) over every implementation:
// the simulator's SimMetrics and the live controller's UtilHistory. A new
// view gets the whole suite by adding its traits to MetricsViews below.
//
// With TIDE_CONTRACT_SELFTEST defined (cmake -DTIDE_CONTRACT_SELFTEST=ON),
// deliberately broken views join the list: each must fail the tests named
// beside it, which shows the suite catches that fault.
#include <memory>
#include <optional>
#include <vector>

#include "contract/metrics_contract.h"
#include "gtest/gtest.h"
#include "metrics/util_history.h"
#include "sim/job_run.h"
#include "sim/sim_metrics.h"

namespace tide::contract {
namespace {

// SimMetrics over a RunMap of job runs. A history of at most three pieces
// is one JobRun: its load phase (startup at load_util), then its work at
// rate 1: training, then evaluation as the last share of the work. No
// checkpoints. More pieces than that are not a run the job model makes.
// Like the simulator, the map holds a job's run from its start until it
// ends.
struct SimMetricsTraits {
  static constexpr const char* kName = "SimMetrics";
  static constexpr bool kSeesAhead = true;

  struct Env {
    std::vector<JobHistory> jobs;
    std::vector<sim::JobRun> runs;  // by position in jobs
    sim::RunMap map;
    sim::SimMetrics metrics{&map};
  };

  static std::optional<sim::JobRun> RunOf(const JobHistory& h) {
    const auto& p = h.pieces;
    if (p.empty() || p.size() > 3) return std::nullopt;
    model::JobPhases phases;
    model::CheckpointPolicy no_checkpoints;
    no_checkpoints.interval = Seconds(0);
    Duration startup{0};
    size_t i = 0;
    if (p.size() >= 2) {  // the first piece is the load phase
      startup = p[0].length;
      phases.load = startup;
      phases.load_util = p[0].util;
      i = 1;
    }
    phases.train_util = p[i].util;
    const double train = static_cast<double>(p[i].length.count());
    const double eval = i + 1 < p.size() ? static_cast<double>(p[i + 1].length.count()) : 0;
    phases.eval_share = eval / (train + eval);
    phases.eval_util = i + 1 < p.size() ? p[i + 1].util : 0;
    return sim::JobRun(h.start, 0, train + eval, 1.0, startup, no_checkpoints, phases);
  }

  static std::unique_ptr<Env> Make(const std::vector<JobHistory>& jobs) {
    auto env = std::make_unique<Env>();
    env->jobs = jobs;
    for (const auto& h : jobs) {
      auto run = RunOf(h);
      if (!run) return nullptr;
      env->runs.push_back(*run);
    }
    return env;
  }
  static void AdvanceTo(Env& env, Timestamp now) {
    for (size_t i = 0; i < env.jobs.size(); ++i) {
      const JobHistory& h = env.jobs[i];
      const bool running = now >= h.start && now < h.End();
      const bool there = env.map.Find(h.job) != nullptr;
      if (running && !there) {
        env.map[h.job].segments = {env.runs[i]};
        env.metrics.RunChanged(h.job);
      } else if (!running && there) {
        env.map.erase(h.job);
        env.metrics.RunChanged(h.job);
      }
    }
  }
  static const model::MetricsView& View(const Env& env) { return env.metrics; }
};

// UtilHistory fed one sample every poll interval (10 s) from each job's
// start, at the utilization of the history then; a job is forgotten when
// its run ends, as the controller does.
struct UtilHistoryTraits {
  static constexpr const char* kName = "UtilHistory";
  static constexpr bool kSeesAhead = false;

  struct Env {
    std::vector<JobHistory> jobs;
    std::vector<Timestamp> next_sample;  // by position in jobs
    metrics::UtilHistory history;
  };
  static constexpr Duration kPoll = Seconds(10);

  static std::unique_ptr<Env> Make(const std::vector<JobHistory>& jobs) {
    auto env = std::make_unique<Env>();
    env->jobs = jobs;
    for (const auto& h : jobs) env->next_sample.push_back(h.start);
    metrics::UtilHistoryOptions o;
    o.poll_interval = kPoll;
    env->history = metrics::UtilHistory(o);
    return env;
  }
  static void AdvanceTo(Env& env, Timestamp now) {
    for (size_t i = 0; i < env.jobs.size(); ++i) {
      const JobHistory& h = env.jobs[i];
      Timestamp& next = env.next_sample[i];
      for (; next <= now && next < h.End(); next += kPoll) env.history.Record(h.job, *h.UtilAt(next), next);
      if (now >= h.End()) env.history.Forget(h.job);
    }
  }
  static const model::MetricsView& View(const Env& env) { return env.history; }
};

#ifdef TIDE_CONTRACT_SELFTEST
// Broken views: a wrapper over a real one that gets one thing wrong.
class ForwardingView : public model::MetricsView {
 public:
  const model::MetricsView* inner = nullptr;
  std::optional<double> UtilAt(model::JobId j, Timestamp t) const override { return inner->UtilAt(j, t); }
  std::optional<Timestamp> BelowSince(model::JobId j, double x, Timestamp t) const override {
    return inner->BelowSince(j, x, t);
  }
  std::optional<Timestamp> AboveSince(model::JobId j, double x, Timestamp t) const override {
    return inner->AboveSince(j, x, t);
  }
  Timestamp NextUtilChange(model::JobId j, Timestamp t) const override { return inner->NextUtilChange(j, t); }
  Timestamp NextBelowFor(model::JobId j, double x, Duration span, Timestamp t) const override {
    return inner->NextBelowFor(j, x, span, t);
  }
  Timestamp NextAboveFor(model::JobId j, double x, Duration span, Timestamp t) const override {
    return inner->NextAboveFor(j, x, span, t);
  }
  bool VisitByDue(bool below, double x, Duration span, Timestamp t,
                  const std::function<bool(model::JobId, Timestamp)>& visit) const override {
    return inner->VisitByDue(below, x, span, t, visit);
  }
};

// Reads missing data as idle: 0 for a job it knows nothing of, idle since now.
class ZeroForUnknown final : public ForwardingView {
 public:
  std::optional<double> UtilAt(model::JobId j, Timestamp t) const override {
    return inner->UtilAt(j, t).value_or(0.0);
  }
  std::optional<Timestamp> BelowSince(model::JobId j, double x, Timestamp t) const override {
    if (!inner->UtilAt(j, t)) return t;
    return inner->BelowSince(j, x, t);
  }
  Timestamp NextBelowFor(model::JobId j, double x, Duration span, Timestamp t) const override {
    if (!inner->UtilAt(j, t)) return t;
    return inner->NextBelowFor(j, x, span, t);
  }
};

// Says a run starts now: BelowSince/AboveSince answer `t` whenever it holds.
class RunStartsNow final : public ForwardingView {
 public:
  std::optional<Timestamp> BelowSince(model::JobId j, double x, Timestamp t) const override {
    return inner->BelowSince(j, x, t) ? std::optional<Timestamp>(t) : std::nullopt;
  }
  std::optional<Timestamp> AboveSince(model::JobId j, double x, Timestamp t) const override {
    return inner->AboveSince(j, x, t) ? std::optional<Timestamp>(t) : std::nullopt;
  }
};

// Keeps the jobs in order of due, and visits them latest first.
class VisitsBackwards final : public ForwardingView {
 public:
  bool VisitByDue(bool below, double x, Duration span, Timestamp t,
                  const std::function<bool(model::JobId, Timestamp)>& visit) const override {
    std::vector<std::pair<model::JobId, Timestamp>> all;
    if (!inner->VisitByDue(below, x, span, t, [&](model::JobId j, Timestamp due) {
          all.emplace_back(j, due);
          return true;
        })) {
      return false;
    }
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      if (!visit(it->first, it->second)) break;
    }
    return true;
  }
};

// `Base`'s view behind a `Wrapper`.
template <typename Base, typename Wrapper, const char* name>
struct BrokenTraits {
  static constexpr const char* kName = name;
  static constexpr bool kSeesAhead = Base::kSeesAhead;
  struct Env {
    std::unique_ptr<typename Base::Env> base;
    Wrapper view;
  };
  static std::unique_ptr<Env> Make(const std::vector<JobHistory>& jobs) {
    auto base = Base::Make(jobs);
    if (base == nullptr) return nullptr;
    auto env = std::make_unique<Env>();
    env->base = std::move(base);
    env->view.inner = &Base::View(*env->base);
    return env;
  }
  static void AdvanceTo(Env& env, Timestamp now) { Base::AdvanceTo(*env.base, now); }
  static const model::MetricsView& View(const Env& env) { return env.view; }
};

constexpr char kZeroForUnknown[] = "BrokenZeroForUnknown";
constexpr char kRunStartsNow[] = "BrokenRunStartsNow";
constexpr char kVisitsBackwards[] = "BrokenVisitsBackwards";
#endif  // TIDE_CONTRACT_SELFTEST

using MetricsViews = ::testing::Types<SimMetricsTraits, UtilHistoryTraits
#ifdef TIDE_CONTRACT_SELFTEST
                                      ,
                                      BrokenTraits<UtilHistoryTraits, ZeroForUnknown, kZeroForUnknown>,
                                      BrokenTraits<SimMetricsTraits, RunStartsNow, kRunStartsNow>,
                                      BrokenTraits<SimMetricsTraits, VisitsBackwards, kVisitsBackwards>
#endif
                                      >;

struct TraitsName {
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};

INSTANTIATE_TYPED_TEST_SUITE_P(Views, MetricsContractTest, MetricsViews, TraitsName);

}  // namespace
}  // namespace tide::contract
