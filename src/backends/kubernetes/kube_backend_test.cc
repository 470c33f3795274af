// The Kubernetes backend's verbs, on an in-memory stand-in for the API
// server (kube_fake_api_test.h).
#include "backends/kubernetes/kube_backend.h"

#include <string>

#include "backends/kubernetes/kube_fake_api_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::backends::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const TideNames kNames("tide.dev");

Pod WaitingPod(std::string name, std::string group, int total) {
  Pod p;
  p.meta.namespace_name = "ml";
  p.meta.name = std::move(name);
  p.meta.uid = "uid-" + p.meta.name;
  p.scheduler_name = "tide";
  p.requests.gpus = 8;
  p.meta.labels[std::string(kKueueGroupLabel)] = std::move(group);
  p.meta.annotations[std::string(kKueueCountAnnotation)] = std::to_string(total);
  p.meta.owners.push_back({"Job", "train", "job-uid", true});
  return p;
}

Node ReadyNode(std::string name) {
  Node n;
  n.meta.name = std::move(name);
  n.meta.labels[kNames.pool] = "a100-od";
  n.capacity.gpus = n.allocatable.gpus = 8;
  n.ready.status = "True";
  return n;
}

struct World {
  testing::FakeApi api;
  ManualClock clock{FromUnixSeconds(1'800'000'000)};
  KubernetesBackend backend{Options(), &api, &api, &clock};

  static KubernetesBackendOptions Options() {
    KubernetesBackendOptions o;
    o.translate.pools = {ShapeOfPool(kNames, "a100-od", "on-demand"), ShapeOfPool(kNames, "A100_Spot", "spot")};
    return o;
  }
  World() {
    api.objects.nodes = {ReadyNode("n1"), ReadyNode("n2")};
    api.objects.pods = {WaitingPod("w0", "llm", 2), WaitingPod("w1", "llm", 2)};
  }
  void Observe() { ASSERT_TRUE(backend.Observe().ok()); }
};

TEST(KubernetesBackendTest, SaysWhatItCanDo) {
  World w;
  const Capabilities& c = w.backend.capabilities();
  EXPECT_EQ(c.name, "kubernetes");
  EXPECT_FALSE(c.schedules_itself);  // tide places the pods that name it
  EXPECT_TRUE(c.bind);
  EXPECT_TRUE(c.evict);
  EXPECT_FALSE(c.checkpoint);  // SIGTERM within the eviction's grace
  EXPECT_FALSE(c.requeue);
  EXPECT_FALSE(c.fixed_node_names);
  EXPECT_TRUE(absl::IsUnimplemented(w.backend.Checkpoint("ml/llm")));
  EXPECT_TRUE(absl::IsUnimplemented(w.backend.Requeue("ml/llm")));
  EXPECT_TRUE(absl::IsUnimplemented(w.backend.Resize("ml/llm", ResizeOrder{}, Reason{})));
}

TEST(KubernetesBackendTest, ObserveIsUnavailableWhileTheViewMayBeStale) {
  World w;
  w.api.down = true;
  auto o = w.backend.Observe();
  EXPECT_TRUE(absl::IsUnavailable(o.status())) << o.status();
  w.api.down = false;
  o = w.backend.Observe();
  ASSERT_TRUE(o.ok());
  ASSERT_EQ(o->jobs.size(), 1u);
  EXPECT_EQ(o->jobs[0].key, "ml/llm");
  EXPECT_EQ(o->jobs[0].phase, JobPhase::kWaiting);
}

TEST(KubernetesBackendTest, BindsEveryPodOfTheGangAndSaysSo) {
  World w;
  w.Observe();
  ASSERT_TRUE(w.backend.Bind("ml/llm", {{"n1", 1}, {"n2", 1}}, {Cause::kPlaced, "fits now"}).ok());
  EXPECT_THAT(w.api.calls, ElementsAre("POST /api/v1/namespaces/ml/pods/w0/binding",
                                       "POST /api/v1/namespaces/ml/pods/w1/binding"));
  EXPECT_EQ(w.api.FindPod("ml", "w0")->node_name, "n1");
  EXPECT_EQ(w.api.FindPod("ml", "w1")->node_name, "n2");
  ASSERT_EQ(w.api.events.size(), 2u);
  EXPECT_THAT(w.api.events[0], HasSubstr("Scheduled: tide placed gang ml/llm (2 pods); this pod on n1: fits now"));
}

TEST(KubernetesBackendTest, AFailedBindingUndoesTheGangsOthers) {
  World w;
  w.api.failing_binds = {"ml/w1"};
  w.Observe();
  Status s = w.backend.Bind("ml/llm", {{"n1", 2}}, {Cause::kPlaced, ""});
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;
  EXPECT_THAT(std::string(Message(s)), HasSubstr("binding pod w1 to n1 failed, the gang's other bindings undone"));
  EXPECT_THAT(w.api.calls, ElementsAre("POST /api/v1/namespaces/ml/pods/w0/binding",
                                       "POST /api/v1/namespaces/ml/pods/w1/binding",
                                       "POST /api/v1/namespaces/ml/pods/w0/eviction"));
}

TEST(KubernetesBackendTest, APlacementThatDoesNotMatchTheGangBindsNothing) {
  World w;
  w.Observe();
  EXPECT_TRUE(absl::IsInvalidArgument(w.backend.Bind("ml/llm", {{"n1", 1}}, {})));
  EXPECT_TRUE(absl::IsNotFound(w.backend.Bind("ml/llm", {{"n9", 2}}, {})));
  EXPECT_TRUE(absl::IsNotFound(w.backend.Bind("ml/nope", {{"n1", 1}}, {})));
  EXPECT_THAT(w.api.calls, IsEmpty());
}

TEST(KubernetesBackendTest, EvictionGoesThroughTheApiAndABudgetIsARefusal) {
  World w;
  w.api.objects.pods[0].node_name = "n1";
  w.api.objects.pods[0].phase = "Running";
  w.api.objects.pods[1].node_name = "n2";
  w.api.objects.pods[1].phase = "Running";
  w.api.budgeted = {"ml/w0"};
  w.Observe();
  Status s = w.backend.Evict("ml/llm", Seconds(30), {Cause::kPreemption, "for ml/high"});
  EXPECT_TRUE(IsRefused(s)) << s;
  EXPECT_THAT(std::string(Message(s)), HasSubstr("disruption budget"));
  // Never a delete to get around the budget.
  EXPECT_THAT(w.api.calls, ElementsAre("POST /api/v1/namespaces/ml/pods/w0/eviction"));
  EXPECT_THAT(w.api.events[0], HasSubstr("EvictionRefused"));
  w.api.budgeted.clear();
  ASSERT_TRUE(w.backend.Evict("ml/llm", Seconds(30), {Cause::kPreemption, "for ml/high"}).ok());
  EXPECT_THAT(w.api.events.back(), HasSubstr("EvictedPreemption: tide evicted it: for ml/high"));
}

TEST(KubernetesBackendTest, CordonKeepsTidesCauseAndObserveReportsIt) {
  World w;
  w.Observe();
  ASSERT_TRUE(w.backend.Cordon("n1", {Cause::kRelease, "idle 10m"}).ok());
  auto o = w.backend.Observe();
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->nodes[0].condition, NodeCondition::kCordoned);
  EXPECT_EQ(o->nodes[0].cordon, Cause::kRelease);
  EXPECT_THAT(w.api.events.back(), HasSubstr("CordonedRelease: tide cordoned the node: idle 10m"));
  ASSERT_TRUE(w.backend.Uncordon("n1").ok());
  o = w.backend.Observe();
  EXPECT_EQ(o->nodes[0].condition, NodeCondition::kReady);
  EXPECT_EQ(o->nodes[0].cordon, Cause::kNone);
  EXPECT_TRUE(absl::IsNotFound(w.backend.Cordon("n9", {})));
}

TEST(KubernetesBackendTest, CancelEndsTheJobOrTheBarePod) {
  World w;
  Pod bare = WaitingPod("solo", "", 1);
  bare.meta.labels.clear();
  bare.meta.owners.clear();
  w.api.objects.pods.push_back(bare);
  w.Observe();
  ASSERT_TRUE(w.backend.Cancel("ml/llm", Seconds(10), {Cause::kIdleReclaim, "idle twice"}).ok());
  ASSERT_TRUE(w.backend.Cancel("ml/solo", Seconds(10), {Cause::kIdleReclaim, "idle twice"}).ok());
  EXPECT_THAT(w.api.calls, ElementsAre("DELETE /apis/batch/v1/namespaces/ml/jobs/train?propagationPolicy=Background",
                                       "DELETE /api/v1/namespaces/ml/pods/solo?gracePeriodSeconds=10"));
}

TEST(KubernetesBackendTest, ExplainSetsTheWaitingPodsScheduledCondition) {
  World w;
  w.api.objects.pods[1].node_name = "n1";  // bound already: left alone
  w.Observe();
  ASSERT_TRUE(w.backend.capabilities().explain);
  ASSERT_TRUE(w.backend.Explain("ml/llm", "gang 2/2 waits for 2 nodes of pool a100-od, booting").ok());
  EXPECT_THAT(w.api.calls, ElementsAre("PATCH /api/v1/namespaces/ml/pods/w0/status"));
  const Condition* c = w.api.FindPod("ml", "w0")->FindCondition("PodScheduled");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "Unschedulable");
  EXPECT_EQ(c->message, "gang 2/2 waits for 2 nodes of pool a100-od, booting");
  EXPECT_THAT(w.api.events, ElementsAre("Waiting: gang 2/2 waits for 2 nodes of pool a100-od, booting"));
  EXPECT_TRUE(absl::IsNotFound(w.backend.Explain("ml/nope", "x")));
}

TEST(KubernetesBackendTest, NodeNamesAreFreshAndValid) {
  World w;
  w.api.objects.nodes.push_back(ReadyNode("a100-od-1"));
  w.Observe();
  EXPECT_EQ(*w.backend.RegisterNode(0, {"a100-od-2"}), "a100-od-3");
  EXPECT_EQ(*w.backend.RegisterNode(0, {}), "a100-od-4");  // not 2 again
  EXPECT_EQ(*w.backend.RegisterNode(1, {}), "a100-spot-1");
  EXPECT_FALSE(w.backend.RegisterNode(5, {}).ok());
  EXPECT_TRUE(w.backend.RemoveNode("n1").ok());
  EXPECT_TRUE(w.backend.RemoveNode("n1").ok());  // already gone: fine
}

}  // namespace
}  // namespace tide::backends::kube
