#include "providers/local/local_provider.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tide::providers {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;
using json = nlohmann::json;

constexpr Timestamp kNow = FromUnixSeconds(1767571200);

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// /proc/<pid>/stat's state (field 3) and start time (field 22).
std::optional<std::pair<char, uint64_t>> ProcStat(int64_t pid) {
  std::ifstream in(StrCat("/proc/", pid, "/stat"));
  std::string text;
  if (!std::getline(in, text)) return std::nullopt;
  std::istringstream rest(text.substr(text.rfind(')') + 1));
  char state;
  std::string skip;
  rest >> state;
  for (int f = 4; f < 22; ++f) rest >> skip;
  uint64_t start;
  if (!(rest >> start)) return std::nullopt;
  return std::pair{state, start};
}

// Alive and still the same process; a zombie (nobody may reap it) is dead.
bool Running(int64_t pid, uint64_t start) {
  auto st = ProcStat(pid);
  return st.has_value() && st->second == start && st->first != 'Z' && st->first != 'X';
}

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

Timestamp WallNow() { return RealClock().Now(); }

CreateRequest Request(std::string node, std::string key) {
  CreateRequest r;
  r.pool = "spot-a100";
  r.node = std::move(node);
  r.instance_type = "a100x8";
  r.tier = model::Tier::kSpot;
  r.region = "local";
  r.idempotency_key = std::move(key);
  return r;
}

class LocalProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tide-local-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }

  // Every process a test started is killed by pid (only while its start time
  // still matches), whatever the test did.
  void TearDown() override {
    for (const auto& [pid, start] : started_) {
      if (Running(pid, start)) {
        kill(static_cast<pid_t>(-pid), SIGKILL);
        kill(static_cast<pid_t>(pid), SIGKILL);
      }
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  LocalProvider::Options Opts(std::vector<std::string> command = {"/bin/sleep", "300"}) {
    LocalProvider::Options o;
    o.state_dir = dir_;
    o.command_override = std::move(command);
    o.stop_grace = Seconds(1);
    return o;
  }

  // Create, remembering the process for TearDown.
  Result<Instance> Create(LocalProvider& p, const CreateRequest& r, Timestamp now = kNow) {
    Result<Instance> i = p.Create(r, now);
    if (i.ok()) Track(i->id);
    return i;
  }

  std::string RecordPath(const std::string& id) { return StrCat(dir_, "/instances/", id, ".json"); }
  json Record(const std::string& id) { return json::parse(ReadText(RecordPath(id))); }
  int64_t Pid(const std::string& id) { return Record(id)["pid"].get<int64_t>(); }
  uint64_t Start(const std::string& id) { return Record(id)["start_time"].get<uint64_t>(); }

  void Track(const std::string& id) {
    if (fs::exists(RecordPath(id))) started_.emplace_back(Pid(id), Start(id));
  }

  int RecordCount() {
    int n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(StrCat(dir_, "/instances"), ec)) {
      if (e.path().extension() == ".json") ++n;
    }
    return n;
  }

  std::string dir_;
  std::vector<std::pair<int64_t, uint64_t>> started_;
};

TEST_F(LocalProviderTest, CreateStartsADetachedProcessAndListsIt) {
  LocalProvider p(Opts());
  Result<Instance> i = Create(p, Request("gpu1", "k1"));
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_THAT(i->id, StartsWith("local-gpu1-1767571200-"));
  EXPECT_EQ(i->node, "gpu1");
  EXPECT_EQ(i->pool, "spot-a100");
  EXPECT_EQ(i->idempotency_key, "k1");
  EXPECT_EQ(i->created, kNow);
  const int64_t pid = Pid(i->id);
  const uint64_t start = Start(i->id);
  EXPECT_TRUE(Running(pid, start));
  EXPECT_NE(getpgid(static_cast<pid_t>(pid)), getpgrp());  // detached: its own group
  EXPECT_NE(getsid(static_cast<pid_t>(pid)), getsid(0));    // and session

  ASSERT_TRUE(Eventually([&] {
    auto list = p.List(kNow);
    return list.ok() && list->size() == 1 && (*list)[0].state == "running";
  }));
  Result<std::vector<Instance>> list = p.List(kNow);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].id, i->id);
}

