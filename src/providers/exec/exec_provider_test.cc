#include "providers/exec/exec_provider.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/process.h"
#include "testutil/fake_runner.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tide::providers {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using json = nlohmann::json;

constexpr Timestamp kNow = FromUnixSeconds(1767571200);

std::string Msg(const Status& s) { return std::string(Message(s)); }

using testing::FakeRunner;

ExecProvider::Options Commands() {
  ExecProvider::Options o;
  o.create = {"cloud-create", "--profile", "lab one"};
  o.delete_ = {"cloud-delete"};
  o.list = {"cloud-list"};
  o.interruptions = {"cloud-notices"};
  o.timeout = Seconds(45);
  return o;
}

CreateRequest Request() {
  CreateRequest r;
  r.pool = "spot-a100";
  r.node = "gpu7";
  r.instance_type = "p4d.24xlarge";
  r.tier = model::Tier::kSpot;
  r.region = "us-east-1";
  r.idempotency_key = "create-gpu7-1767571200-1";
  return r;
}

TEST(ExecProviderTest, CreateSendsTheRequestAndReadsTheInstance) {
  FakeRunner runner;
  runner.Reply(0, R"({"id":"i-0abc","node":"gpu7","state":"pending","created":1767571201})");
  ExecProvider p(Commands(), &runner);
  Result<Instance> i = p.Create(Request(), kNow);
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(i->id, "i-0abc");
  EXPECT_EQ(i->node, "gpu7");
  EXPECT_EQ(i->state, "pending");
  EXPECT_EQ(i->pool, "spot-a100");                          // from the request
  EXPECT_EQ(i->idempotency_key, "create-gpu7-1767571200-1");  // from the request
  EXPECT_EQ(i->created, FromUnixSeconds(1767571201));

  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_THAT(runner.calls[0].argv, ElementsAre("cloud-create", "--profile", "lab one"));
  EXPECT_EQ(runner.calls[0].timeout, Seconds(45));
  const json sent = json::parse(runner.calls[0].input);
  EXPECT_EQ(sent, json::parse(R"({"pool":"spot-a100","node":"gpu7","instance_type":"p4d.24xlarge",
      "tier":"spot","region":"us-east-1","idempotency_key":"create-gpu7-1767571200-1"})"));
}

TEST(ExecProviderTest, CreateWithoutCreatedLeavesItUnknown) {
  FakeRunner runner;
  runner.Reply(0, R"({"id":"i-1","node":"gpu7","pool":"p","idempotency_key":"create-gpu7-1767571200-1",
                      "state":"running"})");
  ExecProvider p(Commands(), &runner);
  Result<Instance> i = p.Create(Request(), kNow);
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(i->pool, "p");
  EXPECT_EQ(i->created, Timestamp{});
}

TEST(ExecProviderTest, DeleteSendsIdAndKey) {
  FakeRunner runner;
  runner.Reply(0, "whatever it prints\n");
  ExecProvider p(Commands(), &runner);
  ASSERT_TRUE(p.Delete("i-0abc", "delete-i-0abc", kNow).ok());
  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_THAT(runner.calls[0].argv, ElementsAre("cloud-delete"));
  EXPECT_EQ(json::parse(runner.calls[0].input), json::parse(R"({"id":"i-0abc","idempotency_key":"delete-i-0abc"})"));
}

TEST(ExecProviderTest, ListReadsEveryInstance) {
  FakeRunner runner;
  runner.Reply(0, R"({"instances":[
      {"id":"i-1","node":"gpu1","pool":"a","idempotency_key":"k1","state":"running","created":1767571000},
      {"id":"i-2","node":"gpu2","state":"terminating"}]})");
  ExecProvider p(Commands(), &runner);
  Result<std::vector<Instance>> list = p.List(kNow);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].id, "i-1");
  EXPECT_EQ((*list)[0].pool, "a");
  EXPECT_EQ((*list)[0].idempotency_key, "k1");
  EXPECT_EQ((*list)[0].created, FromUnixSeconds(1767571000));
  EXPECT_EQ((*list)[1].state, "terminating");
  EXPECT_EQ(json::parse(runner.calls[0].input), json::object());
}

TEST(ExecProviderTest, EmptyListIsOnlyAnExplicitEmptyArray) {
  FakeRunner runner;
  runner.Reply(0, R"({"instances":[]})");
  ExecProvider p(Commands(), &runner);
  Result<std::vector<Instance>> list = p.List(kNow);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(*list, IsEmpty());
}

