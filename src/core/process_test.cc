#include "core/process.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide {
namespace {

using ::testing::HasSubstr;

struct RunCase {
  std::string name;
  std::vector<std::string> argv;
  std::string input;
  int exit_code;
  std::string out;
  std::string err;
};

class RunTest : public ::testing::TestWithParam<RunCase> {};

TEST_P(RunTest, ExitStatusAndOutput) {
  const RunCase& c = GetParam();
  SystemCommandRunner runner;
  Result<CommandResult> r = runner.Run(c.argv, c.input, Seconds(30));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, c.exit_code);
  EXPECT_EQ(r->out, c.out);
  EXPECT_EQ(r->err, c.err);
}

// Larger than any pipe buffer both ways: only poll-driven I/O gets through.
const std::string kBig(1 << 20, 'x');

INSTANTIATE_TEST_SUITE_P(
    Commands, RunTest,
    ::testing::Values(RunCase{"true", {"true"}, "", 0, "", ""},
                      RunCase{"false", {"false"}, "", 1, "", ""},
                      RunCase{"echo", {"echo", "hello", "two words"}, "", 0, "hello two words\n", ""},
                      RunCase{"cat_with_input", {"cat"}, "line 1\nline 2\n", 0, "line 1\nline 2\n", ""},
                      RunCase{"cat_big_input", {"cat"}, kBig, 0, kBig, ""},
                      RunCase{"exit_3", {"sh", "-c", "exit 3"}, "", 3, "", ""},
                      RunCase{"stderr", {"sh", "-c", "echo oops >&2; exit 2"}, "", 2, "", "oops\n"},
                      // The child stops reading; we must not die of SIGPIPE.
                      RunCase{"ignores_input", {"true"}, kBig, 0, "", ""},
                      RunCase{"killed_by_signal", {"sh", "-c", "kill -9 $$"}, "", 128 + SIGKILL, "", ""}),
    [](const auto& info) { return info.param.name; });

// slurmscriptd hands its children a blocked SIGTERM; ours must not inherit it.
TEST(SystemCommandRunnerTest, ChildSignalMaskIsEmpty) {
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &old);
  SystemCommandRunner runner;
  Result<CommandResult> r = runner.Run({"sh", "-c", "kill -TERM $$; sleep 5"}, "", Seconds(30));
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 128 + SIGTERM);
}

TEST(SystemCommandRunnerTest, ExtraEnvironmentIsAddedAndOverrides) {
  SystemCommandRunner runner({"TIDE_TEST_A=one", "HOME=/nowhere"});
  Result<CommandResult> r = runner.Run({"sh", "-c", "echo \"$TIDE_TEST_A $HOME\"; test -n \"$PATH\""}, "", Seconds(30));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0);  // PATH is still inherited
  EXPECT_EQ(r->out, "one /nowhere\n");
}

TEST(SystemCommandRunnerTest, TimeoutKillsTheProcessGroupAndNamesTheCommand) {
  SystemCommandRunner runner;
  // The background sleep keeps stdout open: only a group kill ends it.
  Result<CommandResult> r = runner.Run({"sh", "-c", "sleep 30 & sleep 30"}, "", Seconds(1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(Message(r.status())), HasSubstr("sh -c 'sleep 30 & sleep 30'"));
  EXPECT_THAT(std::string(Message(r.status())), HasSubstr("did not finish within 1s"));
}

TEST(SystemCommandRunnerTest, MissingProgramIsUnavailableNotExit127) {
  SystemCommandRunner runner;
  Result<CommandResult> r = runner.Run({"tide-no-such-program-xyz", "arg"}, "", Seconds(30));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(Message(r.status())), HasSubstr("tide-no-such-program-xyz arg: cannot start"));
}