TEST_F(LocalProviderTest, SlurmdArgvByDefault) {
  LocalProvider::Options o = Opts({});
  o.slurmd = "/bin/true";  // exits at once; the record keeps the argv it was given
  o.slurm_conf = "/tmp/lab/etc/slurm.conf";
  o.slurmd_args = {"-L", "/tmp/lab/log/gpu3.log"};
  LocalProvider p(o);
  Result<Instance> i = Create(p, Request("gpu3", "k3"));
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_THAT(Record(i->id)["argv"].get<std::vector<std::string>>(),
              ElementsAre("/bin/true", "-D", "-b", "-f", "/tmp/lab/etc/slurm.conf", "-N", "gpu3", "-L",
                          "/tmp/lab/log/gpu3.log"));
}

TEST_F(LocalProviderTest, SameKeyOrSameNodeStartsOneProcess) {
  LocalProvider p(Opts());
  Result<Instance> first = Create(p, Request("gpu1", "k1"));
  ASSERT_TRUE(first.ok()) << first.status();
  Result<Instance> again = Create(p, Request("gpu1", "k1"), kNow + Seconds(5));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->id, first->id);
  EXPECT_EQ(again->created, kNow);
  Result<Instance> same_node = Create(p, Request("gpu1", "k2"), kNow + Seconds(6));
  ASSERT_TRUE(same_node.ok()) << same_node.status();
  EXPECT_EQ(same_node->id, first->id);
  // Same key, other node: still the first instance (the key is the decision).
  Result<Instance> same_key = Create(p, Request("gpu2", "k1"), kNow + Seconds(7));
  ASSERT_TRUE(same_key.ok()) << same_key.status();
  EXPECT_EQ(same_key->id, first->id);
  EXPECT_EQ(RecordCount(), 1);
}

TEST_F(LocalProviderTest, NewProviderOnTheSameStateDirFindsWhatWasBought) {
  std::string id;
  {
    LocalProvider before_crash(Opts());
    Result<Instance> i = Create(before_crash, Request("gpu1", "k1"));
    ASSERT_TRUE(i.ok()) << i.status();
    id = i->id;
  }
  LocalProvider after_restart(Opts());
  Result<std::vector<Instance>> list = after_restart.List(kNow + Seconds(60));
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].id, id);
  EXPECT_EQ((*list)[0].idempotency_key, "k1");
  EXPECT_TRUE(Running(Pid(id), Start(id)));
  // The retried create of the same decision buys nothing.
  Result<Instance> retried = Create(after_restart, Request("gpu1", "k1"), kNow + Seconds(61));
  ASSERT_TRUE(retried.ok()) << retried.status();
  EXPECT_EQ(retried->id, id);
  EXPECT_EQ(RecordCount(), 1);
}

TEST_F(LocalProviderTest, DeleteKillsTheProcessAndForgetsIt) {
  LocalProvider p(Opts());
  Result<Instance> i = Create(p, Request("gpu1", "k1"));
  ASSERT_TRUE(i.ok()) << i.status();
  const int64_t pid = Pid(i->id);
  const uint64_t start = Start(i->id);

  ASSERT_TRUE(p.Delete(i->id, "delete-1", kNow).ok());
  EXPECT_FALSE(Running(pid, start));
  EXPECT_FALSE(fs::exists(RecordPath(i->id)));
  Result<std::vector<Instance>> list = p.List(kNow);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(*list, IsEmpty());
  EXPECT_THAT(ReadText(StrCat(dir_, "/terminated.log")), HasSubstr(StrCat(i->id, " node=gpu1 pid=", pid, " deleted")));

  EXPECT_TRUE(p.Delete(i->id, "delete-1", kNow).ok());               // again: already gone
  EXPECT_TRUE(p.Delete("local-gpu9-1-1", "delete-2", kNow).ok());    // never existed
  EXPECT_TRUE(p.Delete("../../etc/passwd", "delete-3", kNow).ok());  // not an id of ours
}