// Found by fuzzing: a bad reply's fields were quoted raw, control bytes and all.
TEST(ExecProviderTest, ABadReplyIsQuotedEscaped) {
  FakeRunner runner;
  runner.Reply(0, "{\"instances\":[{\"id\":\"i-1\",\"node\":\"gpu1\",\"state\":\"ru\\u001bnning\"}]}");
  ExecProvider p(Commands(), &runner);
  auto list = p.List(kNow);
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(std::string(Message(list.status())),
              HasSubstr("reply field \"instances[0].state\" is \"ru\\x1bnning\"; want pending, running or terminating"));
  runner.Reply(0, "\x02&");
  list = p.List(kNow);
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(std::string(Message(list.status())), HasSubstr("reply is not JSON: \\x02&"));
}

TEST(ExecProviderTest, InterruptionsKeepNoticesNotYetPast) {
  FakeRunner runner;
  runner.Reply(0, R"({"interruptions":[{"id":"i-1","node":"gpu1","at":1767571320},
                                      {"id":"i-2","node":"gpu2","at":1767571100}]})");
  ExecProvider p(Commands(), &runner);
  Result<std::vector<Interruption>> notes = p.Interruptions(kNow);
  ASSERT_TRUE(notes.ok()) << notes.status();
  ASSERT_EQ(notes->size(), 1u);
  EXPECT_EQ((*notes)[0].instance_id, "i-1");
  EXPECT_EQ((*notes)[0].node, "gpu1");
  EXPECT_EQ((*notes)[0].at, FromUnixSeconds(1767571320));
}

TEST(ExecProviderTest, NoInterruptionCommandMeansNoFeed) {
  FakeRunner runner;
  ExecProvider::Options o = Commands();
  o.interruptions.clear();
  ExecProvider p(o, &runner);
  Result<std::vector<Interruption>> notes = p.Interruptions(kNow);
  ASSERT_TRUE(notes.ok()) << notes.status();
  EXPECT_THAT(*notes, IsEmpty());
  EXPECT_THAT(runner.calls, IsEmpty());
}