TEST(SystemCommandRunnerTest, BadArguments) {
  SystemCommandRunner runner;
  EXPECT_EQ(runner.Run({}, "", Seconds(1)).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(runner.Run({"true"}, "", Seconds(0)).status().code(), absl::StatusCode::kInvalidArgument);
}

// ---- processes that outlive tide ------------------------------------------

// Polls `done` every 20 ms; false after a generous bound. Tests never assert
// how long anything took.
bool Eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    const timespec pause{0, 20 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
  return done();
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class DetachedProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tide-process-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  // Every process a test started goes, by pid and start time, with its group.
  void TearDown() override {
    for (const auto& id : started_) {
      if (IsRunning(id)) {
        SignalProcessGroup(id.pid, SIGKILL);
        SignalProcess(id, SIGKILL);
      }
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  Result<DetachedProcess> Start(std::vector<std::string> argv, Duration delay = Seconds(0), std::string log = "") {
    DetachedOptions o;
    o.argv = std::move(argv);
    o.start_delay = delay;
    o.log_path = std::move(log);
    Result<DetachedProcess> p = DetachedProcess::Start(o);
    if (p.ok()) started_.push_back(p->id());
    return p;
  }

  std::string dir_;
  std::vector<ProcessId> started_;
};

TEST_F(DetachedProcessTest, RunsInItsOwnSessionAndGroupAndOutlivesTheHandle) {
  Result<DetachedProcess> p = Start({"sleep", "300"});
  ASSERT_TRUE(p.ok()) << p.status();
  const ProcessId id = p->id();
  EXPECT_GT(id.pid, 0);
  EXPECT_TRUE(IsRunning(id));
  const pid_t pid = static_cast<pid_t>(id.pid);
  EXPECT_EQ(getpgid(pid), pid);          // it leads its own group
  EXPECT_NE(getsid(pid), getsid(0));     // in another session
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);  // and is no child of ours
  EXPECT_EQ(errno, ECHILD);
  EXPECT_EQ(ReadProcStat(id.pid)->start_time, id.start_time);
  ASSERT_TRUE(p->Release().ok());
  EXPECT_EQ(p->Release().code(), absl::StatusCode::kFailedPrecondition);
  { DetachedProcess moved = std::move(*p); }  // the handle goes; the process stays
  ASSERT_TRUE(Eventually([&] { return std::filesystem::path(ProcessExecutable(id.pid)).filename() == "sleep"; }));
  EXPECT_TRUE(IsRunning(id));
}

TEST_F(DetachedProcessTest, WaitsForReleaseThenTheDelayBeforeTheExec) {
  Result<DetachedProcess> p = Start({"/bin/sleep", "300"}, Seconds(1));
  ASSERT_TRUE(p.ok()) << p.status();
  const ProcessId id = p->id();
  const std::string ours = ProcessExecutable(getpid());
  ASSERT_FALSE(ours.empty());
  EXPECT_EQ(ProcessExecutable(id.pid), ours);  // held: still our image
  ASSERT_TRUE(p->Release().ok());
  EXPECT_TRUE(Eventually([&] { return ProcessExecutable(id.pid) == "/bin/sleep" ||
                                      ProcessExecutable(id.pid) == "/usr/bin/sleep"; }));
  EXPECT_TRUE(IsRunning(id));  // the exec keeps the pid and the start time
}

TEST_F(DetachedProcessTest, AnUnreleasedProcessEndsWithoutRunningAnything) {
  const std::string marker = StrCat(dir_, "/ran");
  ProcessId id;
  {
    Result<DetachedProcess> p = Start({"/bin/sh", "-c", StrCat("touch ", marker)});
    ASSERT_TRUE(p.ok()) << p.status();
    id = p->id();
  }
  EXPECT_TRUE(Eventually([&] { return !IsRunning(id); }));
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(DetachedProcessTest, OutputGoesToTheLogAndTheSignalMaskIsEmpty) {
  // slurmscriptd hands its children a blocked SIGTERM; ours must not inherit
  // it, nor an ignored SIGINT.
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &old);
  struct sigaction ignore {}, old_int {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  const std::string log = StrCat(dir_, "/out.log");
  Result<DetachedProcess> p =
      Start({"/bin/sh", "-c", "grep -E '^Sig(Blk|Ign)' /proc/self/status; echo to-stderr >&2"}, Seconds(0), log);
  sigaction(SIGINT, &old_int, nullptr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(p.ok()) << p.status();
  const ProcessId id = p->id();
  ASSERT_TRUE(p->Release().ok());
  ASSERT_TRUE(Eventually([&] { return !IsRunning(id); }));
  const std::string text = ReadText(log);
  EXPECT_THAT(text, HasSubstr("SigBlk:\t0000000000000000\n"));
  EXPECT_THAT(text, HasSubstr("SigIgn:\t0000000000000000\n"));
  EXPECT_THAT(text, HasSubstr("to-stderr\n"));
}

TEST_F(DetachedProcessTest, GroupSignalReachesWhatItStarted) {
  Result<DetachedProcess> p = Start({"/bin/sh", "-c", "trap '' TERM; sleep 300"});
  ASSERT_TRUE(p.ok()) << p.status();
  const ProcessId id = p->id();
  ASSERT_TRUE(p->Release().ok());
  const std::string children = StrCat("/proc/", id.pid, "/task/", id.pid, "/children");
  int64_t child_pid = 0;
  ASSERT_TRUE(Eventually([&] {
    std::istringstream in(ReadText(children));
    return static_cast<bool>(in >> child_pid);
  }));
  const ProcessId child{child_pid, ReadProcStat(child_pid)->start_time};
  started_.push_back(child);
  EXPECT_TRUE(SignalProcess(id, SIGTERM));  // ignored by the shell
  EXPECT_FALSE(WaitUntilGone(id, Seconds(0)));
  EXPECT_TRUE(SignalProcessGroup(id.pid, SIGKILL));
  EXPECT_TRUE(WaitUntilGone(id, Seconds(30)));
  EXPECT_TRUE(WaitUntilGone(child, Seconds(30)));
  EXPECT_FALSE(SignalProcess(id, SIGKILL));  // gone: nothing is signalled
}

TEST_F(DetachedProcessTest, BadStarts) {
  EXPECT_EQ(Start({}).status().code(), absl::StatusCode::kInvalidArgument);
  Result<DetachedProcess> missing = Start({"/nonexistent/slurmd", "-D"});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(Message(missing.status())), HasSubstr("/nonexistent/slurmd is not an executable file"));
  EXPECT_EQ(Start({"tide-no-such-program-xyz"}).status().code(), absl::StatusCode::kNotFound);
  Result<DetachedProcess> no_log = Start({"true"}, Seconds(0), StrCat(dir_, "/no/such/dir/x.log"));
  EXPECT_EQ(no_log.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(Message(no_log.status())), HasSubstr("cannot open log"));
}

TEST(ProcTest, OwnStatAndAStrangerWithTheWrongStartTime) {
  std::optional<ProcStat> self = ReadProcStat(getpid());
  ASSERT_TRUE(self.has_value());
  EXPECT_GT(self->start_time, 0u);
  EXPECT_TRUE(IsRunning({getpid(), self->start_time}));
  EXPECT_FALSE(IsRunning({getpid(), self->start_time + 1}));  // a reused pid is not ours
  EXPECT_FALSE(SignalProcess({getpid(), self->start_time + 1}, SIGKILL));
  EXPECT_FALSE(ReadProcStat(0).has_value());
  EXPECT_FALSE(ReadProcStat(-5).has_value());
  EXPECT_FALSE(SignalProcessGroup(0, 0));  // never our own group, never every process
  EXPECT_FALSE(SignalProcessGroup(1, 0));
}

TEST(ProcTest, FindExecutable) {
  EXPECT_EQ(FindExecutable("/bin/sh"), "/bin/sh");
  EXPECT_THAT(FindExecutable("sh"), ::testing::EndsWith("/sh"));
  EXPECT_EQ(FindExecutable("/etc/passwd"), "");  // not executable
  EXPECT_EQ(FindExecutable("/tmp"), "");         // not a regular file
  EXPECT_EQ(FindExecutable("tide-no-such-program-xyz"), "");
  EXPECT_EQ(FindExecutable(""), "");
}

struct FormatCase {
  std::string name;
  std::vector<std::string> argv;
  std::string want;
};

class FormatArgvTest : public ::testing::TestWithParam<FormatCase> {};

TEST_P(FormatArgvTest, Formats) { EXPECT_EQ(FormatArgv(GetParam().argv), GetParam().want); }

INSTANTIATE_TEST_SUITE_P(
    Cases, FormatArgvTest,
    ::testing::Values(FormatCase{"plain", {"scontrol", "update", "nodename=gpu1"}, "scontrol update nodename=gpu1"},
                      FormatCase{"space", {"scontrol", "update", "reason=spot interruption"},
                                 "scontrol update 'reason=spot interruption'"},
                      FormatCase{"single_quote", {"echo", "it's"}, "echo 'it'\\''s'"},
                      FormatCase{"double_quote", {"echo", "say \"hi\""}, "echo 'say \"hi\"'"},
                      FormatCase{"empty_arg", {"echo", ""}, "echo ''"}, FormatCase{"empty", {}, ""}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace tide