TEST_F(LocalProviderTest, DeleteKillsTheGroupOfAProcessThatIgnoresSigterm) {
  LocalProvider p(Opts({"/bin/sh", "-c", "trap '' TERM; sleep 300"}));
  Result<Instance> i = Create(p, Request("gpu1", "k1"));
  ASSERT_TRUE(i.ok()) << i.status();
  const int64_t pid = Pid(i->id);
  const uint64_t start = Start(i->id);
  // Wait for the shell's child: then the trap is set.
  const std::string children = StrCat("/proc/", pid, "/task/", pid, "/children");
  int64_t child = 0;
  ASSERT_TRUE(Eventually([&] {
    std::istringstream in(ReadText(children));
    return static_cast<bool>(in >> child);
  }));
  auto child_stat = ProcStat(child);
  ASSERT_TRUE(child_stat.has_value());
  started_.emplace_back(child, child_stat->second);

  ASSERT_TRUE(p.Delete(i->id, "delete-1", kNow).ok());
  EXPECT_FALSE(Running(pid, start));
  EXPECT_TRUE(Eventually([&] { return !Running(child, child_stat->second); }));
}

TEST_F(LocalProviderTest, PendingDuringTheBootDelayThenRunning) {
  LocalProvider p(Opts());
  CreateRequest r = Request("gpu1", "k1");
  r.boot_delay = Seconds(1);
  Result<Instance> i = Create(p, r, WallNow());
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(i->state, "pending");
  const int64_t pid = Pid(i->id);
  ASSERT_TRUE(Eventually([&] {
    auto list = p.List(WallNow());
    return list.ok() && list->size() == 1 && (*list)[0].state == "running";
  }));
  // Running means the command was exec'd, with the pid that was recorded.
  std::error_code ec;
  EXPECT_EQ(fs::read_symlink(StrCat("/proc/", pid, "/exe"), ec).filename().string(), "sleep");
}

TEST_F(LocalProviderTest, InterruptionIsAnnouncedThenCarriedOut) {
  LocalProvider p(Opts());
  Result<Instance> a = Create(p, Request("gpu1", "k1"));
  Result<Instance> b = Create(p, Request("gpu2", "k2"));
  ASSERT_TRUE(a.ok() && b.ok());
  const int64_t pid = Pid(a->id);
  const uint64_t start = Start(a->id);

  ASSERT_TRUE(p.InjectInterruption("gpu1", Seconds(120), kNow).ok());
  Result<std::vector<Interruption>> notes = p.Interruptions(kNow + Seconds(10));
  ASSERT_TRUE(notes.ok()) << notes.status();
  ASSERT_EQ(notes->size(), 1u);
  EXPECT_EQ((*notes)[0].instance_id, a->id);
  EXPECT_EQ((*notes)[0].node, "gpu1");
  EXPECT_EQ((*notes)[0].at, kNow + Seconds(120));

  Result<std::vector<Instance>> before = p.List(kNow + Seconds(119));
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->size(), 2u);
  EXPECT_TRUE(Running(pid, start));
  EXPECT_THAT(p.TakeInterrupted(), IsEmpty());

  Result<std::vector<Instance>> after = p.List(kNow + Seconds(120));
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_EQ(after->size(), 1u);
  EXPECT_EQ((*after)[0].node, "gpu2");
  EXPECT_TRUE(Eventually([&] { return !Running(pid, start); }));
  EXPECT_THAT(p.TakeInterrupted(), ElementsAre("gpu1"));
  EXPECT_THAT(p.TakeInterrupted(), IsEmpty());  // reported once
  Result<std::vector<Interruption>> later = p.Interruptions(kNow + Seconds(121));
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_THAT(*later, IsEmpty());
  EXPECT_FALSE(fs::exists(StrCat(dir_, "/interruptions/gpu1.json")));
  EXPECT_THAT(ReadText(StrCat(dir_, "/terminated.log")), HasSubstr(StrCat(a->id, " node=gpu1")));
}

