// The applier's rules (docs/design/applier.md), each checked once, on a
// recording workload manager and provider: what each action kind does, what
// it refuses, and how the manager's capabilities choose the verbs.
#include "apply/applier.h"

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testutil/builders.h"
#include "testutil/fake_workload.h"

namespace tide::apply {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using tide::testing::At;

// A provider that creates on request and can be told to fail.
class Cloud final : public providers::CloudProvider {
 public:
  std::vector<std::string> calls;
  int fail_after = -1;  // creates that succeed before the next fails (-1: none fail)
  std::string Name() const override { return "cloud"; }
  Result<providers::Instance> Create(const providers::CreateRequest& r, Timestamp now) override {
    calls.push_back(StrCat("create ", r.node, " ", r.pool, " ", backends::CauseName(r.why.cause)));
    if (fail_after == 0) return absl::UnavailableError("no capacity");
    if (fail_after > 0) --fail_after;
    return providers::Instance{StrCat("i-", r.node), r.node, r.pool, r.idempotency_key, "pending", now};
  }
  Status Delete(const std::string& id, const std::string& key, Timestamp now) override {
    calls.push_back(StrCat("delete ", id));
    return OkStatus();
  }
  Result<std::vector<providers::Instance>> List(Timestamp) override { return std::vector<providers::Instance>{}; }
  Result<std::vector<providers::Interruption>> Interruptions(Timestamp) override {
    return std::vector<providers::Interruption>{};
  }
};

// The snapshot as the applier reads it: jobs and nodes by id, every node
// bought by tide (instance "i-<name>") unless listed in `static_nodes`.
class TestView final : public View {
 public:
  model::ClusterState state;
  std::vector<std::string> static_nodes;
  std::map<model::NodeId, bool> releasing;
  bool empty_known = true;  // EmptyNow answers (the simulator's way) or not (the controller's)

  const model::Job* FindJob(model::JobId id) const override {
    for (const auto& j : state.jobs) {
      if (j.id == id) return &j;
    }
    return nullptr;
  }
  const model::Node* FindNode(model::NodeId id) const override {
    for (const auto& n : state.nodes) {
      if (n.id == id) return &n;
    }
    return nullptr;
  }
  std::string JobKey(const model::Job& job) const override { return StrCat("job-", job.id); }
  std::string InstanceOf(const model::Node& node) const override {
    for (const auto& s : static_nodes) {
      if (s == node.name) return "";
    }
    return StrCat("i-", node.name);
  }
  bool Releasing(const model::Node& node) const override {
    auto it = releasing.find(node.id);
    return it != releasing.end() && it->second;
  }
  std::optional<bool> EmptyNow(const model::Node& node) const override {
    if (!empty_known) return std::nullopt;
    return node.idle();
  }
  std::vector<std::string> TakenNames() const override { return {}; }
};

class Recorder final : public Listener {
 public:
  std::vector<std::string> lines;
  int disrupted = 0;
  std::vector<std::string> stopped;
  void Log(std::string_view line) override { lines.emplace_back(line); }
  void Disrupted(int nodes, Timestamp) override { disrupted += nodes; }
  void Stopped(const model::Job&, const std::string& key, backends::Cause cause, bool cancel, Timestamp) override {
    stopped.push_back(StrCat(key, " ", backends::CauseName(cause), cancel ? " cancel" : ""));
  }
};

struct Rig {
  model::ClusterSpec spec = tide::testing::Spec({tide::testing::Pool("od", 8, model::Tier::kOnDemand, 32, 0, 8),
                                                 tide::testing::Pool("spot", 8, model::Tier::kSpot, 10, 0, 8)});
  tide::testing::FakeWorkload manager;
  Cloud cloud;
  Recorder rec;
  TestView view;
  ApplyStats stats;
  Applier applier{&spec, ApplyOptions{}, &manager, &cloud, nullptr, &rec};