TEST(ExecProviderTest, MissingRequiredCommandIsInvalidArgument) {
  FakeRunner runner;
  ExecProvider p(ExecProvider::Options{}, &runner);
  EXPECT_EQ(p.Create(Request(), kNow).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.Delete("i-1", "k", kNow).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.List(kNow).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(runner.calls, IsEmpty());
}

// Every way a command can fail must be Unavailable and say which command and
// what: never an empty list, never a half-read instance.
struct FailCase {
  std::string name;
  std::string call;  // "create", "delete", "list", "interruptions"
  Result<CommandResult> reply;
  std::vector<std::string> want_in_message;
};

class ExecFailureTest : public ::testing::TestWithParam<FailCase> {};

TEST_P(ExecFailureTest, IsUnavailableNamingCommandAndCause) {
  const FailCase& c = GetParam();
  FakeRunner runner;
  runner.replies.push_back(c.reply);
  ExecProvider p(Commands(), &runner);
  Status s;
  if (c.call == "create") s = p.Create(Request(), kNow).status();
  if (c.call == "delete") s = p.Delete("i-1", "k", kNow);
  if (c.call == "list") s = p.List(kNow).status();
  if (c.call == "interruptions") s = p.Interruptions(kNow).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << s;
  for (const auto& part : c.want_in_message) EXPECT_THAT(Msg(s), HasSubstr(part));
}

CommandResult Out(std::string out) { return CommandResult{0, std::move(out), ""}; }

INSTANTIATE_TEST_SUITE_P(
    Replies, ExecFailureTest,
    ::testing::Values(
        FailCase{"nonzero_exit", "create", CommandResult{2, "", "  InsufficientInstanceCapacity\n"},
                 {"cloud-create --profile 'lab one': exit status 2: InsufficientInstanceCapacity"}},
        FailCase{"nonzero_exit_stdout_detail", "delete", CommandResult{1, "denied\n", ""},
                 {"cloud-delete: exit status 1: denied"}},
        FailCase{"runner_failed", "list", Result<CommandResult>(absl::UnavailableError("did not finish within 1m")),
                 {"cloud-list: did not finish within 1m"}},
        FailCase{"not_json", "list", Out("Traceback (most recent call last):\n"),
                 {"cloud-list: reply is not JSON: Traceback"}},
        FailCase{"empty_output", "list", Out(""), {"cloud-list: reply is not JSON: (empty output)"}},
        FailCase{"not_object", "list", Out("[]"), {"cloud-list: reply is not a JSON object"}},
        FailCase{"instances_missing", "list", Out("{}"), {"cloud-list", "\"instances\" is missing"}},
        FailCase{"instances_not_array", "list", Out(R"({"instances":{}})"), {"\"instances\" is not an array"}},
        FailCase{"instance_not_object", "list", Out(R"({"instances":[3]})"), {"\"instances[0]\" is not an object"}},
        FailCase{"instance_without_id", "list", Out(R"({"instances":[{"node":"gpu1","state":"running"}]})"),
                 {"\"instances[0].id\" is missing"}},
        FailCase{"instance_empty_node", "list",
                 Out(R"({"instances":[{"id":"i-1","node":"gpu1","state":"running"},
                                      {"id":"i-2","node":"","state":"running"}]})"),
                 {"\"instances[1].node\" is empty"}},
        FailCase{"instance_bad_state", "list", Out(R"({"instances":[{"id":"i-1","node":"gpu1","state":"stopped"}]})"),
                 {"\"instances[0].state\" is \"stopped\""}},
        FailCase{"instance_created_as_text", "list",
                 Out(R"({"instances":[{"id":"i-1","node":"g","state":"running","created":"2026-01-05"}]})"),
                 {"\"instances[0].created\" is not integer Unix seconds"}},
        FailCase{"instance_id_not_string", "list", Out(R"({"instances":[{"id":7,"node":"g","state":"running"}]})"),
                 {"\"instances[0].id\" is not a string"}},
        FailCase{"duplicate_id", "list",
                 Out(R"({"instances":[{"id":"i-1","node":"a","state":"running"},
                                      {"id":"i-1","node":"b","state":"running"}]})"),
                 {"\"instances[1].id\" repeats \"i-1\""}},
        FailCase{"create_other_node", "create", Out(R"({"id":"i-1","node":"gpu8","state":"pending"})"),
                 {"cloud-create --profile 'lab one': reply field \"node\" is \"gpu8\"; asked for node \"gpu7\""}},
        FailCase{"create_other_key", "create",
                 Out(R"({"id":"i-1","node":"gpu7","state":"pending","idempotency_key":"other"})"),
                 {"\"idempotency_key\" is \"other\""}},
        FailCase{"create_no_state", "create", Out(R"({"id":"i-1","node":"gpu7"})"), {"\"state\" is missing"}},
        FailCase{"interruptions_missing", "interruptions", Out(R"({"instances":[]})"),
                 {"cloud-notices", "\"interruptions\" is missing"}},
        FailCase{"interruption_without_at", "interruptions", Out(R"({"interruptions":[{"id":"i-1","node":"g"}]})"),
                 {"\"interruptions[0].at\" is missing"}}),
    [](const auto& info) { return info.param.name; });

// ---- real commands through SystemCommandRunner ---------------------------

class ExecScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tide-exec-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Writes an executable /bin/sh script and returns its path.
  std::string Script(const std::string& name, const std::string& body) {
    const std::string path = StrCat(dir_, "/", name);
    std::ofstream(path) << "#!/bin/sh\n" << body;
    chmod(path.c_str(), 0755);
    return path;
  }

  std::string ReadBack(const std::string& name) {
    std::ifstream in(StrCat(dir_, "/", name));
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string dir_;
  SystemCommandRunner runner_;
};

TEST_F(ExecScriptTest, ScriptsDriveAFullCycle) {
  ExecProvider::Options o;
  // The create script keeps its input so the test can see what tide sent.
  o.create = {Script("create.sh", StrCat("cat > '", dir_, "/create.in'\n",
                                         "echo '{\"id\":\"vm-1\",\"node\":\"gpu7\",\"state\":\"pending\"}'\n"))};
  o.delete_ = {Script("delete.sh", StrCat("cat > '", dir_, "/delete.in'\n"))};
  o.list = {Script("list.sh", "echo '{\"instances\":[{\"id\":\"vm-1\",\"node\":\"gpu7\",\"state\":\"running\"}]}'\n")};
  o.interruptions = {Script("notices.sh", "echo '{\"interruptions\":[{\"id\":\"vm-1\",\"node\":\"gpu7\","
                                          "\"at\":1767571320}]}'\n")};
  o.timeout = Seconds(30);
  ExecProvider p(o, &runner_);

  Result<Instance> made = p.Create(Request(), kNow);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->id, "vm-1");
  EXPECT_EQ(json::parse(ReadBack("create.in"))["idempotency_key"], "create-gpu7-1767571200-1");

  Result<std::vector<Instance>> list = p.List(kNow);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].state, "running");

  Result<std::vector<Interruption>> notes = p.Interruptions(kNow);
  ASSERT_TRUE(notes.ok()) << notes.status();
  ASSERT_EQ(notes->size(), 1u);
  EXPECT_EQ((*notes)[0].at, FromUnixSeconds(1767571320));

  ASSERT_TRUE(p.Delete("vm-1", "delete-vm-1", kNow).ok());
  EXPECT_EQ(json::parse(ReadBack("delete.in"))["id"], "vm-1");
}

