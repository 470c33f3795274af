// SlurmBackend: Slurm's words in, tide's terms out, and each verb as the
// Slurm command it runs.
#include "backends/slurm/slurm_backend.h"

#include "config/config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/fake_slurm.h"

namespace tide::backends {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using tide::testing::FakeSlurm;
using tide::testing::SlurmJob;
using tide::testing::SlurmNode;

// Two pools of two 8-GPU nodes each: ondemand gpu[1-2], spot gpu[3-4].
config::Config TwoPools() {
  auto c = config::ParseConfig(R"(
pools:
  - {name: ondemand, instance_type: {gpus: 8}, price_per_hour: 32, max_nodes: 2}
  - {name: spot, instance_type: {gpus: 8}, tier: spot, price_per_hour: 10, max_nodes: 2}
priority_classes:
  - {name: normal, value: 50}
live:
  slurm:
    pools: {ondemand: "gpu[1-2]", spot: "gpu[3-4]"}
)",
                               "test.yaml");
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

std::string Msg(const Status& s) { return std::string(Message(s)); }

TEST(SlurmBackendOptions, ListEachPoolsNodesInOrder) {
  auto o = SlurmBackendOptionsFor(TwoPools());
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_THAT(o->pool_hosts, ElementsAre(ElementsAre("gpu1", "gpu2"), ElementsAre("gpu3", "gpu4")));
  EXPECT_EQ(o->protect_marker, "tide:protected");
  EXPECT_EQ(o->checkpoint_signal, "USR1");
}

TEST(SlurmBackendOptions, RejectANodeInTwoPoolsAndTooFewNodes) {
  auto cfg = TwoPools();
  cfg.live.slurm.pool_nodes[1].second = "gpu[2-3]";
  auto s = SlurmBackendOptionsFor(cfg);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(Msg(s.status()), HasSubstr("'gpu2' is already in pool 'ondemand'"));
  cfg = TwoPools();
  cfg.live.slurm.pool_nodes[0].second = "gpu1";
  s = SlurmBackendOptionsFor(cfg);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(Msg(s.status()), HasSubstr("max_nodes"));
  EXPECT_THAT(Msg(s.status()), HasSubstr("test.yaml: live.slurm.pools.ondemand"));
  cfg.live.slurm.pool_nodes[0].second = "gpu[1-";
  EXPECT_FALSE(SlurmBackendOptionsFor(cfg).ok());
}

TEST(SlurmDrainReasons, RoundTrip) {
  EXPECT_EQ(SlurmDrainReason({Cause::kNotBought, "x"}), "tide: not provisioned");
  EXPECT_EQ(SlurmDrainReason({Cause::kRelease, "idle for 10m"}), "tide: releasing: idle for 10m");
  EXPECT_EQ(SlurmDrainReason({Cause::kDrain, "line one\nline two"}), "tide: releasing: line one line two");
  EXPECT_EQ(SlurmDrainReason({Cause::kRelease, std::string(200, 'x')}).size(), 120u);
  EXPECT_EQ(CauseOfDrainReason(""), Cause::kNotBought);  // slurmd -b registration clears it
  EXPECT_EQ(CauseOfDrainReason("tide: not provisioned"), Cause::kNotBought);
  EXPECT_EQ(CauseOfDrainReason("tide: releasing: idle"), Cause::kRelease);
  EXPECT_EQ(CauseOfDrainReason("tide: spot interruption notice"), Cause::kDrain);
  EXPECT_EQ(CauseOfDrainReason("bad DIMM"), Cause::kOther);
}

struct NodeCase {
  std::string name;
  backends::SlurmNode node;
  NodeCondition condition;
  Cause cordon;
};

class SlurmNodeConditionTest : public ::testing::TestWithParam<NodeCase> {};

TEST_P(SlurmNodeConditionTest, InTideTerms) {
  SlurmView v;
  v.nodes = {GetParam().node};
  const Observation o = Translate(v, *SlurmBackendOptionsFor(TwoPools()));
  ASSERT_EQ(o.nodes.size(), 1u);
  EXPECT_EQ(o.nodes[0].condition, GetParam().condition) << NodeConditionName(o.nodes[0].condition);
  EXPECT_EQ(o.nodes[0].cordon, GetParam().cordon) << CauseName(o.nodes[0].cordon);
  EXPECT_EQ(o.nodes[0].pool, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SlurmNodeConditionTest,
    ::testing::Values(
        NodeCase{"NotBought", SlurmNode("gpu1", "idle", {"CLOUD", "POWERED_DOWN", "DRAIN"}, 0, "tide: not provisioned"),
                 NodeCondition::kGone, Cause::kNotBought},
        NodeCase{"PoweringUp", SlurmNode("gpu1", "idle", {"CLOUD", "POWERING_UP", "DRAIN"}, 0, "tide: not provisioned"),
                 NodeCondition::kBooting, Cause::kNotBought},
        NodeCase{"Future", SlurmNode("gpu1", "future", {"CLOUD"}), NodeCondition::kBooting, Cause::kNone},
        NodeCase{"Down", SlurmNode("gpu1", "down", {"CLOUD"}), NodeCondition::kGone, Cause::kNone},
        NodeCase{"NotResponding", SlurmNode("gpu1", "idle", {"NOT_RESPONDING"}), NodeCondition::kGone, Cause::kNone},
        NodeCase{"JoinedNotOpened", SlurmNode("gpu1", "idle", {"CLOUD", "DRAIN"}, 0, ""), NodeCondition::kCordoned,
                 Cause::kNotBought},
        NodeCase{"Ready", SlurmNode("gpu1", "idle", {"CLOUD"}), NodeCondition::kReady, Cause::kNone},
        NodeCase{"Releasing", SlurmNode("gpu1", "mixed", {"CLOUD", "DRAIN"}, 4, "tide: releasing: idle"),
                 NodeCondition::kDraining, Cause::kRelease},
        NodeCase{"AdminDrain", SlurmNode("gpu1", "idle", {"DRAIN"}, 0, "bad DIMM"), NodeCondition::kCordoned,
                 Cause::kOther}),
    [](const auto& info) { return info.param.name; });

TEST(SlurmTranslate, PoolNodesComeFirstInHostListOrder) {
  SlurmView v;
  v.nodes = {SlurmNode("cpu1", "idle"), SlurmNode("gpu4", "idle"), SlurmNode("gpu1", "idle")};
  const Observation o = Translate(v, *SlurmBackendOptionsFor(TwoPools()));
  ASSERT_EQ(o.nodes.size(), 3u);
  EXPECT_EQ(o.nodes[0].name, "gpu1");
  EXPECT_EQ(o.nodes[1].name, "gpu4");
  EXPECT_EQ(o.nodes[1].pool, 1);
  EXPECT_EQ(o.nodes[2].name, "cpu1");
  EXPECT_EQ(o.nodes[2].pool, -1);
}

TEST(SlurmTranslate, JobsInTideTerms) {
  SlurmView v;
  auto spot_node = SlurmNode("gpu3", "idle");
  spot_node.partitions = {"scavenge"};
  v.nodes = {SlurmNode("gpu1", "mixed", {}, 8), spot_node};
  auto running = SlurmJob(7, "RUNNING", 8, {"gpu1"});
  running.qos = "high";
  running.account = "ml";
  running.user = "ana";
  running.comment = "final eval tide:protected";
  auto held = SlurmJob(8, "PENDING", 8);
  held.state_reason = "JobHeldUser";
  auto wide = SlurmJob(9, "PENDING", 24, {}, "gpu,scavenge");  // one "node" of 24 GPUs: three nodes of 8
  auto elsewhere = SlurmJob(10, "PENDING", 8, {}, "cpu");
  auto ending = SlurmJob(11, "COMPLETING", 8, {"gpu1"});
  v.jobs = {running, held, wide, elsewhere, ending};
  const Observation o = Translate(v, *SlurmBackendOptionsFor(TwoPools()));
  ASSERT_EQ(o.jobs.size(), 5u);
  const ObservedJob& r = o.jobs[0];
  EXPECT_EQ(r.key, "7");
  EXPECT_EQ(r.phase, JobPhase::kRunning);
  EXPECT_TRUE(r.is_protected);
  EXPECT_THAT(r.attributes, ElementsAre(std::pair<std::string, std::string>{"partition", "gpu"},
                                        std::pair<std::string, std::string>{"qos", "high"},
                                        std::pair<std::string, std::string>{"account", "ml"},
                                        std::pair<std::string, std::string>{"user", "ana"}));
  EXPECT_EQ(r.pools, PoolSet{1});  // partition gpu holds a node of pool 0 only
  EXPECT_EQ(r.team, "ana");
  EXPECT_EQ(o.jobs[1].phase, JobPhase::kHeld);
  EXPECT_EQ(o.jobs[1].waits_for, "JobHeldUser");
  EXPECT_EQ(o.jobs[2].phase, JobPhase::kWaiting);
  EXPECT_EQ(o.jobs[2].workers, 3);
  EXPECT_EQ(o.jobs[2].gpus_per_worker, 8);
  EXPECT_EQ(o.jobs[2].pools, PoolSet{3});  // gpu and scavenge: both pools
  EXPECT_EQ(o.jobs[3].pools, PoolSet{0});  // no pool node in partition cpu
  EXPECT_EQ(o.jobs[4].phase, JobPhase::kStopping);
  EXPECT_TRUE(o.nodes[0].busy);
}

struct VerbCase {
  std::string name;
  std::function<Status(SlurmBackend&)> verb;
  std::vector<std::string> actions;
};

class SlurmVerbTest : public ::testing::TestWithParam<VerbCase> {};

// Slurm lists node gpu3, running job 42.
FakeSlurm WithJob42OnGpu3() {
  FakeSlurm slurm;
  slurm.view.nodes = {SlurmNode("gpu3", "allocated", {"CLOUD"}, 8)};
  slurm.view.jobs = {SlurmJob(42, "RUNNING", 8, {"gpu3"})};
  return slurm;
}

TEST_P(SlurmVerbTest, RunsItsCommand) {
  FakeSlurm slurm = WithJob42OnGpu3();
  SlurmBackend b(*SlurmBackendOptionsFor(TwoPools()), &slurm);
  ASSERT_TRUE(b.Observe().ok());
  ASSERT_TRUE(GetParam().verb(b).ok());
  EXPECT_EQ(slurm.Actions(), GetParam().actions);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SlurmVerbTest,
    ::testing::Values(
        VerbCase{"Cordon", [](SlurmBackend& b) { return b.Cordon("gpu3", {Cause::kRelease, "idle 10m"}); },
                 {"drain gpu3 tide: releasing: idle 10m"}},
        VerbCase{"CordonNotBought", [](SlurmBackend& b) { return b.Cordon("gpu3", {Cause::kNotBought, ""}); },
                 {"drain gpu3 tide: not provisioned"}},
        VerbCase{"Uncordon", [](SlurmBackend& b) { return b.Uncordon("gpu3"); }, {"undrain gpu3"}},
        VerbCase{"Checkpoint", [](SlurmBackend& b) { return b.Checkpoint("42"); }, {"signal 42 USR1"}},
        VerbCase{"Requeue", [](SlurmBackend& b) { return b.Requeue("42"); }, {"requeue 42"}},
        VerbCase{"Cancel", [](SlurmBackend& b) { return b.Cancel("42", Seconds(30), {}); }, {"cancel 42"}},
        VerbCase{"RemoveNode", [](SlurmBackend& b) { return b.RemoveNode("gpu3"); }, {"power_down gpu3"}}),
    [](const auto& info) { return info.param.name; });

TEST(SlurmBackend, SaysWhatItCannotDo) {
  FakeSlurm slurm;
  SlurmBackend b(*SlurmBackendOptionsFor(TwoPools()), &slurm);
  const Capabilities& caps = b.capabilities();
  EXPECT_TRUE(caps.schedules_itself);
  EXPECT_TRUE(caps.checkpoint);
  EXPECT_FALSE(caps.evict);
  EXPECT_EQ(b.Evict("42", Seconds(30), {}).code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(b.Bind("42", {{"gpu1", 1}}, {}).code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(b.Resize("42", {}, {}).code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(b.Requeue("job-7").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(slurm.Actions().empty());
}

// scontrol and scancel fail on a node or job slurmctld does not have like on
// anything else (Unavailable: retry); the backend says NotFound instead, by
// the last observation, and runs nothing.
TEST(SlurmBackend, VerbsOnWhatSlurmDoesNotListAreNotFound) {
  FakeSlurm slurm = WithJob42OnGpu3();
  SlurmBackend b(*SlurmBackendOptionsFor(TwoPools()), &slurm);
  ASSERT_TRUE(b.Observe().ok());
  EXPECT_EQ(b.Cordon("gpu4", {Cause::kRelease, ""}).code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(b.Uncordon("gpu4").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(b.RemoveNode("gpu4").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(b.Checkpoint("43").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(b.Requeue("43").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(b.Cancel("43", Seconds(30), {}).code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(slurm.Actions().empty());
}

TEST(SlurmBackend, RegistersTheFirstFreeNodeOfThePool) {
  FakeSlurm slurm;
  for (const char* n : {"gpu1", "gpu2", "gpu3", "gpu4"}) {
    slurm.view.nodes.push_back(SlurmNode(n, "idle", {"CLOUD", "POWERED_DOWN", "DRAIN"}, 0, "tide: not provisioned"));
  }
  slurm.view.nodes[2] = SlurmNode("gpu3", "idle", {});  // a static node answers: not tide's to buy
  SlurmBackend b(*SlurmBackendOptionsFor(TwoPools()), &slurm);
  ASSERT_TRUE(b.Observe().ok());
  EXPECT_EQ(*b.RegisterNode(0, {}), "gpu1");
  EXPECT_EQ(*b.RegisterNode(0, {"gpu1"}), "gpu2");
  EXPECT_EQ(*b.RegisterNode(1, {}), "gpu4");
  auto none = b.RegisterNode(0, {"gpu1", "gpu2"});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(Msg(none.status()), HasSubstr("live.slurm.pools.ondemand"));
}

}  // namespace
}  // namespace tide::backends
