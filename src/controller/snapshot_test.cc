#include "controller/snapshot.h"

#include "controller/fakes_test.h"
#include "gtest/gtest.h"

namespace tide::controller {
namespace {

using testing::SlurmJob;
using testing::SlurmNode;
const Timestamp kNow = FromUnixSeconds(1'800'000'200);

// The snapshot of what Slurm shows (through the Slurm backend's own
// translation into tide's terms).
struct World {
  config::Config cfg = testing::TwoPools();
  backends::SlurmView view;
  backends::Observation obs;
  std::vector<providers::Instance> instances;
  std::vector<providers::Interruption> notices;
  Memory memory;
  Built Build() {
    obs = backends::Translate(view, *backends::SlurmBackendOptionsFor(cfg));
    return BuildSnapshot(cfg, obs, instances, notices, &memory, nullptr, kNow);
  }
};

// One Slurm job as the backend reports it.
backends::ObservedJob Observed(const config::Config& cfg, const backends::SlurmJob& j) {
  backends::SlurmView v;
  v.jobs = {j};
  return backends::Translate(v, *backends::SlurmBackendOptionsFor(cfg)).jobs[0];
}

TEST(BuildSnapshot, NodesFollowTheLifeCycle) {
  World w;
  w.view.nodes = {SlurmNode("gpu1", "idle", {"CLOUD", "POWERED_DOWN", "DRAIN"}, 0, "tide: not provisioned"),
                 SlurmNode("gpu2", "idle", {"CLOUD", "POWERED_DOWN", "DRAIN"}, 0, "tide: not provisioned"),
                 SlurmNode("gpu3", "idle", {"CLOUD", "DRAIN"}, 0, "tide: not provisioned"),
                 SlurmNode("gpu4", "mixed", {"CLOUD"}, 4)};
  w.instances = {{"i-2", "gpu2", "ondemand", "k2", "pending", kNow - Seconds(10)},
                 {"i-3", "gpu3", "spot", "k3", "running", kNow - Seconds(100)},
                 {"i-4", "gpu4", "spot", "k4", "running", kNow - Seconds(500)}};
  w.notices = {{"i-4", "gpu4", kNow + Seconds(30)}};
  Built b = w.Build();
  ASSERT_EQ(b.state.nodes.size(), 3u);  // gpu1 has no instance: a free slot, not a node
  EXPECT_EQ(b.free_names[0], 1);
  const auto& gpu2 = b.state.nodes[0];
  EXPECT_EQ(gpu2.name, "gpu2");
  EXPECT_EQ(gpu2.state, model::NodeState::kProvisioning);
  EXPECT_EQ(gpu2.ready_at, kNow - Seconds(10) + Seconds(60));
  // Joined but not yet opened: still provisioning, expected now.
  EXPECT_EQ(b.state.nodes[1].state, model::NodeState::kProvisioning);
  EXPECT_EQ(b.state.nodes[1].ready_at, kNow);
  const auto& gpu4 = b.state.nodes[2];
  EXPECT_EQ(gpu4.state, model::NodeState::kReady);
  EXPECT_EQ(gpu4.free_gpus, 4);
  EXPECT_EQ(gpu4.interrupt_at, kNow + Seconds(30));
}

TEST(BuildSnapshot, IdleTimersStartAtTheFirstIdleObservation) {
  World w;
  w.view.nodes = {SlurmNode("gpu1", "idle", {"CLOUD"})};
  w.instances = {{"i-1", "gpu1", "ondemand", "k1", "running", kNow - Seconds(300)}};
  Built b = w.Build();
  EXPECT_EQ(b.state.nodes[0].idle_since, kNow);
  w.memory.idle_since["gpu1"] = kNow - Seconds(90);
  b = w.Build();
  EXPECT_EQ(b.state.nodes[0].idle_since, kNow - Seconds(90));
  // A job on it (even before gres_used shows it) ends the idle time.
  w.view.jobs = {SlurmJob(5, "RUNNING", 8, {"gpu1"})};
  b = w.Build();
  EXPECT_EQ(b.state.nodes[0].idle_since, kInfiniteFuture);
  EXPECT_FALSE(w.memory.idle_since.count("gpu1"));
}

TEST(BuildSnapshot, ANodeNamedTwiceHoldsTwoWorkers) {
  World w;
  w.view.nodes = {SlurmNode("gpu3", "mixed", {"CLOUD"}, 8), SlurmNode("gpu4", "mixed", {"CLOUD"}, 4)};
  w.instances = {{"i-3", "gpu3", "spot", "k3", "running", kNow - Seconds(500)},
                 {"i-4", "gpu4", "spot", "k4", "running", kNow - Seconds(500)}};
  w.obs = backends::Translate(w.view, *backends::SlurmBackendOptionsFor(w.cfg));
  // A gang of three pods as the Kubernetes backend reports it: two on gpu3.
  backends::ObservedJob j;
  j.key = "ml/llm";
  j.phase = backends::JobPhase::kRunning;
  j.workers = 3;
  j.gpus_per_worker = 4;
  j.nodes = {"gpu3", "gpu3", "gpu4"};
  j.start = kNow - Seconds(60);
  w.obs.jobs.push_back(j);
  Built b = BuildSnapshot(w.cfg, w.obs, w.instances, w.notices, &w.memory, nullptr, kNow);
  ASSERT_EQ(b.state.jobs.size(), 1u);
  const auto& alloc = b.state.jobs[0].alloc;
  ASSERT_EQ(alloc.size(), 2u);
  EXPECT_EQ(alloc[0].workers, 2);
  EXPECT_EQ(alloc[1].workers, 1);
}

TEST(BuildSnapshot, JobsBecomeDemandOnlyWhenTheyWaitForCapacity) {
  World w;
  w.view.nodes = {SlurmNode("gpu1", "idle", {"CLOUD", "POWERED_DOWN", "DRAIN"}, 0, "tide: not provisioned")};
  auto held = SlurmJob(2, "PENDING", 8);
  held.state_reason = "JobHeldUser";
  auto cpu = SlurmJob(3, "PENDING", 0);
  auto other = SlurmJob(4, "PENDING", 8, {}, "cpu-only");
  auto high = SlurmJob(5, "PENDING", 8, {}, "high");
  high.partition = "gpu";
  auto prot = SlurmJob(6, "PENDING", 2);
  prot.comment = "final eval tide:protected";
  auto gang = SlurmJob(7, "PENDING", 8);
  gang.node_count = 3;
  gang.gpus = 24;
  w.view.jobs = {SlurmJob(1, "PENDING", 4), held, cpu, other, high, prot, gang};
  Built b = w.Build();
  std::vector<int64_t> ids;
  for (const auto& j : b.state.jobs) ids.push_back(j.id);
  EXPECT_EQ(ids, (std::vector<int64_t>{1, 5, 6, 7}));
  EXPECT_EQ(b.skipped.size(), 3u);
  EXPECT_TRUE(b.state.jobs[2].spec.is_protected);
  EXPECT_FALSE(b.state.jobs[0].spec.is_protected);
  EXPECT_EQ(b.state.jobs[3].spec.workers, 3);
  EXPECT_EQ(b.state.jobs[3].spec.gpus_per_worker, 8);
}

TEST(BuildSnapshot, ClassesComeFromPartitionRules) {
  auto cfg = testing::TwoPools();
  auto j = SlurmJob(1, "PENDING", 8, {}, "high");
  EXPECT_EQ(cfg.cluster.priority_classes[ClassOf(cfg, Observed(cfg, j))].name, "high");
  j.partition = "gpu";
  EXPECT_EQ(cfg.cluster.priority_classes[ClassOf(cfg, Observed(cfg, j))].name, "normal");
  cfg.cluster.priority_classes[2].protect = true;
  cfg.live.jobs.classes.push_back({{{"qos", "scavenger"}}, "low", "test.yaml: live.jobs.classes[1]"});
  j.qos = "scavenger";
  EXPECT_TRUE(IsProtected(cfg, Observed(cfg, j)));
}

TEST(BuildSnapshot, ClassRuleMatchesWhenEveryPairMatches) {
  auto cfg = testing::TwoPools();
  cfg.live.jobs.classes = {{{{"partition", "gpu"}, {"qos", "scavenger"}}, "low", "t.yaml: live.jobs.classes[0]"},
                           {{{"account", "ml"}}, "high", "t.yaml: live.jobs.classes[1]"}};
  auto j = SlurmJob(1, "PENDING", 8, {}, "gpu");
  EXPECT_EQ(cfg.cluster.priority_classes[ClassOf(cfg, Observed(cfg, j))].name, "normal");  // qos differs
  j.qos = "scavenger";
  EXPECT_EQ(cfg.cluster.priority_classes[ClassOf(cfg, Observed(cfg, j))].name, "low");
  j.partition = "high";
  EXPECT_EQ(cfg.cluster.priority_classes[ClassOf(cfg, Observed(cfg, j))].name, "normal");
  // Any attribute the backend reports may be matched: Slurm's account too.
  j.account = "ml";
  EXPECT_EQ(cfg.cluster.priority_classes[ClassOf(cfg, Observed(cfg, j))].name, "high");
}

TEST(BuildSnapshot, ProtectMarkerInTheComment) {
  auto cfg = testing::TwoPools();
  auto j = SlurmJob(1, "RUNNING", 8, {"gpu1"}, "gpu");
  EXPECT_FALSE(IsProtected(cfg, Observed(cfg, j)));
  j.comment = "run 7 tide:protected";
  EXPECT_TRUE(IsProtected(cfg, Observed(cfg, j)));
  cfg.live.jobs.protect_marker = "keep";
  EXPECT_FALSE(IsProtected(cfg, Observed(cfg, j)));
}

}  // namespace
}  // namespace tide::controller

namespace tide::controller {
namespace {

backends::ObservedNode Joined(std::string name, std::string provider_id) {
  backends::ObservedNode n;
  n.name = std::move(name);
  n.provider_id = std::move(provider_id);
  return n;
}

TEST(MatchJoinedNodes, ANodeThatJoinedUnderItsOwnNameIsFoundByItsMachine) {
  const std::vector<backends::ObservedNode> nodes = {
      Joined("ip-10-0-1-23.ec2.internal", "aws:///us-east-1a/i-0abc"),
      Joined("gke-pool-7", "gce://proj/us-central1-a/gke-pool-7"), Joined("a100-od-3", "aws:///us-east-1a/i-0ccc"),
      Joined("ip-10-0-9-9.ec2.internal", "aws:///us-east-1a/i-0abcd")};
  std::vector<providers::Instance> instances = {
      {"i-0abc", "a100-od-1", "a100-od", "k1", "running", {}},
      {"gke-pool-7", "a100-od-2", "a100-od", "k2", "running", {}},
      {"i-0ccc", "a100-od-3", "a100-od", "k3", "running", {}},  // listed by name: unchanged
      {"i-0bbb", "a100-od-4", "a100-od", "k4", "pending", {}},  // not joined yet
      {"bc", "a100-od-5", "a100-od", "k5", "pending", {}}};     // a suffix, but not after a '/'
  std::vector<providers::Interruption> notes = {{"i-0abc", "a100-od-1", FromUnixSeconds(100)},
                                                {"i-0bbb", "a100-od-4", FromUnixSeconds(200)}};
  MatchJoinedNodes(nodes, &instances, &notes);
  EXPECT_EQ(instances[0].node, "ip-10-0-1-23.ec2.internal");  // not ...i-0abcd's node
  EXPECT_EQ(instances[1].node, "gke-pool-7");
  EXPECT_EQ(instances[2].node, "a100-od-3");
  EXPECT_EQ(instances[3].node, "a100-od-4");
  EXPECT_EQ(instances[4].node, "a100-od-5");
  EXPECT_EQ(notes[0].node, "ip-10-0-1-23.ec2.internal");
  EXPECT_EQ(notes[1].node, "a100-od-4");
}

TEST(MatchJoinedNodes, ANodeIsNeverClaimedTwice) {
  // The node is listed under an instance's own name: no other instance may
  // take it by its provider id, and one node goes to one instance.
  const std::vector<backends::ObservedNode> nodes = {Joined("a100-od-1", "i-0abc"), Joined("n2", "x/i-0def")};
  std::vector<providers::Instance> instances = {{"i-0abc", "a100-od-9", "a100-od", "k9", "running", {}},
                                                {"i-0zzz", "a100-od-1", "a100-od", "k1", "running", {}},
                                                {"i-0def", "a100-od-2", "a100-od", "k2", "running", {}},
                                                {"i-0def", "a100-od-3", "a100-od", "k3", "running", {}}};
  std::vector<providers::Interruption> notes;
  MatchJoinedNodes(nodes, &instances, &notes);
  EXPECT_EQ(instances[0].node, "a100-od-9");
  EXPECT_EQ(instances[1].node, "a100-od-1");
  EXPECT_EQ(instances[2].node, "n2");
  EXPECT_EQ(instances[3].node, "a100-od-3");
}

}  // namespace
}  // namespace tide::controller
