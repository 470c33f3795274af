// The live controller under faults (docs/live.md, "Faults"): a provider that
// hangs, answers slowly, fails half its calls or lists instances tide did
// not ask for; a workload manager whose reply is cut short; a state file
// that fills up or turns read-only. Each: nothing destructive on unknown
// state, /healthz says what is wrong, and the next good call recovers.
// Deadlines are the providers' and backends' own (their tests cut real
// commands); here a call that ran out of time is its DeadlineExceeded.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

#include "controller/apply_journal.h"
#include "controller/controller.h"
#include "controller/fakes_test.h"
#include "controller/faulty_vfs_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tide::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::FaultyVfs;
using testing::SlurmJob;
const Timestamp kNow = FromUnixSeconds(1'800'000'200);

// testing::SlurmRig (four nodes unbought, six jobs waiting for two nodes'
// worth of GPUs, a fake provider) with what these tests look at.
struct Rig : testing::SlurmRig {
  using SlurmRig::SlurmRig;
  std::vector<std::string> Calls(std::string_view prefix) const {
    std::vector<std::string> out;
    for (const auto& c : provider.calls) {
      if (c.rfind(prefix, 0) == 0) out.push_back(c);
    }
    return out;
  }
  bool Logged(std::string_view part) const {
    return std::any_of(log.begin(), log.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
  }
  // How many instances the provider holds for each node: never two.
  int MostInstancesOnANode() const {
    std::map<std::string, int> n;
    int most = 0;
    for (const auto& i : provider.instances) most = std::max(most, ++n[i.node]);
    return most;
  }
  // What slurmctld and the machines do between loops: a node with a machine
  // registers (still drained until tide opens it), one without powers down.
  void Settle() {
    for (auto& n : slurm.view.nodes) {
      const bool machine = std::any_of(provider.instances.begin(), provider.instances.end(),
                                       [&](const auto& i) { return i.node == n.name; });
      const bool down = std::find(n.flags.begin(), n.flags.end(), "POWERED_DOWN") != n.flags.end();
      if (machine && down) std::erase(n.flags, std::string("POWERED_DOWN"));
      if (!machine && !down) n = testing::UnboughtNode(n.name);
    }
  }
};

std::string Why(const Controller& c, Timestamp now) {
  std::string why;
  return c.Healthy(now, &why) ? std::string("healthy") : why;
}

nlohmann::json StatusOf(const Controller& c) { return nlohmann::json::parse(c.StatusJson()); }

// ---- the provider ------------------------------------------------------------

// A create that hangs is cut by the provider's deadline (DeadlineExceeded):
// the cloud may or may not have bought the machine before the reply was
// lost. The create stays pending and the rest of the buy waits; the next
// loop settles it from the provider's list, adopting the instance that has
// its key, or abandoning the create (nothing was bought) and buying the
// node again, once. Never two machines for a node.
struct HangCase {
  std::string name;
  bool reached;       // the cloud bought it before the cut
  std::string state;  // the create's record after the next loop
  std::string said;   // in the log
};

class HangingCreate : public ::testing::TestWithParam<HangCase> {};

TEST_P(HangingCreate, IsSettledByTheNextListNotBoughtTwice) {
  const HangCase& hc = GetParam();
  Rig r;
  bool first = true;
  r.provider.on_create = [&](const providers::CreateRequest& req) {
    if (!std::exchange(first, false)) return;
    if (hc.reached) {
      r.provider.instances.push_back(
          {StrCat("i-", req.node), req.node, req.pool, req.idempotency_key, "pending", kNow});
    }
    r.provider.next_error =
        absl::DeadlineExceededError("cloud-create: did not finish within 1m; killed its process group");
  };
  auto c = r.Make();
  c->RunLoop(kNow);
  ASSERT_EQ(r.Calls("create").size(), 1u) << StrJoin(r.provider.calls, "\n");  // the rest of the buy waits
  const auto pending = *r.store->PendingActions();
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_TRUE(r.Logged("whether the provider bought the node is unknown"));
  EXPECT_THAT(Why(*c, kNow), HasSubstr(StrCat("provider (fake): create of node ", pending[0].node,
                                              ": cloud-create: did not finish within 1m")));

  r.Settle();
  LoopReport rep = c->RunLoop(kNow + Seconds(10));
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_EQ((*r.store->GetAction(pending[0].key))->state, hc.state);
  EXPECT_TRUE(r.Logged(StrCat("the create of node ", pending[0].node, " (key ", pending[0].key, ") ", hc.said)));
  EXPECT_TRUE(r.store->PendingActions()->empty());
  EXPECT_EQ(r.MostInstancesOnANode(), 1);
  EXPECT_EQ(r.provider.instances.size(), 2u);  // the two nodes the jobs need
  EXPECT_EQ(r.store->Instances(false)->size(), 2u);
  EXPECT_EQ(Why(*c, kNow + Seconds(10)), "healthy");
}

INSTANTIATE_TEST_SUITE_P(Faults, HangingCreate,
                         ::testing::Values(HangCase{"ThatReachedTheProviderIsAdopted", true, "done",
                                                    "reached the provider as instance"},
                                           HangCase{"ThatNeverReachedTheProviderIsAbandoned", false, "abandoned",
                                                    "never reached the provider; abandoned, nothing was bought"}),
                         [](const auto& info) { return info.param.name; });

// A provider slower than its deadline: the list is cut (DeadlineExceeded),
// the loop decides nothing, /healthz says so at once, and the first list
// in time recovers.
TEST(Faults, AProviderThatTimesOutSkipsThePassSaysSoAndRecovers) {
  Rig r;
  r.provider.list_error = absl::DeadlineExceededError("cloud-list: did not finish within 1m; killed its process group");
  auto c = r.Make();
  LoopReport rep = c->RunLoop(kNow);
  EXPECT_FALSE(rep.ok);
  EXPECT_TRUE(r.provider.calls.empty());
  EXPECT_TRUE(r.slurm.Actions().empty());
  EXPECT_TRUE(r.store->PendingActions()->empty());
  EXPECT_EQ(Why(*c, kNow), "provider (fake): list: cloud-list: did not finish within 1m; killed its process group");
  EXPECT_EQ(StatusOf(*c)["faults"].size(), 1u);
  EXPECT_THAT(c->MetricsText(), HasSubstr("tide_fault{source=\"provider\"} 1"));

  r.provider.list_error = OkStatus();
  rep = c->RunLoop(kNow + Seconds(10));
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_EQ(rep.acted.creates, 2);
  EXPECT_EQ(Why(*c, kNow + Seconds(10)), "healthy");
  EXPECT_TRUE(StatusOf(*c)["faults"].empty());
  EXPECT_THAT(c->MetricsText(), HasSubstr("tide_fault{source=\"provider\"} 0"));
}

// Fails half its calls, at random: lists and notices with Unavailable;
// creates refused (Unavailable) or cut by their deadline (DeadlineExceeded)
// before or after the cloud bought the machine, in turn; deletes refused or
// cut after the cloud did them.
// It also counts the creates asked for a node that has a machine already
// under another key: a second purchase.
class HalfBrokenProvider final : public providers::CloudProvider {
 public:
  explicit HalfBrokenProvider(testing::FakeProvider* inner) : inner_(inner) {}
  bool broken = true;
  int bought_twice = 0;

  std::string Name() const override { return "half-broken"; }
  Result<providers::Instance> Create(const providers::CreateRequest& r, Timestamp now) override {
    for (const auto& i : inner_->instances) bought_twice += i.node == r.node && i.idempotency_key != r.idempotency_key;
    if (!Fails()) return inner_->Create(r, now);
    switch (++lost_ % 3) {
      case 0: return absl::UnavailableError("create: connection refused");
      case 1: return absl::DeadlineExceededError("create: did not finish within 1m");  // before the cloud heard
      default: break;
    }
    (void)inner_->Create(r, now);  // bought, and the reply lost
    return absl::DeadlineExceededError("create: did not finish within 1m");
  }
  Status Delete(const std::string& id, const std::string& key, Timestamp now) override {
    if (!Fails()) return inner_->Delete(id, key, now);
    if (++lost_ % 2 == 0) return absl::UnavailableError("delete: connection refused");
    (void)inner_->Delete(id, key, now);
    return absl::DeadlineExceededError("delete: did not finish within 1m");
  }
  Result<std::vector<providers::Instance>> List(Timestamp now) override {
    if (Fails()) return absl::UnavailableError("list: connection refused");
    return inner_->List(now);
  }
  Result<std::vector<providers::Interruption>> Interruptions(Timestamp now) override {
    if (Fails()) return absl::UnavailableError("interruptions: connection refused");
    return inner_->Interruptions(now);
  }

 private:
  bool Fails() { return broken && coin_() % 2 == 0; }
  testing::FakeProvider* inner_;
  std::mt19937 coin_{35};  // seeded: the same calls fail on every run
  int lost_ = 0;
};

// Through a demand that comes and goes, with half the provider's calls
// failing: never two machines for a node, never an instance the store does
// not know once a loop succeeds, and once the provider heals every machine
// is given back and /healthz is green again.
TEST(Faults, AProviderThatFailsHalfItsCallsNeverBuysTwiceNorLeaks) {
  Rig r;
  r.slurm.apply_node_commands = true;
  HalfBrokenProvider flaky(&r.provider);
  auto c = r.MakeOver(&flaky);
  Timestamp now = kNow;
  int failed = 0;
  for (int loop = 0; loop < 80; ++loop, now += Seconds(10)) {
    if (loop == 10) r.slurm.view.jobs.clear();  // the demand is gone
    if (loop == 60) flaky.broken = false;
    LoopReport rep = c->RunLoop(now);
    failed += rep.ok ? 0 : 1;
    ASSERT_LE(r.MostInstancesOnANode(), 1) << "loop " << loop << ": " << StrJoin(r.provider.calls, "\n");
    if (rep.ok) {
      for (const auto& i : r.provider.instances) {
        auto rec = *r.store->InstanceByNode(i.node);
        const auto pending = *r.store->PendingActions();
        const bool in_flight =
            std::any_of(pending.begin(), pending.end(), [&](const auto& a) { return a.node == i.node; });
        EXPECT_TRUE(rec.has_value() || in_flight) << "loop " << loop << ": instance " << i.id << " unknown";
      }
    }
    r.Settle();
  }
  EXPECT_GT(failed, 10);
  EXPECT_EQ(flaky.bought_twice, 0);
  // Each kind of lost reply happened, and was settled from the list.
  EXPECT_TRUE(r.Logged(") reached the provider as instance"));
  EXPECT_TRUE(r.Logged(") never reached the provider; abandoned"));
  EXPECT_TRUE(r.Logged("recovered: finished the delete of instance"));
  EXPECT_GT(r.Calls("create").size(), 0u);
  EXPECT_TRUE(r.provider.instances.empty()) << StrJoin(r.provider.calls, "\n");
  EXPECT_TRUE(r.store->Instances(false)->empty());
  EXPECT_TRUE(r.store->PendingActions()->empty());
  EXPECT_EQ(Why(*c, now), "healthy");
}

// Instances tide did not ask for (no record, no pending create): adopted,
// never deleted for being unknown, and the log says so. One whose node has
// not joined is left be (not capacity, not given back, its name not bought
// again); once its node joins it is a node like any tide bought, given back
// when idle. One on none of tide's pools is never given back at all.
TEST(Faults, InstancesTideDidNotAskForAreAdoptedAndNeverDeletedForIt) {
  Rig r;
  r.slurm.apply_node_commands = true;
  r.slurm.view.jobs.clear();
  r.provider.instances = {{"i-x", "gpu3", "spot", "k-elsewhere", "running", kNow - Seconds(600)},
                          {"i-y", "web-7", "elsewhere", "", "running", kNow - Seconds(600)}};
  auto c = r.Make();
  LoopReport rep = c->RunLoop(kNow);
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_TRUE(r.Calls("delete").empty()) << StrJoin(r.provider.calls, "\n");
  EXPECT_TRUE(r.Logged("adopted instance i-x (node gpu3, pool spot, key k-elsewhere): the provider lists it and the "
                       "store has no record of buying it; tide leaves it be until its node joins"));
  EXPECT_TRUE(r.Logged("adopted instance i-y (node web-7): the provider lists it and the store has no record of "
                       "buying it; it is on none of tide's pools, so tide never gives it back"));
  EXPECT_EQ(r.store->Instances(false)->size(), 2u);
  Timestamp now = kNow;
  for (int loop = 1; loop <= 30; ++loop) ASSERT_TRUE(c->RunLoop(now += Seconds(10)).ok);
  EXPECT_TRUE(r.Calls("delete").empty()) << StrJoin(r.provider.calls, "\n");
  // Demand for one node: bought beside gpu3, never on it.
  r.slurm.view.jobs = {SlurmJob(1, "PENDING", 8, {}, "gpu")};
  ASSERT_TRUE(c->RunLoop(now += Seconds(10)).ok);
  for (const auto& call : r.Calls("create")) EXPECT_THAT(call, Not(HasSubstr("gpu3")));
  EXPECT_EQ(r.MostInstancesOnANode(), 1);
  // gpu3 joins, and with no job for it is given back like any idle node.
  r.slurm.view.jobs.clear();
  std::erase(r.slurm.view.nodes[2].flags, std::string("POWERED_DOWN"));
  for (int loop = 1; loop <= 30; ++loop) ASSERT_TRUE(c->RunLoop(now += Seconds(10)).ok);
  EXPECT_THAT(r.provider.calls, ::testing::Contains("delete i-x"));
  EXPECT_THAT(r.provider.calls, Not(::testing::Contains("delete i-y")));
  EXPECT_EQ(Why(*c, now), "healthy");
}

// An instance tide gave back that the provider still lists (a delete under
// way, or a list that lags): never adopted again, never an error that stops
// the loop; only one that still runs is worth a warning.
TEST(Faults, AnInstanceListedAfterItsDeleteIsLeftAlone) {
  Rig r;
  r.slurm.view.jobs.clear();
  InstanceRecord gone{.id = "i-old", .node = "gpu2", .pool = "ondemand", .created = kNow - Seconds(3600),
                      .state = "booting"};
  ASSERT_TRUE(r.store->PutInstance(gone).ok());
  ASSERT_TRUE(r.store->MarkInstanceDeleted("i-old", kNow - Seconds(60), "deleted").ok());
  r.provider.instances = {{"i-old", "gpu2", "ondemand", "", "terminating", kNow - Seconds(3600)}};
  auto c = r.Make();
  LoopReport rep = c->RunLoop(kNow);
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_FALSE(r.Logged("i-old"));
  r.provider.instances[0].state = "running";
  rep = c->RunLoop(kNow + Seconds(10));
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_TRUE(r.Logged("warning: instance i-old (node gpu2) is listed by the provider as running although tide "
                       "recorded it deleted"));
  EXPECT_TRUE(r.store->Instances(false)->empty());
  EXPECT_TRUE(r.Calls("delete").empty());
}

// ---- the workload manager ----------------------------------------------------

// squeue's reply cut short: the pass is skipped before any decision, nothing
// is bought or drained, /healthz names the manager and the parse error; the
// next whole reply recovers.
TEST(Faults, ATruncatedWorkloadManagerReplySkipsThePassAndTheNextGoodOneRecovers) {
  Rig r;
  r.slurm.cut_replies_at = 40;
  auto c = r.Make();
  LoopReport rep = c->RunLoop(kNow);
  EXPECT_FALSE(rep.ok);
  EXPECT_TRUE(r.provider.calls.empty());
  EXPECT_TRUE(r.slurm.Actions().empty());
  const std::string why = Why(*c, kNow);
  EXPECT_THAT(why, HasSubstr("workload manager (slurm) cannot be read: squeue --json: not valid JSON"));
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;  // one fault, one line
  EXPECT_THAT(c->MetricsText(), HasSubstr("tide_fault{source=\"workload_manager\"} 1"));

  r.slurm.cut_replies_at = std::string::npos;
  rep = c->RunLoop(kNow + Seconds(10));
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_EQ(rep.acted.creates, 2);
  EXPECT_EQ(Why(*c, kNow + Seconds(10)), "healthy");
}

// ---- the state file --------------------------------------------------------------

class StoreFaults : public ::testing::TestWithParam<std::pair<FaultyVfs::Fault, std::string>> {
 protected:
  void SetUp() override {
    std::string pattern = StrCat(::testing::TempDir(), "/tide_faults_test_XXXXXX");
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

// The state file stops taking writes: the loop stops before it acts (no
// create or delete whose record cannot be written), /healthz names the file
// and SQLite's error, and once the file takes writes again the controller
// carries on by itself.
TEST_P(StoreFaults, AStateFileThatCannotBeWrittenStopsActingSaysSoAndRecovers) {
  const auto& [fault, error] = GetParam();
  FaultyVfs vfs;
  const std::string path = StrCat(dir_, "/state.db");
  {
    Rig r(path);
    auto c = r.Make();
    vfs.Set(fault);
    LoopReport rep = c->RunLoop(kNow);
    EXPECT_FALSE(rep.ok);
    EXPECT_TRUE(r.Calls("create").empty()) << StrJoin(r.provider.calls, "\n");
    EXPECT_TRUE(r.slurm.Actions().empty());
    const std::string why = Why(*c, kNow);
    EXPECT_THAT(why, HasSubstr(StrCat("state store: cannot write the state file: ", path, ": ", error)));
    EXPECT_THAT(c->MetricsText(), HasSubstr("tide_fault{source=\"store\"} 1"));
    EXPECT_EQ(StatusOf(*c)["faults"].size(), 1u);

    vfs.Set(FaultyVfs::Fault::kNone);
    rep = c->RunLoop(kNow + Seconds(10));
    ASSERT_TRUE(rep.ok) << rep.error;
    EXPECT_EQ(rep.acted.creates, 2);
    EXPECT_EQ(r.store->Instances(false)->size(), 2u);
    EXPECT_EQ(Why(*c, kNow + Seconds(10)), "healthy");
  }
}

INSTANTIATE_TEST_SUITE_P(Faults, StoreFaults,
                         ::testing::Values(std::pair{FaultyVfs::Fault::kReadOnly, std::string("disk I/O error")},
                                           std::pair{FaultyVfs::Fault::kFull,
                                                     std::string("database or disk is full")}),
                         [](const auto& info) {
                           return info.param.first == FaultyVfs::Fault::kFull ? std::string("Full")
                                                                              : std::string("ReadOnly");
                         });

// Past the loop's first write, the store fills up just as a node is to be
// bought or given back: the applier asks the provider for nothing it could
// not record, and the journal reports the store's refusal.
TEST_F(StoreFaults, NoCreateOrDeleteIsAskedForThatCannotBeRecorded) {
  FaultyVfs vfs;
  const std::string path = StrCat(dir_, "/state.db");
  Rig r(path);
  StoreJournal journal(&r.cfg, r.store.get());
  apply::Applier applier(&r.cfg.cluster, apply::ApplyOptions{}, r.backend.get(), &r.provider, &journal, nullptr);
  // A node tide bought, on record, to give back.
  ASSERT_TRUE(r.store->BeginAction({"k-1", "create", "gpu1", "", "ondemand", "pending", kNow, kNow, ""}).ok());
  InstanceRecord rec{.id = "i-1", .node = "gpu1", .pool = "ondemand", .created = kNow, .state = "releasing"};
  ASSERT_TRUE(r.store->CommitCreate("k-1", rec, kNow).ok());
  r.provider.instances = {{"i-1", "gpu1", "ondemand", "k-1", "running", kNow}};

  ASSERT_TRUE(r.backend->Observe().ok());  // the names the manager has for the pool
  vfs.Set(FaultyVfs::Fault::kFull);
  apply::ApplyStats stats;
  ASSERT_TRUE(applier.GiveBack("gpu1", "i-1", 0, kNow, &stats).ok());
  autoscale::ScalingPlan plan;
  autoscale::Action buy;
  buy.kind = autoscale::ActionKind::kScaleUp;
  buy.pool = 1;
  buy.count = 1;
  buy.reason = "test";
  plan.actions = {buy};
  Built built;
  LiveView view(&built, r.store.get());
  ASSERT_TRUE(applier.Apply(plan, view, kNow, &stats).ok());
  EXPECT_TRUE(r.provider.calls.empty()) << StrJoin(r.provider.calls, "\n");
  EXPECT_EQ(stats.errors, 2) << StrJoin(stats.problems, "\n");
  const absl::Status refused = journal.TakeWriteError();
  EXPECT_THAT(std::string(Message(refused)), HasSubstr(StrCat(path, ": database or disk is full")));
  EXPECT_TRUE(journal.TakeWriteError().ok());  // said once

  vfs.Set(FaultyVfs::Fault::kNone);
  ASSERT_TRUE(applier.GiveBack("gpu1", "i-1", 0, kNow, &stats).ok());
  EXPECT_EQ(r.provider.calls, std::vector<std::string>{"delete i-1"});
  EXPECT_TRUE(r.store->Instances(false)->empty());
}

}  // namespace
}  // namespace tide::controller
