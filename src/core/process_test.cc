#include "core/process.h"

#include <signal.h>

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
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
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