TEST_F(LocalProviderTest, InterruptionsCarryOutDueOnesToo) {
  LocalProvider p(Opts());
  Result<Instance> a = Create(p, Request("gpu1", "k1"));
  ASSERT_TRUE(a.ok()) << a.status();
  // Another process (the CLI) injects into the running provider's directory.
  ASSERT_TRUE(LocalProvider::InjectInterruptionInDir(dir_, "gpu1", Seconds(0), kNow).ok());
  Result<std::vector<Interruption>> notes = p.Interruptions(kNow);
  ASSERT_TRUE(notes.ok()) << notes.status();
  EXPECT_THAT(*notes, IsEmpty());
  EXPECT_THAT(p.TakeInterrupted(), ElementsAre("gpu1"));
  EXPECT_FALSE(fs::exists(RecordPath(a->id)));
}

TEST_F(LocalProviderTest, InterruptionNeedsAnInstanceAndAValidNotice) {
  LocalProvider p(Opts());
  EXPECT_EQ(p.InjectInterruption("gpu1", Seconds(120), kNow).code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(Create(p, Request("gpu1", "k1")).ok());
  EXPECT_EQ(p.InjectInterruption("gpu1", Seconds(-1), kNow).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.InjectInterruption("../gpu1", Seconds(1), kNow).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(LocalProviderTest, AnInterruptionDoesNotHitTheNextInstanceOfTheNode) {
  LocalProvider p(Opts());
  Result<Instance> a = Create(p, Request("gpu1", "k1"));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(p.InjectInterruption("gpu1", Seconds(120), kNow).ok());
  ASSERT_TRUE(p.Delete(a->id, "d1", kNow + Seconds(1)).ok());
  Result<Instance> b = Create(p, Request("gpu1", "k2"), kNow + Seconds(2));
  ASSERT_TRUE(b.ok()) << b.status();
  Result<std::vector<Instance>> list = p.List(kNow + Seconds(500));
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].id, b->id);
  EXPECT_THAT(p.TakeInterrupted(), IsEmpty());
}

TEST_F(LocalProviderTest, ADeadProcessIsDropped) {
  LocalProvider p(Opts());
  Result<Instance> i = Create(p, Request("gpu1", "k1"));
  ASSERT_TRUE(i.ok()) << i.status();
  const int64_t pid = Pid(i->id);
  const uint64_t start = Start(i->id);
  kill(static_cast<pid_t>(pid), SIGKILL);  // the node crashed under us
  ASSERT_TRUE(Eventually([&] { return !Running(pid, start); }));

  Result<std::vector<Instance>> list = p.List(kNow);
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_THAT(*list, IsEmpty());
  EXPECT_FALSE(fs::exists(RecordPath(i->id)));
  EXPECT_THAT(ReadText(StrCat(dir_, "/terminated.log")), HasSubstr(StrCat(i->id, " node=gpu1 pid=", pid,
                                                                          " process ended")));
  EXPECT_THAT(p.TakeInterrupted(), IsEmpty());  // a crash is not an interruption

  // The node can be bought again.
  Result<Instance> again = Create(p, Request("gpu1", "k2"), kNow + Seconds(1));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_NE(again->id, i->id);
}

TEST_F(LocalProviderTest, CorruptRecordIsUnavailableNotEmpty) {
  LocalProvider p(Opts());
  fs::create_directories(StrCat(dir_, "/instances"));
  std::ofstream(StrCat(dir_, "/instances/local-gpu1-1-1.json")) << "{not json";
  Result<std::vector<Instance>> list = p.List(kNow);
  EXPECT_EQ(list.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(Message(list.status())), HasSubstr("instances/local-gpu1-1-1.json"));
}

TEST_F(LocalProviderTest, BadRequestsStartNothing) {
  LocalProvider p(Opts());
  EXPECT_EQ(p.Create(Request("gpu/1", "k"), kNow).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.Create(Request("", "k"), kNow).status().code(), absl::StatusCode::kInvalidArgument);
  LocalProvider missing(Opts({"/nonexistent/slurmd"}));
  Result<Instance> i = missing.Create(Request("gpu1", "k"), kNow);
  EXPECT_EQ(i.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(Message(i.status())), HasSubstr("/nonexistent/slurmd"));
  EXPECT_EQ(RecordCount(), 0);
}

}  // namespace
}  // namespace tide::providers
