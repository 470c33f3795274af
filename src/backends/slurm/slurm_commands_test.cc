#include <deque>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "backends/slurm/slurm.h"
#include "core/process.h"
#include "testutil/fake_runner.h"
#include "core/status.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "backends/slurm/fixture_test.h"

namespace tide::backends {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::string Msg(const Status& s) { return std::string(Message(s)); }

using testing::Fixture;

using testing::FakeRunner;

// ---- Actions

struct ActionCase {
  std::string name;
  std::function<Status(SlurmCommands&)> act;
  std::vector<std::string> argv;
  std::string target;  // how the failure message names the node or job
};

std::vector<ActionCase> ActionCases() {
  return {
      {"Drain",
       [](SlurmCommands& b) { return b.Drain("gpu3", "tide: scale-down idle 10m"); },
       {"scontrol", "update", "nodename=gpu3", "state=DRAIN", "reason=tide: scale-down idle 10m"},
       "nodename=gpu3"},
      {"Undrain",
       [](SlurmCommands& b) { return b.Undrain("gpu3"); },
       {"scontrol", "update", "nodename=gpu3", "state=UNDRAIN"},
       "nodename=gpu3 state=UNDRAIN"},
      {"PowerUp",
       [](SlurmCommands& b) { return b.PowerUp("gpu[2-3]"); },
       {"scontrol", "update", "nodename=gpu[2-3]", "state=POWER_UP"},
       "nodename=gpu[2-3] state=POWER_UP"},
      {"PowerDown",
       [](SlurmCommands& b) { return b.PowerDown("gpu4"); },
       {"scontrol", "update", "nodename=gpu4", "state=POWER_DOWN"},
       "nodename=gpu4 state=POWER_DOWN"},
      {"PowerDownForce",
       [](SlurmCommands& b) { return b.PowerDown("gpu4", /*force=*/true); },
       {"scontrol", "update", "nodename=gpu4", "state=POWER_DOWN_FORCE"},
       "nodename=gpu4 state=POWER_DOWN_FORCE"},
      {"Requeue",
       [](SlurmCommands& b) { return b.Requeue(1234); },
       {"scontrol", "requeue", "1234"},
       "scontrol requeue 1234"},
      {"Cancel", [](SlurmCommands& b) { return b.Cancel(1234); }, {"scancel", "1234"}, "scancel 1234"},
      {"Signal",
       [](SlurmCommands& b) { return b.Signal(1234, "USR1"); },
       {"scancel", "--batch", "--signal=USR1", "1234"},
       "scancel --batch --signal=USR1 1234"},
  };
}

class SlurmActionTest : public ::testing::TestWithParam<ActionCase> {};

TEST_P(SlurmActionTest, RunsOneCommand) {
  FakeRunner runner;
  SlurmOptions options;
  options.timeout = Seconds(7);
  SlurmCommands backend(options, &runner);
  const Status s = GetParam().act(backend);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_EQ(runner.calls[0].argv, GetParam().argv);
  EXPECT_EQ(runner.calls[0].input, "");
  EXPECT_EQ(runner.calls[0].timeout, Seconds(7));
}

TEST_P(SlurmActionTest, NonZeroExitIsUnavailableWithStderr) {
  FakeRunner runner;
  runner.Reply(1, "", "  scontrol: error: Invalid node name specified\n\n");
  SlurmCommands backend(SlurmOptions{}, &runner);
  const Status s = GetParam().act(backend);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  EXPECT_THAT(Msg(s), HasSubstr(GetParam().argv[0]));
  EXPECT_THAT(Msg(s), HasSubstr(GetParam().target));
  EXPECT_THAT(Msg(s), HasSubstr("exit status 1: scontrol: error: Invalid node name specified"));
  EXPECT_THAT(Msg(s), Not(HasSubstr("specified\n")));
}

// A command that could not run is Unavailable; one cut by its timeout may
// or may not have acted, and stays DeadlineExceeded. Either names the
// command's target.
TEST_P(SlurmActionTest, RunnerErrorsKeepTheirCodeAndNameTheTarget) {
  for (const Status& e : {absl::UnavailableError("cannot start: No such file or directory"),
                          absl::DeadlineExceededError("timed out after 30s")}) {
    FakeRunner runner;
    runner.Fail(e);
    SlurmCommands backend(SlurmOptions{}, &runner);
    const Status s = GetParam().act(backend);
    EXPECT_EQ(s.code(), e.code()) << s;
    EXPECT_THAT(Msg(s), HasSubstr(std::string(Message(e))));
    EXPECT_THAT(Msg(s), HasSubstr(GetParam().target));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, SlurmActionTest, ::testing::ValuesIn(ActionCases()),
                         [](const auto& info) { return info.param.name; });

TEST(SlurmCommandsTest, ConfiguredToolPaths) {
  FakeRunner runner;
  SlurmOptions options;
  options.scontrol = "/opt/slurm/bin/scontrol";
  options.scancel = "/opt/slurm/bin/scancel";
  SlurmCommands backend(options, &runner);
  ASSERT_TRUE(backend.Undrain("gpu1").ok());
  ASSERT_TRUE(backend.Cancel(5).ok());
  EXPECT_THAT(runner.Argvs(),
              ElementsAre(ElementsAre("/opt/slurm/bin/scontrol", "update", "nodename=gpu1", "state=UNDRAIN"),
                          ElementsAre("/opt/slurm/bin/scancel", "5")));
}

TEST(SlurmCommandsTest, RunnerErrorNamingTheCommandIsNotPrefixedTwice) {
  FakeRunner runner;
  runner.Fail(absl::UnavailableError("scancel 5: cannot start: No such file or directory"));
  SlurmCommands backend(SlurmOptions{}, &runner);
  const Status s = backend.Cancel(5);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(Msg(s), "scancel 5: cannot start: No such file or directory");
}

TEST(SlurmCommandsTest, StderrFallsBackToStdout) {
  FakeRunner runner;
  runner.Reply(2, "scancel: error: Kill job error on job id 5: Invalid job id specified\n", "");
  SlurmCommands backend(SlurmOptions{}, &runner);
  const Status s = backend.Cancel(5);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(Msg(s), HasSubstr("exit status 2: scancel: error: Kill job error on job id 5"));
}

struct BadInputCase {
  std::string name;
  std::function<Status(SlurmCommands&)> act;
  std::string want;
};

class SlurmBadInputTest : public ::testing::TestWithParam<BadInputCase> {};

TEST_P(SlurmBadInputTest, RefusedWithoutRunning) {
  FakeRunner runner;
  SlurmCommands backend(SlurmOptions{}, &runner);
  const Status s = GetParam().act(backend);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(Msg(s), HasSubstr(GetParam().want));
  EXPECT_THAT(runner.calls, IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SlurmBadInputTest,
    ::testing::Values(
        BadInputCase{"DrainNoNode", [](SlurmCommands& b) { return b.Drain("", "r"); }, "empty node name"},
        BadInputCase{"DrainNoReason", [](SlurmCommands& b) { return b.Drain("gpu1", " "); }, "drain gpu1"},
        BadInputCase{"NodeWithBlank", [](SlurmCommands& b) { return b.Undrain("gpu1 state=down"); },
                     "gpu1 state=down"},
        BadInputCase{"NodeWithEquals", [](SlurmCommands& b) { return b.PowerUp("gpu1=x"); }, "gpu1=x"},
        BadInputCase{"PowerDownNoNode", [](SlurmCommands& b) { return b.PowerDown(""); }, "power down"},
        BadInputCase{"RequeueZero", [](SlurmCommands& b) { return b.Requeue(0); }, "bad job id 0"},
        BadInputCase{"CancelNegative", [](SlurmCommands& b) { return b.Cancel(-3); }, "bad job id -3"},
        BadInputCase{"SignalEmpty", [](SlurmCommands& b) { return b.Signal(5, ""); }, "signal job 5"},
        BadInputCase{"SignalWithBlank", [](SlurmCommands& b) { return b.Signal(5, "USR1 9"); }, "USR1 9"}),
    [](const auto& info) { return info.param.name; });

// ---- Observe

TEST(SlurmObserveTest, RunsSqueueThenSinfo) {
  FakeRunner runner;
  runner.Reply(0, Fixture("squeue_lab.json"));
  runner.Reply(0, Fixture("sinfo_lab.json"));
  SlurmOptions options;
  options.timeout = Seconds(12);
  SlurmCommands backend(options, &runner);
  auto obs = backend.Query();
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_THAT(runner.Argvs(), ElementsAre(ElementsAre("squeue", "--json"), ElementsAre("sinfo", "--json")));
  for (const auto& c : runner.calls) EXPECT_EQ(c.timeout, Seconds(12));
  EXPECT_EQ(obs->jobs.size(), 4u);
  ASSERT_EQ(obs->nodes.size(), 4u);
  EXPECT_EQ(obs->jobs[0].id, 1);
  EXPECT_EQ(obs->nodes[0].name, "gpu1");
}

TEST(SlurmObserveTest, PartitionsFilterJobsAndNodes) {
  FakeRunner runner;
  runner.Reply(0, Fixture("squeue_lab.json"));
  runner.Reply(0, Fixture("sinfo_per_partition.json"));
  SlurmOptions options;
  options.squeue = "/usr/bin/squeue";
  options.sinfo = "/usr/bin/sinfo";
  options.partitions = {"high", "gpu"};
  SlurmCommands backend(options, &runner);
  auto obs = backend.Query();
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_THAT(runner.Argvs(), ElementsAre(ElementsAre("/usr/bin/squeue", "--json", "--partition=high,gpu"),
                                          ElementsAre("/usr/bin/sinfo", "--json")));
  // Job 2 is in high, job 4 in low,high; jobs 1 and 3 only in low.
  std::vector<int64_t> jobs;
  for (const auto& j : obs->jobs) jobs.push_back(j.id);
  EXPECT_THAT(jobs, ElementsAre(2, 4));
  // gpu3 is only in low; gpu1 is listed in low and in high.
  std::vector<std::string> nodes;
  for (const auto& n : obs->nodes) nodes.push_back(n.name);
  EXPECT_THAT(nodes, ElementsAre("gpu1", "gpu2", "gpu4"));
}

struct ObserveErrorCase {
  std::string name;
  std::function<void(FakeRunner&)> script;
  absl::StatusCode code;
  std::vector<std::string> want;  // each in the message
  size_t calls;                   // commands run before it gave up
};

class SlurmObserveErrorTest : public ::testing::TestWithParam<ObserveErrorCase> {};

TEST_P(SlurmObserveErrorTest, Fails) {
  const auto& c = GetParam();
  FakeRunner runner;
  c.script(runner);
  SlurmCommands backend(SlurmOptions{}, &runner);
  auto obs = backend.Query();
  ASSERT_FALSE(obs.ok());
  EXPECT_EQ(obs.status().code(), c.code) << obs.status();
  for (const auto& w : c.want) EXPECT_THAT(Msg(obs.status()), HasSubstr(w));
  EXPECT_EQ(runner.calls.size(), c.calls);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SlurmObserveErrorTest,
    ::testing::Values(
        ObserveErrorCase{"SqueueGarbage",
                         [](FakeRunner& r) { r.Reply(0, "JOBID PARTITION NAME\n"); },
                         absl::StatusCode::kInvalidArgument,
                         {"squeue --json: ", "not valid JSON"},
                         1},
        ObserveErrorCase{"SqueueBadField",
                         [](FakeRunner& r) { r.Reply(0, R"({"jobs": [{"job_id": 3, "job_state": 7}]})"); },
                         absl::StatusCode::kInvalidArgument,
                         {"squeue --json: ", "job 3", "job_state"},
                         1},
        ObserveErrorCase{"SinfoGarbage",
                         [](FakeRunner& r) {
                           r.Reply(0, Fixture("squeue_empty.json"));
                           r.Reply(0, "{\"nodes\": [");
                         },
                         absl::StatusCode::kInvalidArgument,
                         {"sinfo --json: ", "not valid JSON"},
                         2},
        ObserveErrorCase{"SinfoBadField",
                         [](FakeRunner& r) {
                           r.Reply(0, Fixture("squeue_empty.json"));
                           r.Reply(0, R"({"nodes": [{"name": "gpu1", "state": "idle", "gres": 8}]})");
                         },
                         absl::StatusCode::kInvalidArgument,
                         {"sinfo --json: ", "node gpu1", "gres"},
                         2},
        ObserveErrorCase{
            "SqueueExitsNonZero",
            [](FakeRunner& r) {
              r.Reply(1, "", "slurm_load_jobs error: Unable to contact slurm controller\n");
            },
            absl::StatusCode::kUnavailable,
            {"squeue --json", "exit status 1: slurm_load_jobs error: Unable to contact slurm controller"},
            1},
        ObserveErrorCase{"SinfoExitsNonZero",
                         [](FakeRunner& r) {
                           r.Reply(0, Fixture("squeue_empty.json"));
                           r.Reply(1, "", "slurm_load_node error: Socket timed out\n");
                         },
                         absl::StatusCode::kUnavailable,
                         {"sinfo --json", "Socket timed out"},
                         2},
        ObserveErrorCase{
            "SqueueDoesNotStart",
            [](FakeRunner& r) { r.Fail(absl::UnavailableError("cannot run squeue: No such file")); },
            absl::StatusCode::kUnavailable,
            {"squeue --json", "No such file"},
            1},
        ObserveErrorCase{"SinfoTimesOut",
                         [](FakeRunner& r) {
                           r.Reply(0, Fixture("squeue_empty.json"));
                           r.Fail(absl::DeadlineExceededError("killed after 30s"));
                         },
                         absl::StatusCode::kDeadlineExceeded,
                         {"sinfo --json", "killed after 30s"},
                         2},
        // Recorded replies cut short (a pipe closed early, a full disk on
        // slurmctld's side): never read as fewer jobs or nodes.
        ObserveErrorCase{"SqueueCutShort",
                         [](FakeRunner& r) {
                           const std::string full = Fixture("squeue_lab.json");
                           r.Reply(0, full.substr(0, full.size() / 2));
                         },
                         absl::StatusCode::kInvalidArgument,
                         {"squeue --json: ", "not valid JSON"},
                         1},
        ObserveErrorCase{"SinfoCutShort",
                         [](FakeRunner& r) {
                           r.Reply(0, Fixture("squeue_lab.json"));
                           const std::string full = Fixture("sinfo_lab.json");
                           r.Reply(0, full.substr(0, full.size() - 3));
                         },
                         absl::StatusCode::kInvalidArgument,
                         {"sinfo --json: ", "not valid JSON"},
                         2},
        ObserveErrorCase{"SqueueReportsErrors",
                         [](FakeRunner& r) {
                           r.Reply(0, R"({"errors": [{"error": "Zero Bytes were transmitted", "errno": 5}],
                                          "jobs": []})");
                         },
                         absl::StatusCode::kUnavailable,
                         {"squeue --json", "Zero Bytes were transmitted"},
                         1}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tide::backends