TEST_F(ExecScriptTest, FailingScriptReportsItsStderr) {
  ExecProvider::Options o;
  o.list = {Script("list.sh", "echo 'An error occurred (UnauthorizedOperation)' >&2\nexit 254\n"), "--region",
            "eu west"};
  ExecProvider p(o, &runner_);
  Result<std::vector<Instance>> list = p.List(kNow);
  ASSERT_EQ(list.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(Msg(list.status()), HasSubstr(StrCat(dir_, "/list.sh --region 'eu west': exit status 254: ",
                                                   "An error occurred (UnauthorizedOperation)")));
}

TEST_F(ExecScriptTest, GarbageFromAScriptIsNotAnEmptyList) {
  ExecProvider::Options o;
  o.list = {Script("list.sh", "echo 'no instances found'\n")};
  ExecProvider p(o, &runner_);
  Result<std::vector<Instance>> list = p.List(kNow);
  ASSERT_EQ(list.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(Msg(list.status()), HasSubstr("reply is not JSON: no instances found"));
}

TEST_F(ExecScriptTest, HangingScriptTimesOut) {
  ExecProvider::Options o;
  o.list = {Script("list.sh", "sleep 30\n")};
  o.timeout = Seconds(1);
  ExecProvider p(o, &runner_);
  Result<std::vector<Instance>> list = p.List(kNow);
  ASSERT_EQ(list.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(Msg(list.status()), HasSubstr("list.sh: did not finish within 1s"));
}

// A create that never returns: killed with everything it started at the
// deadline, and DeadlineExceeded (not a plain failure): the cloud may have
// bought the instance before the command was cut.
TEST_F(ExecScriptTest, HangingCreateIsKilledAtItsDeadlineWithItsOutcomeUnknown) {
  ExecProvider::Options o;
  o.create = {Script("create.sh", StrCat("sleep 30 &\necho $! > '", dir_, "/child.pid'\nwait\n"))};
  o.timeout = Seconds(1);
  ExecProvider p(o, &runner_);
  Result<Instance> made = p.Create(Request(), kNow);
  ASSERT_EQ(made.status().code(), absl::StatusCode::kDeadlineExceeded) << made.status();
  EXPECT_THAT(Msg(made.status()), HasSubstr("create.sh: did not finish within 1s; killed its process group"));
  const int64_t child = std::atoll(ReadBack("child.pid").c_str());
  ASSERT_GT(child, 0);
  auto stat = ReadProcStat(child);
  if (stat.has_value()) {
    // Killed with the group; it may still be a zombie until init reaps it.
    EXPECT_TRUE(WaitUntilGone(ProcessId{child, stat->start_time}, Seconds(10)));
  }
}

TEST(ExecProviderTest, ACallCutByItsTimeoutIsDeadlineExceededNamingTheCommand) {
  FakeRunner runner;
  runner.Fail(absl::DeadlineExceededError("cloud-create --profile 'lab one': did not finish within 45s"));
  runner.Fail(absl::DeadlineExceededError("did not finish within 45s"));
  ExecProvider p(Commands(), &runner);
  Status create = p.Create(Request(), kNow).status();
  EXPECT_EQ(create.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(Msg(create), "cloud-create --profile 'lab one': did not finish within 45s");
  Status del = p.Delete("i-1", "k", kNow);
  EXPECT_EQ(del.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(Msg(del), "cloud-delete: did not finish within 45s");
  EXPECT_EQ(runner.calls[0].timeout, Seconds(45));
}

}  // namespace
}  // namespace tide::providers
