// The live side of the applier, end to end over the Slurm backend (its tool
// replies played by FakeSlurm): what it journals, the order of its steps,
// what it refuses, and the life cycles Advance moves on.
#include "controller/live_cluster.h"

#include "controller/apply_journal.h"
#include "controller/fakes_test.h"
#include "controller/live_cost.h"
#include "controller/reconcile.h"
#include "gtest/gtest.h"

namespace tide::controller {
namespace {

using testing::SlurmJob;
using testing::SlurmNode;
const Timestamp kNow = FromUnixSeconds(1'800'000'200);

struct Rig {
  config::Config cfg = testing::TwoPools();
  testing::FakeSlurm slurm;
  std::unique_ptr<backends::SlurmBackend> backend = testing::SlurmOver(cfg, &slurm);
  testing::FakeProvider provider;
  std::unique_ptr<Store> store = *Store::Open(":memory:");
  Memory memory;
  std::vector<std::string> log;
  LogFn log_fn = [this](const std::string& l) { log.push_back(l); };
  StoreJournal journal{&cfg, store.get()};
  LiveListener listener{&memory, store.get(), log_fn, ""};
  apply::Applier applier{&cfg.cluster, apply::ApplyOptions{.checkpoint_grace = cfg.live.jobs.checkpoint_grace},
                         backend.get(), &provider, &journal, &listener};
  apply::ApplyStats stats;
  backends::Observation obs;
  std::vector<providers::Instance> instances;
  Built built;

  Rig() { testing::AddUnboughtNodes(&slurm); }
  // A fresh observation and the snapshot of it.
  const Built& Build(Timestamp now = kNow) {
    obs = *backend->Observe();
    instances = *provider.List(now);
    built = BuildSnapshot(cfg, obs, instances, provider.notices, &memory, nullptr, now);
    return built;
  }
  void Apply(const autoscale::ScalingPlan& plan, Timestamp now = kNow) {
    Build(now);
    LiveView view(&built, store.get());
    ASSERT_TRUE(applier.Apply(plan, view, now, &stats).ok());
  }
  void Advance(Timestamp now) {
    Build(now);
    controller::Advance(cfg, obs, built, backend.get(), &applier, store.get(), *journal.PendingStops(), now, &stats,
                        log_fn);
  }
  Status Reconcile(Timestamp now) {
    obs = *backend->Observe();
    return controller::Reconcile(cfg, obs, provider.instances, store.get(), &provider, now, &stats, log_fn);
  }
  std::vector<std::string> Actions() const { return slurm.Actions(); }
};

autoscale::ScalingPlan Plan(std::vector<autoscale::Action> actions) {
  autoscale::ScalingPlan p;
  p.actions = std::move(actions);
  return p;
}

autoscale::Action ScaleUp(int pool, int count) {
  autoscale::Action a;
  a.kind = autoscale::ActionKind::kScaleUp;
  a.pool = pool;
  a.count = count;
  a.jobs = {1, 2};
  a.reason = "4 pending GPU jobs";
  return a;
}

autoscale::Action Release(model::NodeId node, std::string reason) {
  autoscale::Action a;
  a.kind = autoscale::ActionKind::kRelease;
  a.nodes = {node};
  a.reason = std::move(reason);
  return a;
}

TEST(LiveCluster, RecordsACreateBeforeCallingTheProvider) {
  Rig r;
  bool recorded = false;
  r.provider.on_create = [&](const providers::CreateRequest& req) {
    auto a = r.store->GetAction(req.idempotency_key);
    recorded = a.ok() && a->has_value() && (*a)->state == "pending";
  };
  r.Apply(Plan({ScaleUp(1, 2)}));
  EXPECT_TRUE(recorded);
  EXPECT_EQ(r.stats.creates, 2);
  auto inst = *r.store->Instances(false);
  ASSERT_EQ(inst.size(), 2u);
  EXPECT_EQ(inst[0].tier, model::Tier::kSpot);
  EXPECT_TRUE(r.store->PendingActions()->empty());
  EXPECT_TRUE(r.Actions().empty());  // no POWER_UP: the slurmd registers itself
}

TEST(LiveCluster, NeverBuysMoreThanThePoolHasNamesAndNotTwiceInOnePlan) {
  Rig r;
  r.Apply(Plan({ScaleUp(0, 1), ScaleUp(0, 5)}));
  EXPECT_EQ(r.stats.creates, 2);
  ASSERT_EQ(r.provider.instances.size(), 2u);
  EXPECT_EQ(r.provider.instances[0].node, "gpu1");
  EXPECT_EQ(r.provider.instances[1].node, "gpu2");
}

TEST(LiveCluster, AFailedCreateMarksThePoolAndBuysNothing) {
  Rig r;
  r.provider.next_error = absl::UnavailableError("no capacity");
  r.Apply(Plan({ScaleUp(1, 1)}));
  EXPECT_EQ(r.stats.creates, 0);
  EXPECT_EQ(r.stats.errors, 1);
  EXPECT_TRUE(r.memory.pool_unavailable.count(1));
  EXPECT_TRUE(r.store->Instances(false)->empty());
  EXPECT_TRUE(r.store->PendingActions()->empty());
}

TEST(LiveCluster, ReconcileAdoptsOrAbandonsWhatWasInFlight) {
  Rig r;
  ASSERT_TRUE(r.store->BeginAction({"k-a", "create", "gpu1", "", "ondemand", "pending", kNow, kNow, ""}).ok());
  ASSERT_TRUE(r.store->BeginAction({"k-b", "create", "gpu2", "", "ondemand", "pending", kNow, kNow, ""}).ok());
  r.provider.instances = {{"i-1", "gpu1", "ondemand", "k-a", "running", kNow},
                          {"i-9", "gpu3", "spot", "", "running", kNow}};  // unknown to the store
  ASSERT_TRUE(r.Reconcile(kNow).ok());
  EXPECT_EQ((*r.store->GetAction("k-a"))->state, "done");
  EXPECT_EQ((*r.store->GetAction("k-b"))->state, "abandoned");
  auto inst = *r.store->Instances(false);
  ASSERT_EQ(inst.size(), 2u);
  // The provider loses one: closed as lost, counted as a spot interruption.
  r.provider.instances.pop_back();
  ASSERT_TRUE(r.Reconcile(kNow + Seconds(3600)).ok());
  EXPECT_EQ(r.store->Instances(false)->size(), 1u);
  EXPECT_EQ(*r.store->Counter("spot_interruptions"), 1);
  EXPECT_NEAR(LiveCost(r.store.get(), kNow + Seconds(3600))->spot, 10.0, 1e-9);
}

// A machine that joined under a name of its own (MatchJoinedNodes gave the
// listed instance that name): its record follows, and the node is then
// known as tide's by that name.
TEST(LiveCluster, ReconcileFollowsANodeThatJoinedUnderItsOwnName) {
  Rig r;
  ASSERT_TRUE(r.store->BeginAction({"k-a", "create", "gpu1", "", "ondemand", "pending", kNow, kNow, ""}).ok());
  r.provider.instances = {{"i-1", "gpu1", "ondemand", "k-a", "running", kNow}};
  ASSERT_TRUE(r.Reconcile(kNow).ok());
  r.provider.instances[0].node = "ip-10-0-0-7";
  ASSERT_TRUE(r.Reconcile(kNow + Seconds(2)).ok());
  EXPECT_FALSE(r.store->InstanceByNode("gpu1")->has_value());
  auto rec = *r.store->InstanceByNode("ip-10-0-0-7");
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(rec->id, "i-1");
  EXPECT_EQ(r.store->Instances(false)->size(), 1u);
}

TEST(LiveCluster, ReleaseCordonsFirstAndDeletesOnlyWhenEmpty) {
  Rig r;
  r.Apply(Plan({ScaleUp(0, 1)}));
  r.slurm.view.nodes[0] = SlurmNode("gpu1", "idle", {"CLOUD"});
  r.Apply(Plan({Release(1, "idle for 10m")}));
  EXPECT_EQ(r.Actions(), std::vector<std::string>{"drain gpu1 tide: releasing: idle for 10m"});
  EXPECT_EQ(r.provider.instances.size(), 1u);
  // Next loop: a job landed before the drain took effect: not deleted.
  r.slurm.view.nodes[0] = SlurmNode("gpu1", "mixed", {"CLOUD", "DRAIN"}, 8, "tide: releasing: idle for 10m");
  r.Advance(kNow + Seconds(10));
  EXPECT_EQ(r.provider.instances.size(), 1u);
  // Empty now: powered down in Slurm, deleted at the provider, ledger closed.
  r.slurm.view.nodes[0] = SlurmNode("gpu1", "idle", {"CLOUD", "DRAIN"}, 0, "tide: releasing: idle for 10m");
  r.Advance(kNow + Seconds(20));
  EXPECT_TRUE(r.provider.instances.empty());
  EXPECT_TRUE(r.store->Instances(false)->empty());
  EXPECT_EQ(r.Actions().back(), "power_down gpu1");
}

// A spare bought against slow boots (boot_hedge) is released while it
// boots: its slurmd has not joined, so it is cordoned and given back at once,
// its power-up stopped (POWER_DOWN_FORCE) rather than waited out.
TEST(LiveCluster, ANodeReleasedWhileBootingIsGivenBackAtOnce) {
  Rig r;
  r.Apply(Plan({ScaleUp(0, 1)}));
  r.slurm.view.nodes[0] =
      SlurmNode("gpu1", "idle", {"CLOUD", "POWERING_UP", "DRAIN"}, 0, "tide: not provisioned");
  r.Apply(Plan({Release(1, "1 booting node no job waits for (boot_hedge)")}), kNow + Seconds(30));
  EXPECT_EQ(r.Actions(), (std::vector<std::string>{
                             "drain gpu1 tide: releasing: 1 booting node no job waits for (boot_hedge)",
                             "power_down_force gpu1"}));
  EXPECT_TRUE(r.provider.instances.empty());
  EXPECT_TRUE(r.store->Instances(false)->empty());
  EXPECT_EQ(r.stats.deletes, 1);
}

// Once its slurmd answers, a node still on record as booting is released as
// any other: cordoned first, deleted on a later observation that shows it
// empty (a job may have landed on it in between).
TEST(LiveCluster, ANodeThatHasJoinedIsCordonedBeforeItIsGivenBack) {
  Rig r;
  r.Apply(Plan({ScaleUp(0, 1)}));
  r.slurm.view.nodes[0] = SlurmNode("gpu1", "idle", {"CLOUD", "DRAIN"}, 0, "");
  r.Apply(Plan({Release(1, "idle")}), kNow + Seconds(30));
  EXPECT_EQ(r.provider.instances.size(), 1u);
  EXPECT_EQ((*r.store->InstanceByNode("gpu1"))->state, "releasing");
}

// A node that is booting and was not released is opened once it joins, and
// is never given back while it boots.
TEST(LiveCluster, ABootingNodeNotReleasedIsKept) {
  Rig r;
  r.Apply(Plan({ScaleUp(0, 1)}));
  r.slurm.view.nodes[0] =
      SlurmNode("gpu1", "idle", {"CLOUD", "POWERING_UP", "DRAIN"}, 0, "tide: not provisioned");
  r.Advance(kNow + Seconds(40));
  EXPECT_EQ(r.provider.instances.size(), 1u);
  EXPECT_EQ((*r.store->InstanceByNode("gpu1"))->state, "booting");
}

TEST(LiveCluster, RefusesToReleaseWhatItDidNotBuyOrWhatRuns) {
  Rig r;
  r.slurm.view.nodes[0] = SlurmNode("gpu1", "idle", {});  // a static node: no instance
  r.Apply(Plan({Release(1, "idle")}));
  EXPECT_EQ(r.stats.refused, 1);
  EXPECT_TRUE(r.Actions().empty());
  // A node tide bought that runs a job is not released either.
  r.provider.instances = {{"i-2", "gpu2", "ondemand", "k", "running", kNow}};
  ASSERT_TRUE(r.Reconcile(kNow).ok());
  r.slurm.view.nodes[1] = SlurmNode("gpu2", "mixed", {"CLOUD"}, 8);
  r.slurm.view.jobs = {SlurmJob(7, "RUNNING", 8, {"gpu2"})};
  r.Apply(Plan({Release(2, "idle")}));
  EXPECT_EQ(r.stats.refused, 2);
  EXPECT_TRUE(r.Actions().empty());
}

TEST(LiveCluster, StopsJobsWithASignalThenRequeuesAfterTheGrace) {
  Rig r;
  r.provider.instances = {{"i-1", "gpu1", "ondemand", "k", "running", kNow}};
  ASSERT_TRUE(r.Reconcile(kNow).ok());
  r.slurm.view.nodes[0] = SlurmNode("gpu1", "allocated", {"CLOUD"}, 8);
  auto victim = SlurmJob(7, "RUNNING", 8, {"gpu1"});
  auto prot = SlurmJob(8, "RUNNING", 8, {"gpu1"});
  prot.comment = "tide:protected";
  r.slurm.view.jobs = {victim, prot};
  autoscale::Action stop;
  stop.kind = autoscale::ActionKind::kPreempt;
  stop.jobs = {7, 8};
  stop.reason = "for job 9";
  r.Apply(Plan({stop}));
  EXPECT_EQ(r.Actions(), std::vector<std::string>{"signal 7 USR1"});
  EXPECT_EQ(r.stats.refused, 1);
  EXPECT_EQ(r.memory.disruptions.size(), 1u);  // one node disrupted, counted when the stop began
  // Deciding the same again does not signal twice.
  r.Apply(Plan({stop}), kNow + Seconds(5));
  EXPECT_EQ(r.Actions().size(), 1u);
  r.Advance(kNow + Seconds(29));
  EXPECT_EQ(r.Actions().size(), 1u);
  r.Advance(kNow + Seconds(30));
  EXPECT_EQ(r.Actions().back(), "requeue 7");
  EXPECT_NEAR(*r.store->LostGpuSeconds(), 30.0 * 8, 1e-9);
  EXPECT_TRUE(r.store->PendingActions()->empty());
}

TEST(LiveCluster, ConsolidatesOnlyOffANodeItIsReleasing) {
  Rig r;
  r.provider.instances = {{"i-1", "gpu1", "ondemand", "k", "running", kNow}};
  ASSERT_TRUE(r.Reconcile(kNow).ok());
  r.slurm.view.nodes[0] = SlurmNode("gpu1", "mixed", {"CLOUD"}, 1);
  r.slurm.view.nodes[1] = SlurmNode("gpu2", "mixed", {}, 1);  // a static node: tide did not buy it
  r.slurm.view.jobs = {SlurmJob(7, "RUNNING", 1, {"gpu1"}), SlurmJob(8, "RUNNING", 1, {"gpu2"})};
  auto plan_for = [](model::NodeId node, model::JobId job) {
    autoscale::Action drain;
    drain.kind = autoscale::ActionKind::kDrain;
    drain.nodes = {node};
    drain.reason = "consolidation";
    autoscale::Action move;
    move.kind = autoscale::ActionKind::kConsolidate;
    move.nodes = {node};
    move.jobs = {job};
    move.reason = "fits on another node";
    return Plan({drain, move});
  };
  r.Apply(plan_for(2, 8));
  EXPECT_TRUE(r.Actions().empty());  // neither cordoned nor stopped
  EXPECT_EQ(r.stats.refused, 2);
  r.Apply(plan_for(1, 7));
  EXPECT_EQ(r.Actions(),
            (std::vector<std::string>{"drain gpu1 tide: releasing: consolidation", "signal 7 USR1"}));
}

TEST(LiveCluster, ProvisionedNodesAreOpenedOnceTheyJoin) {
  Rig r;
  r.Apply(Plan({ScaleUp(0, 1)}));
  // slurmd's registration with -b clears the reason and keeps the drain.
  r.slurm.view.nodes[0] = SlurmNode("gpu1", "idle", {"CLOUD", "DRAIN"}, 0, "");
  EXPECT_EQ(r.Build().state.nodes[0].state, model::NodeState::kProvisioning);
  r.Advance(kNow + Seconds(60));
  EXPECT_EQ(r.Actions(), std::vector<std::string>{"undrain gpu1"});
  r.slurm.view.nodes[0] = SlurmNode("gpu1", "idle", {"CLOUD"});
  // An admin's drain, with their own reason, is left alone.
  r.slurm.view.nodes[1] = SlurmNode("gpu2", "idle", {"CLOUD", "DRAIN"}, 0, "bad DIMM");
  r.provider.instances.push_back({"i-gpu2", "gpu2", "ondemand", "k2", "running", kNow});
  r.Advance(kNow + Seconds(70));
  EXPECT_EQ(r.Actions().size(), 1u);
  EXPECT_EQ((*r.store->InstanceByNode("gpu1"))->state, "ready");
}

TEST(LiveCluster, CordonsNodesWithoutAMachineSoTheManagerCannotStartThem) {
  Rig r;
  r.slurm.view.nodes[1] = SlurmNode("gpu2", "idle", {"CLOUD", "POWERED_DOWN"});
  r.Advance(kNow);
  EXPECT_EQ(r.Actions(), std::vector<std::string>{"drain gpu2 tide: not provisioned"});
}

// Slurm's power saving started a job on a node tide had given back (it went
// idle on suspend, before tide cordoned it again): nothing will boot it, so
// tide cordons the node and requeues the job, which never ran.
TEST(LiveCluster, RequeuesAJobTheManagerStartedOnANodeWithNoMachine) {
  Rig r;
  r.slurm.view.nodes[3] = SlurmNode("gpu4", "allocated", {"CLOUD", "POWERING_UP", "NOT_RESPONDING"}, 8);
  r.slurm.view.jobs = {SlurmJob(1, "CONFIGURING", 8, {"gpu4"})};
  r.Advance(kNow);
  EXPECT_EQ(r.Actions(), (std::vector<std::string>{"drain gpu4 tide: not provisioned", "requeue 1"}));
  EXPECT_NE(r.log.back().find("job 1 was started by the workload manager on gpu4"), std::string::npos) << r.log.back();
  // On a node tide bought and that is booting, the same job just waits.
  Rig bought;
  bought.Apply(Plan({ScaleUp(0, 1)}));
  const size_t before = bought.Actions().size();
  bought.slurm.view.nodes[0] = SlurmNode("gpu1", "allocated", {"CLOUD", "POWERING_UP", "NOT_RESPONDING"}, 8);
  bought.slurm.view.jobs = {SlurmJob(2, "CONFIGURING", 8, {"gpu1"})};
  bought.Advance(kNow + Seconds(10));
  EXPECT_EQ(bought.Actions().size(), before) << StrJoin(bought.Actions(), "\n");
}

// Found by the crash soak: Slurm's power saving powered up a node tide had
// given back (for a job, before tide cordoned it again); once the job was
// requeued the node sat POWERING_UP until ResumeTimeout, and a machine bought
// under its name meanwhile never joined. tide now stops the power-up at once
// and does not offer the name while Slurm brings it up.
TEST(LiveCluster, ANodeTheManagerBringsUpWithNoMachineIsHandedBack) {
  Rig r;
  r.slurm.view.nodes[3] =
      SlurmNode("gpu4", "idle", {"CLOUD", "POWERING_UP", "NOT_RESPONDING", "DRAIN"}, 0, "tide: not provisioned");
  r.Advance(kNow);
  EXPECT_EQ(r.Actions(), (std::vector<std::string>{"power_down_force gpu4"}));
  EXPECT_NE(r.log.back().find("node gpu4 was being brought up by the workload manager"), std::string::npos)
      << r.log.back();
  // gpu3 taken, gpu4 coming up by itself: the spot pool has no name free.
  auto name = r.backend->RegisterNode(1, {"gpu3"});
  EXPECT_EQ(name.status().code(), absl::StatusCode::kResourceExhausted) << name.status();
  // Drained by someone else: theirs, left alone.
  Rig other;
  other.slurm.view.nodes[3] =
      SlurmNode("gpu4", "idle", {"CLOUD", "POWERING_UP", "NOT_RESPONDING", "DRAIN"}, 0, "maintenance");
  other.Advance(kNow);
  EXPECT_TRUE(other.Actions().empty()) << StrJoin(other.Actions(), "\n");
}

// An idle job reclaimed once and idle again is cancelled: the decision core
// reads how often tide reclaimed it from the snapshot.
TEST(LiveCluster, RemembersIdleReclaimsForTheSnapshot) {
  Rig r;
  r.provider.instances = {{"i-1", "gpu1", "ondemand", "k", "running", kNow}};
  ASSERT_TRUE(r.Reconcile(kNow).ok());
  r.slurm.view.nodes[0] = SlurmNode("gpu1", "allocated", {"CLOUD"}, 8);
  r.slurm.view.jobs = {SlurmJob(7, "RUNNING", 8, {"gpu1"})};
  autoscale::Action reclaim;
  reclaim.kind = autoscale::ActionKind::kReclaim;
  reclaim.jobs = {7};
  reclaim.reason = "idle";
  r.Apply(Plan({reclaim}));
  EXPECT_EQ(r.Actions(), std::vector<std::string>{"signal 7 USR1"});
  EXPECT_EQ(r.Build().state.jobs[0].reclaimed, true);
}


TEST(StoreJournalTest, AReplicaThatNoLongerLeadsRecordsAndDoesNothing) {
  Rig r;
  bool leading = true;
  r.journal.set_may_act([&leading] { return leading; });
  auto key = r.journal.BeginCreate("gpu1", 0, "test", kNow);
  ASSERT_TRUE(key.ok()) << key.status();
  leading = false;
  auto refused = r.journal.BeginCreate("gpu2", 0, "test", kNow);
  EXPECT_TRUE(absl::IsAborted(refused.status())) << refused.status();
  EXPECT_NE(std::string(refused.status().message()).find("create node gpu2: this replica no longer leads"),
            std::string::npos)
      << refused.status();
  EXPECT_FALSE(IsStoreFailure(refused.status()));  // not the state file's fault
  EXPECT_TRUE(absl::IsAborted(r.journal.BeginDelete("gpu1", "i-1", 0, kNow).status()));
  apply::PendingStop stop;
  stop.job = "42";
  EXPECT_TRUE(absl::IsAborted(r.journal.BeginStop(&stop, 0, kNow).status()));
  auto pending = r.store->PendingActions();
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending->size(), 1u);  // only the create made while leading
}

}  // namespace
}  // namespace tide::controller