  Rig() {
    view.state.spec = &spec;
    for (int i = 1; i <= 3; ++i) {
      model::Node n = tide::testing::ReadyNode(i, 0, 8, 8);
      n.name = StrCat("n", i);
      view.state.nodes.push_back(n);
      manager.obs.nodes.push_back(tide::testing::FakeNode(n.name, 0));
    }
  }
  // Job `id` running on node `node` with 8 GPUs.
  model::Job& Running(model::JobId id, model::NodeId node, bool is_protected = false) {
    model::Job j = tide::testing::Pending(id, 8, 1);
    j.state = model::JobState::kRunning;
    j.alloc.push_back({node, 1});
    j.spec.is_protected = is_protected;
    view.state.jobs.push_back(j);
    for (auto& n : view.state.nodes) {
      if (n.id == node) n.free_gpus = 0;
    }
    auto o = tide::testing::FakeJob(StrCat("job-", id), 1, 8);
    o.phase = backends::JobPhase::kRunning;
    o.nodes = {StrCat("n", node)};
    manager.obs.jobs.push_back(o);
    return view.state.jobs.back();
  }
  Status Apply(std::vector<autoscale::Action> actions) {
    autoscale::ScalingPlan plan;
    plan.actions = std::move(actions);
    return applier.Apply(plan, view, At(0), &stats);
  }
};

autoscale::Action Stop(autoscale::ActionKind kind, std::vector<model::JobId> jobs) {
  autoscale::Action a;
  a.kind = kind;
  a.jobs = std::move(jobs);
  a.reason = "why";
  return a;
}

autoscale::Action OnNodes(autoscale::ActionKind kind, std::vector<model::NodeId> nodes, int pool = 0) {
  autoscale::Action a;
  a.kind = kind;
  a.pool = pool;
  a.nodes = std::move(nodes);
  a.reason = "why";
  return a;
}

TEST(Applier, ScaleUpNamesEachNodeThenBuysIt) {
  Rig r;
  autoscale::Action a;
  a.kind = autoscale::ActionKind::kScaleUp;
  a.pool = 1;
  a.count = 2;
  a.forecast = true;
  ASSERT_TRUE(r.Apply({a}).ok());
  EXPECT_EQ(r.stats.creates, 2);
  EXPECT_THAT(r.cloud.calls, ElementsAre("create node-1-1 spot forecast", "create node-1-2 spot forecast"));
}

TEST(Applier, AFailedCreateEndsTheActionAndTheNextActionTriesAgain) {
  Rig r;
  r.cloud.fail_after = 1;
  autoscale::Action a;
  a.kind = autoscale::ActionKind::kScaleUp;
  a.pool = 0;
  a.count = 3;
  ASSERT_TRUE(r.Apply({a, a}).ok());
  // 1 created, then a failure: the third of the first action is not tried;
  // the second action tries again (and fails: the cloud is still out).
  EXPECT_EQ(r.cloud.calls.size(), 3u);
  EXPECT_EQ(r.stats.creates, 1);
  EXPECT_EQ(r.stats.errors, 2);
}

TEST(Applier, ReleaseGivesBackAnIdleNodeTideBought) {
  Rig r;
  ASSERT_TRUE(r.Apply({OnNodes(autoscale::ActionKind::kRelease, {1})}).ok());
  EXPECT_THAT(r.manager.calls, ElementsAre("cordon n1 release: why", "remove n1"));
  EXPECT_THAT(r.cloud.calls, ElementsAre("delete i-n1"));
}

TEST(Applier, ReleaseWaitsForAFreshViewWhenTheManagerCannotTellItIsEmpty) {
  Rig r;
  r.view.empty_known = false;
  ASSERT_TRUE(r.Apply({OnNodes(autoscale::ActionKind::kRelease, {1})}).ok());
  EXPECT_THAT(r.manager.calls, ElementsAre("cordon n1 release: why"));
  EXPECT_TRUE(r.cloud.calls.empty());
}

struct RefusalCase {
  std::string name;
  std::function<void(Rig&)> setup;
  autoscale::Action action;
  std::string said;  // in the refusal's log line
};

class ApplierRefusalTest : public ::testing::TestWithParam<RefusalCase> {};

TEST_P(ApplierRefusalTest, RefusesAndDoesNothing) {
  Rig r;
  GetParam().setup(r);
  ASSERT_TRUE(r.Apply({GetParam().action}).ok());
  EXPECT_GE(r.stats.refused, 1);
  EXPECT_TRUE(r.cloud.calls.empty());
  for (const auto& c : r.manager.calls) EXPECT_THAT(c, ::testing::Not(::testing::StartsWith("evict"))) << c;
  for (const auto& c : r.manager.calls) EXPECT_THAT(c, ::testing::Not(::testing::StartsWith("remove"))) << c;
  bool said = false;
  for (const auto& l : r.rec.lines) said |= l.rfind("refused: ", 0) == 0 && l.find(GetParam().said) != std::string::npos;
  EXPECT_TRUE(said) << GetParam().said;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ApplierRefusalTest,
    ::testing::Values(
        RefusalCase{"ReleaseABusyNode", [](Rig& r) { r.Running(7, 1); },
                    OnNodes(autoscale::ActionKind::kRelease, {1}), "it runs a job now"},
        RefusalCase{"ReleaseAStaticNode", [](Rig& r) { r.view.static_nodes = {"n2"}; },
                    OnNodes(autoscale::ActionKind::kRelease, {2}), "tide did not buy it"},
        RefusalCase{"DrainAnUnknownNode", [](Rig&) {}, OnNodes(autoscale::ActionKind::kDrain, {9}), "no such node"},
        RefusalCase{"PreemptAProtectedJob", [](Rig& r) { r.Running(7, 1, /*is_protected=*/true); },
                    Stop(autoscale::ActionKind::kPreempt, {7}), "it is protected"},
        RefusalCase{"ReclaimAProtectedJob", [](Rig& r) { r.Running(7, 1, /*is_protected=*/true); },
                    Stop(autoscale::ActionKind::kReclaim, {7}), "it is protected"},
        RefusalCase{"StopAWaitingJob",
                    [](Rig& r) { r.view.state.jobs.push_back(tide::testing::Pending(7, 8, 1)); },
                    Stop(autoscale::ActionKind::kPreempt, {7}), "it is not running"},
        RefusalCase{"ConsolidateOffANodeNotBeingReleased", [](Rig& r) { r.Running(7, 1); },
                    [] {
                      auto a = Stop(autoscale::ActionKind::kConsolidate, {7});
                      a.nodes = {1};
                      return a;
                    }(),
                    "not being released"}),
    [](const auto& info) { return info.param.name; });

TEST(Applier, AnEvacuationStopsAProtectedJob) {
  // Protection guards against tide's choices; the provider takes the node
  // whatever tide does, and a checkpoint first saves the work.
  Rig r;
  r.Running(7, 1, /*is_protected=*/true);
  r.view.state.nodes[0].interrupt_at = At(100);
  ASSERT_TRUE(r.Apply({Stop(autoscale::ActionKind::kEvacuate, {7})}).ok());
  EXPECT_THAT(r.manager.calls, ElementsAre("evict job-7 60s"));
  EXPECT_EQ(r.rec.disrupted, 0);  // the provider's interruption, not tide's disruption
}

TEST(Applier, AnEvacuationsGraceEndsBeforeTheInterruption) {
  Rig r;
  r.Running(7, 1);
  r.view.state.nodes[0].interrupt_at = At(30);
  ASSERT_TRUE(r.Apply({Stop(autoscale::ActionKind::kEvacuate, {7})}).ok());
  EXPECT_THAT(r.manager.calls, ElementsAre("evict job-7 25s"));  // 30 s notice - 5 s margin
}

TEST(Applier, ConsolidationFollowsTheDrainOfItsNodeInTheSamePlan) {
  Rig r;
  r.Running(7, 1);
  r.view.empty_known = false;
  auto move = Stop(autoscale::ActionKind::kConsolidate, {7});
  move.nodes = {1};
  ASSERT_TRUE(r.Apply({OnNodes(autoscale::ActionKind::kDrain, {1}), move}).ok());
  EXPECT_THAT(r.manager.calls, ElementsAre("cordon n1 drain: why", "evict job-7 60s"));
  EXPECT_EQ(r.rec.disrupted, 1);
}

TEST(Applier, ARefusedEvictionIsCountedNotForced) {
  Rig r;
  r.Running(7, 1);
  r.manager.refuse_evictions = true;
  ASSERT_TRUE(r.Apply({Stop(autoscale::ActionKind::kPreempt, {7})}).ok());
  EXPECT_EQ(r.stats.refused, 1);
  EXPECT_EQ(r.stats.evictions, 0);
  EXPECT_EQ(r.rec.disrupted, 0);  // nothing was disrupted
  EXPECT_TRUE(r.rec.stopped.empty());
  EXPECT_THAT(r.manager.calls, ElementsAre("evict job-7 60s"));  // never a delete or cancel around it
}

TEST(Applier, AReclaimThatCancelsUsesCancel) {
  Rig r;
  r.Running(7, 1);
  auto a = Stop(autoscale::ActionKind::kReclaim, {7});
  a.cancel = true;
  ASSERT_TRUE(r.Apply({a}).ok());
  EXPECT_THAT(r.manager.calls, ElementsAre("cancel job-7"));
  EXPECT_THAT(r.rec.stopped, ElementsAre("job-7 idle-reclaim cancel"));
}

TEST(Applier, EachNodeCountsOnceAsADisruptionPerAction) {
  Rig r;
  r.Running(7, 1);
  r.Running(8, 1);
  r.Running(9, 2);
  ASSERT_TRUE(r.Apply({Stop(autoscale::ActionKind::kPreempt, {7, 8, 9})}).ok());
  EXPECT_EQ(r.rec.disrupted, 2);
}

TEST(Applier, AResizeIsCarriedOutOnlyWhereTheManagerCanResize) {
  Rig r;
  r.Running(7, 1);
  autoscale::Action a;
  a.kind = autoscale::ActionKind::kResize;
  a.jobs = {7};
  a.resize.workers = 2;
  a.resize.add = {{2, 1}};
  ASSERT_TRUE(r.Apply({a}).ok());
  EXPECT_THAT(r.manager.calls, ElementsAre("resize job-7 2"));
  r.manager.calls.clear();
  r.manager.caps.resize = false;
  ASSERT_TRUE(r.Apply({a}).ok());
  EXPECT_TRUE(r.manager.calls.empty());
  EXPECT_THAT(r.rec.lines.back(), HasSubstr("not carried out: resize job job-7 to 2 workers"));
}

TEST(Applier, AManagerWithNeitherEvictionNorACheckpointSignalCannotStopAJob) {
  Rig r;
  r.Running(7, 1);
  r.manager.caps.evict = false;
  ASSERT_TRUE(r.Apply({Stop(autoscale::ActionKind::kPreempt, {7})}).ok());
  EXPECT_EQ(r.stats.refused, 1);
  EXPECT_TRUE(r.manager.calls.empty());
}

TEST(Applier, AnInternalErrorFromAVerbStopsThePlan) {
  Rig r;
  r.Running(7, 1);
  r.manager.next_error = absl::InternalError("simulator: inconsistent");
  Status s = r.Apply({Stop(autoscale::ActionKind::kPreempt, {7}), OnNodes(autoscale::ActionKind::kRelease, {2})});
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(r.manager.calls.size(), 1u);  // the release was not reached
}

TEST(Applier, PlaceBindsAWaitingJob) {
  Rig r;
  r.view.state.jobs.push_back(tide::testing::Pending(7, 4, 2));
  r.manager.obs.jobs.push_back(tide::testing::FakeJob("job-7", 2, 4));
  sched::Placement p;
  p.job = 7;
  p.shares = {{1, 2}};
  p.backfilled = true;
  ASSERT_TRUE(r.applier.Place(p, r.view, At(0), &r.stats).ok());
  EXPECT_THAT(r.manager.calls, ElementsAre("bind job-7 n1:2"));
  EXPECT_EQ(r.stats.binds, 1);
}

}  // namespace
}  // namespace tide::apply
