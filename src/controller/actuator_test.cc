#include "controller/actuator.h"

#include "controller/fakes_test.h"
#include "controller/live_cost.h"
#include "gtest/gtest.h"

namespace tide::controller {
namespace {

using testing::SlurmJob;
using testing::SlurmNode;
const Timestamp kNow = FromUnixSeconds(1'800'000'200);

struct Rig {
  config::Config cfg = testing::TwoPools();
  std::vector<Slot> slots = *MapSlots(cfg);
  testing::FakeBackend backend;
  testing::FakeProvider provider;
  std::unique_ptr<Store> store = *Store::Open(":memory:");
  Memory memory;
  std::vector<std::string> log;
  Actuator act{cfg, slots, &backend, &provider, store.get(), &memory, [this](const std::string& l) { log.push_back(l); }};
  ActStats stats;

  Rig() {
    for (int i = 1; i <= 4; ++i) {
      backend.obs.nodes.push_back(SlurmNode(StrCat("gpu", i), "idle", {"CLOUD", "POWERED_DOWN", "DRAIN"}, 0,
                                            "tide: not provisioned"));
    }
  }
  Built Build() {
    auto inst = *provider.List(kNow);
    return BuildState(cfg, slots, backend.obs, inst, provider.notices, &memory, nullptr, kNow);
  }
};

autoscale::Action ScaleUp(int pool, int count) {
  autoscale::Action a;
  a.kind = autoscale::ActionKind::kScaleUp;
  a.pool = pool;
  a.count = count;
  a.jobs = {1, 2};
  a.reason = "4 pending GPU jobs";
  return a;
}

TEST(Actuator, RecordsACreateBeforeCallingTheProvider) {
  Rig r;
  bool recorded = false;
  r.provider.on_create = [&](const providers::CreateRequest& req) {
    auto a = r.store->GetAction(req.idempotency_key);
    recorded = a.ok() && a->has_value() && (*a)->state == "pending";
  };
  Built b = r.Build();
  r.act.Apply({{ScaleUp(1, 2)}}, b, r.backend.obs, kNow, &r.stats);
  EXPECT_TRUE(recorded);
  EXPECT_EQ(r.stats.creates, 2);
  auto inst = *r.store->Instances(false);
  ASSERT_EQ(inst.size(), 2u);
  EXPECT_EQ(inst[0].tier, model::Tier::kSpot);
  EXPECT_TRUE(r.store->PendingActions()->empty());
  EXPECT_TRUE(r.backend.Actions().empty());  // no POWER_UP: the slurmd registers itself
}

TEST(Actuator, NeverBuysMoreThanThePoolHasSlotsAndNotTwiceInOnePlan) {
  Rig r;
  Built b = r.Build();
  r.act.Apply({{ScaleUp(0, 1), ScaleUp(0, 5)}}, b, r.backend.obs, kNow, &r.stats);
  EXPECT_EQ(r.stats.creates, 2);
  EXPECT_EQ(r.provider.instances.size(), 2u);
}

TEST(Actuator, AFailedCreateMarksThePoolAndBuysNothing) {
  Rig r;
  r.provider.next_error = absl::UnavailableError("no capacity");
  Built b = r.Build();
  r.act.Apply({{ScaleUp(1, 1)}}, b, r.backend.obs, kNow, &r.stats);
  EXPECT_EQ(r.stats.creates, 0);
  EXPECT_EQ(r.stats.errors, 1);
  EXPECT_TRUE(r.memory.pool_unavailable.count(1));
  EXPECT_TRUE(r.store->Instances(false)->empty());
  EXPECT_TRUE(r.store->PendingActions()->empty());
}

TEST(Actuator, ReconcileAdoptsOrAbandonsWhatWasInFlight) {
  Rig r;
  ASSERT_TRUE(r.store->BeginAction({"k-a", "create", "gpu1", "", "ondemand", "pending", kNow, kNow, ""}).ok());
  ASSERT_TRUE(r.store->BeginAction({"k-b", "create", "gpu2", "", "ondemand", "pending", kNow, kNow, ""}).ok());
  r.provider.instances = {{"i-1", "gpu1", "ondemand", "k-a", "running", kNow},
                          {"i-9", "gpu3", "spot", "", "running", kNow}};  // unknown to the store
  ASSERT_TRUE(r.act.Reconcile(r.provider.instances, kNow, &r.stats).ok());
  EXPECT_EQ((*r.store->GetAction("k-a"))->state, "done");
  EXPECT_EQ((*r.store->GetAction("k-b"))->state, "abandoned");
  auto inst = *r.store->Instances(false);
  ASSERT_EQ(inst.size(), 2u);
  // The provider loses one: closed as lost, counted as a spot interruption.
  r.provider.instances.pop_back();
  ASSERT_TRUE(r.act.Reconcile(r.provider.instances, kNow + Seconds(3600), &r.stats).ok());
  EXPECT_EQ(r.store->Instances(false)->size(), 1u);
  EXPECT_EQ(*r.store->Counter("spot_interruptions"), 1);
  EXPECT_NEAR(LiveCost(r.store.get(), kNow + Seconds(3600))->spot, 10.0, 1e-9);
}

TEST(Actuator, ReleaseDrainsFirstAndDeletesOnlyWhenEmpty) {
  Rig r;
  Built b0 = r.Build();
  r.act.Apply({{ScaleUp(0, 1)}}, b0, r.backend.obs, kNow, &r.stats);
  r.backend.obs.nodes[0] = SlurmNode("gpu1", "idle", {"CLOUD"});
  Built b = r.Build();
  autoscale::Action rel;
  rel.kind = autoscale::ActionKind::kRelease;
  rel.nodes = {1};
  rel.reason = "idle for 10m";
  r.act.Apply({{rel}}, b, r.backend.obs, kNow, &r.stats);
  EXPECT_EQ(r.backend.Actions(), std::vector<std::string>{"drain gpu1 tide: releasing: idle for 10m"});
  EXPECT_EQ(r.provider.instances.size(), 1u);
  // Next loop: a job landed before the drain took effect: not deleted.
  r.backend.obs.nodes[0] = SlurmNode("gpu1", "mixed", {"CLOUD", "DRAIN"}, 8, "tide: releasing: idle for 10m");
  r.act.Advance(r.backend.obs, r.provider.instances, r.Build(), kNow + Seconds(10), &r.stats);
  EXPECT_EQ(r.provider.instances.size(), 1u);
  // Empty now: powered down in Slurm, deleted at the provider, ledger closed.
  r.backend.obs.nodes[0] = SlurmNode("gpu1", "idle", {"CLOUD", "DRAIN"}, 0, "tide: releasing: idle for 10m");
  r.act.Advance(r.backend.obs, r.provider.instances, r.Build(), kNow + Seconds(20), &r.stats);
  EXPECT_TRUE(r.provider.instances.empty());
  EXPECT_TRUE(r.store->Instances(false)->empty());
  EXPECT_EQ(r.backend.Actions().back(), "power_down gpu1");
}

// A spare bought against slow boots (boot_hedge) is released while it
// boots: its slurmd has not joined, so it is drained and given back at once.
TEST(Actuator, ANodeReleasedWhileBootingIsGivenBackAtOnce) {
  Rig r;
  r.act.Apply({{ScaleUp(0, 1)}}, r.Build(), r.backend.obs, kNow, &r.stats);
  r.backend.obs.nodes[0] = SlurmNode("gpu1", "idle", {"CLOUD", "POWERING_UP", "DRAIN"}, 0, "tide: not provisioned");
  autoscale::Action rel;
  rel.kind = autoscale::ActionKind::kRelease;
  rel.nodes = {1};
  rel.reason = "1 booting node no job waits for (boot_hedge)";
  r.act.Apply({{rel}}, r.Build(), r.backend.obs, kNow + Seconds(30), &r.stats);
  EXPECT_EQ(r.backend.Actions(), (std::vector<std::string>{
                                     "drain gpu1 tide: releasing: 1 booting node no job waits for (boot_hedge)",
                                     "power_down gpu1"}));
  EXPECT_TRUE(r.provider.instances.empty());
  EXPECT_TRUE(r.store->Instances(false)->empty());
  EXPECT_EQ(r.stats.deletes, 1);
}

// Once its slurmd answers, a node still on record as booting is released as
// any other: drained first, deleted on a later observation that shows it
// empty (a job may have landed on it in between).
TEST(Actuator, ANodeThatHasJoinedIsDrainedBeforeItIsGivenBack) {
  Rig r;
  r.act.Apply({{ScaleUp(0, 1)}}, r.Build(), r.backend.obs, kNow, &r.stats);
  r.backend.obs.nodes[0] = SlurmNode("gpu1", "idle", {"CLOUD", "DRAIN"}, 0, "");
  autoscale::Action rel;
  rel.kind = autoscale::ActionKind::kRelease;
  rel.nodes = {1};
  rel.reason = "idle";
  r.act.Apply({{rel}}, r.Build(), r.backend.obs, kNow + Seconds(30), &r.stats);
  EXPECT_EQ(r.provider.instances.size(), 1u);
  EXPECT_EQ((*r.store->InstanceByNode("gpu1"))->state, "releasing");
}

// A node that is booting and was not released is opened once it joins, and
// is never given back while it boots.
TEST(Actuator, ABootingNodeNotReleasedIsKept) {
  Rig r;
  r.act.Apply({{ScaleUp(0, 1)}}, r.Build(), r.backend.obs, kNow, &r.stats);
  r.backend.obs.nodes[0] = SlurmNode("gpu1", "idle", {"CLOUD", "POWERING_UP", "DRAIN"}, 0, "tide: not provisioned");
  r.act.Advance(r.backend.obs, r.provider.instances, r.Build(), kNow + Seconds(40), &r.stats);
  EXPECT_EQ(r.provider.instances.size(), 1u);
  EXPECT_EQ((*r.store->InstanceByNode("gpu1"))->state, "booting");
}

TEST(Actuator, RefusesToReleaseWhatItDidNotBuyOrWhatRuns) {
  Rig r;
  r.backend.obs.nodes[0] = SlurmNode("gpu1", "idle", {});  // a static node: no instance
  Built b = r.Build();
  autoscale::Action rel;
  rel.kind = autoscale::ActionKind::kRelease;
  rel.nodes = {1};
  r.act.Apply({{rel}}, b, r.backend.obs, kNow, &r.stats);
  EXPECT_EQ(r.stats.refused, 1);
  EXPECT_TRUE(r.backend.Actions().empty());
}

TEST(Actuator, StopsJobsWithASignalThenRequeuesAfterTheGrace) {
  Rig r;
  r.provider.instances = {{"i-1", "gpu1", "ondemand", "k", "running", kNow}};
  ASSERT_TRUE(r.act.Reconcile(r.provider.instances, kNow, &r.stats).ok());
  r.backend.obs.nodes[0] = SlurmNode("gpu1", "allocated", {"CLOUD"}, 8);
  auto victim = SlurmJob(7, "RUNNING", 8, {"gpu1"});
  auto prot = SlurmJob(8, "RUNNING", 8, {"gpu1"});
  prot.comment = "tide:protected";
  r.backend.obs.jobs = {victim, prot};
  Built b = r.Build();
  autoscale::Action stop;
  stop.kind = autoscale::ActionKind::kPreempt;
  stop.jobs = {7, 8};
  stop.reason = "for job 9";
  r.act.Apply({{stop}}, b, r.backend.obs, kNow, &r.stats);
  EXPECT_EQ(r.backend.Actions(), std::vector<std::string>{"signal 7 USR1"});
  EXPECT_EQ(r.stats.refused, 1);
  // Deciding the same again does not signal twice.
  r.act.Apply({{stop}}, r.Build(), r.backend.obs, kNow + Seconds(5), &r.stats);
  EXPECT_EQ(r.backend.Actions().size(), 1u);
  r.act.Advance(r.backend.obs, r.provider.instances, r.Build(), kNow + Seconds(29), &r.stats);
  EXPECT_EQ(r.backend.Actions().size(), 1u);
  r.act.Advance(r.backend.obs, r.provider.instances, r.Build(), kNow + Seconds(30), &r.stats);
  EXPECT_EQ(r.backend.Actions().back(), "requeue 7");
  EXPECT_NEAR(*r.store->LostGpuSeconds(), 30.0 * 8, 1e-9);
  EXPECT_TRUE(r.store->PendingActions()->empty());
}

TEST(Actuator, ConsolidatesOnlyOffANodeItIsReleasing) {
  Rig r;
  r.provider.instances = {{"i-1", "gpu1", "ondemand", "k", "running", kNow}};
  ASSERT_TRUE(r.act.Reconcile(r.provider.instances, kNow, &r.stats).ok());
  r.backend.obs.nodes[0] = SlurmNode("gpu1", "mixed", {"CLOUD"}, 1);
  r.backend.obs.nodes[1] = SlurmNode("gpu2", "mixed", {}, 1);  // a static node: tide did not buy it
  r.backend.obs.jobs = {SlurmJob(7, "RUNNING", 1, {"gpu1"}), SlurmJob(8, "RUNNING", 1, {"gpu2"})};
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
    return autoscale::ScalingPlan{{drain, move}};
  };
  r.act.Apply(plan_for(2, 8), r.Build(), r.backend.obs, kNow, &r.stats);
  EXPECT_TRUE(r.backend.Actions().empty());  // neither drained nor stopped
  EXPECT_EQ(r.stats.refused, 2);
  r.act.Apply(plan_for(1, 7), r.Build(), r.backend.obs, kNow, &r.stats);
  EXPECT_EQ(r.backend.Actions(), (std::vector<std::string>{"drain gpu1 tide: releasing: consolidation", "signal 7 USR1"}));
}

TEST(Actuator, ProvisionedNodesAreOpenedOnceTheyJoin) {
  Rig r;
  r.act.Apply({{ScaleUp(0, 1)}}, r.Build(), r.backend.obs, kNow, &r.stats);
  // slurmd's registration with -b clears the reason and keeps the drain.
  r.backend.obs.nodes[0] = SlurmNode("gpu1", "idle", {"CLOUD", "DRAIN"}, 0, "");
  EXPECT_EQ(r.Build().state.nodes[0].state, model::NodeState::kProvisioning);
  r.act.Advance(r.backend.obs, r.provider.instances, r.Build(), kNow + Seconds(60), &r.stats);
  EXPECT_EQ(r.backend.Actions(), std::vector<std::string>{"undrain gpu1"});
  r.backend.obs.nodes[0] = SlurmNode("gpu1", "idle", {"CLOUD"});
  // An admin's drain, with their own reason, is left alone.
  r.backend.obs.nodes[1] = SlurmNode("gpu2", "idle", {"CLOUD", "DRAIN"}, 0, "bad DIMM");
  r.provider.instances.push_back({"i-gpu2", "gpu2", "ondemand", "k2", "running", kNow});
  r.act.Advance(r.backend.obs, r.provider.instances, r.Build(), kNow + Seconds(70), &r.stats);
  EXPECT_EQ(r.backend.Actions().size(), 1u);
  EXPECT_EQ((*r.store->InstanceByNode("gpu1"))->state, "ready");
}

TEST(Actuator, DrainsSlotsWithoutAnInstanceSoSlurmCannotResumeThem) {
  Rig r;
  r.backend.obs.nodes[1] = SlurmNode("gpu2", "idle", {"CLOUD", "POWERED_DOWN"});
  r.act.Advance(r.backend.obs, r.provider.instances, r.Build(), kNow, &r.stats);
  EXPECT_EQ(r.backend.Actions(), std::vector<std::string>{"drain gpu2 tide: not provisioned"});
}

}  // namespace
}  // namespace tide::controller
