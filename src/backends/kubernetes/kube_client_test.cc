#include "backends/kubernetes/kube_client.h"

#include "backends/kubernetes/kube_fake_transport_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::backends::kube {
namespace {

using json = nlohmann::json;
using testing::FakeTransport;
using testing::Fixture;
using ::testing::HasSubstr;

std::string Msg(const Status& s) { return std::string(Message(s)); }
const Timestamp kNow = FromUnixSeconds(1796000000);

TEST(ClientTest, ListPagesWithContinue) {
  FakeTransport t;
  t.Reply200(Fixture("pods_page1.json"));
  t.Reply200(Fixture("pods_page2.json"));
  Client c(&t);
  ListOptions lo;
  lo.label_selector = "app in (train)";
  lo.limit = 2;
  auto pods = c.ListPods("default", lo);
  ASSERT_TRUE(pods.ok()) << pods.status();
  EXPECT_EQ(pods->items.size(), 4u);
  EXPECT_EQ(pods->resource_version, json::parse(Fixture("pods_page1.json"))["metadata"]["resourceVersion"]);
  ASSERT_EQ(t.calls.size(), 2u);
  EXPECT_EQ(t.calls[0].path, "/api/v1/namespaces/default/pods?limit=2&labelSelector=app%20in%20%28train%29");
  EXPECT_THAT(t.calls[1].path, HasSubstr("limit=2&continue=eyJ2Ijoib"));
}

// Found by fuzzing: a server that handed back the same continue token was
// listed for ever, its items piling up.
TEST(ClientTest, AListThatNeverEndsIsAnError) {
  FakeTransport t;
  t.Reply200(Fixture("pods_page1.json"));
  t.Reply200(Fixture("pods_page1.json"));
  t.Reply200(Fixture("pods_page1.json"));
  Client c(&t);
  ListOptions lo;
  lo.limit = 2;
  auto pods = c.ListPods("default", lo);
  EXPECT_TRUE(absl::IsUnavailable(pods.status())) << pods.status();
  EXPECT_THAT(Msg(pods.status()), HasSubstr("the same continue token twice"));
  EXPECT_EQ(t.calls.size(), 2u);
}

TEST(ClientTest, ExpiredContinueIsGone) {
  FakeTransport t;
  t.Reply200(Fixture("pods_page1.json"));
  t.replies.push_back(Reply{410, Fixture("error_410_gone.json")});
  Client c(&t);
  ListOptions lo;
  lo.limit = 2;
  auto pods = c.ListPods("default", lo);
  EXPECT_TRUE(IsGone(pods.status())) << pods.status();
  EXPECT_THAT(Msg(pods.status()), HasSubstr("list /api/v1/namespaces/default/pods: HTTP 410"));
}

TEST(ClientTest, GarbageJsonIsInvalidArgument) {
  FakeTransport t;
  t.Reply200("not json at all");
  Client c(&t);
  auto p = c.GetPod("default", "p1");
  EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
  EXPECT_THAT(Msg(p.status()), HasSubstr("pod default/p1: HTTP 200 but the reply is not a JSON object"));
}

// Found by fuzzing: the start of a bad reply was quoted raw.
TEST(ClientTest, ABadReplyIsQuotedEscaped) {
  FakeTransport t;
  t.Reply200("{\n \"ki\x01");
  Client c(&t);
  auto p = c.GetPod("default", "p1");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(Msg(p.status()), HasSubstr("not a JSON object: {\\x0a \"ki\\x01"));
}

TEST(ClientTest, GetPodNotFound) {
  FakeTransport t;
  t.replies.push_back(Reply{404, Fixture("error_404.json")});
  Client c(&t);
  auto p = c.GetPod("default", "nope");
  EXPECT_TRUE(absl::IsNotFound(p.status()));
  EXPECT_THAT(Msg(p.status()), HasSubstr("pod default/nope: HTTP 404"));
}

TEST(ClientTest, CreateNodePostsCapacityAndKwokAnnotation) {
  FakeTransport t;
  t.Reply200(Fixture("node_kwok.json"));
  Client c(&t);
  NodeTemplate n{.name = "kwok-a100-0",
                 .labels = {{"tide.dev/pool", "a100x8-ondemand"}},
                 .annotations = {{"kwok.x-k8s.io/node", "fake"}},
                 .taints = {{"nvidia.com/gpu", "present", "NoSchedule"}},
                 .provider_id = "kwok://kwok-a100-0",
                 .capacity = {{"nvidia.com/gpu", "8"}}};
  auto node = c.CreateNode(n);
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->capacity.gpus, 8);
  ASSERT_EQ(t.calls.size(), 1u);
  EXPECT_EQ(t.calls[0].method, "POST");
  EXPECT_EQ(t.calls[0].path, "/api/v1/nodes");
  json body = json::parse(t.calls[0].body);
  EXPECT_EQ(body["metadata"]["annotations"]["kwok.x-k8s.io/node"], "fake");
  EXPECT_EQ(body["status"]["allocatable"]["nvidia.com/gpu"], "8");
  EXPECT_EQ(body["spec"]["taints"][0]["effect"], "NoSchedule");

  t.replies.push_back(Reply{409, Fixture("error_409_exists.json")});
  EXPECT_TRUE(absl::IsAlreadyExists(c.CreateNode(n).status()));
}

TEST(ClientTest, PatchNodeIsAMergePatch) {
  FakeTransport t;
  t.Reply200(Fixture("node_kwok.json"));
  Client c(&t);
  NodePatch p;
  p.unschedulable = true;
  p.annotations = {{"tide.dev/cordon", "release"}, {"old", std::nullopt}};
  p.resource_version = "42";
  ASSERT_TRUE(c.PatchNode("kwok-a100-0", p).ok());
  EXPECT_EQ(t.calls[0].method, "PATCH");
  EXPECT_EQ(t.calls[0].content_type, "application/merge-patch+json");
  json body = json::parse(t.calls[0].body);
  EXPECT_EQ(body["spec"]["unschedulable"], true);
  EXPECT_EQ(body["metadata"]["annotations"]["tide.dev/cordon"], "release");
  EXPECT_TRUE(body["metadata"]["annotations"]["old"].is_null());
  EXPECT_EQ(body["metadata"]["resourceVersion"], "42");
  EXPECT_FALSE(body["spec"].contains("taints"));
}

TEST(ClientTest, BindPostsBindingWithUid) {
  FakeTransport t;
  t.replies.push_back(Reply{201, R"({"kind":"Status","status":"Success","code":201})"});
  Client c(&t);
  ASSERT_TRUE(c.BindPod("default", "p1", "n1", "uid-1").ok());
  EXPECT_EQ(t.calls[0].path, "/api/v1/namespaces/default/pods/p1/binding");
  json body = json::parse(t.calls[0].body);
  EXPECT_EQ(body["kind"], "Binding");
  EXPECT_EQ(body["metadata"]["uid"], "uid-1");
  EXPECT_EQ(body["target"]["name"], "n1");
}

TEST(ClientTest, EvictionRefusedByBudget) {
  FakeTransport t;
  t.replies.push_back(Reply{429, Fixture("error_429_eviction.json")});
  Client c(&t);
  Status s = c.EvictPod("default", "train-0", Seconds(30));
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_THAT(Msg(s), HasSubstr("pod default/train-0: eviction refused by a disruption budget"));
  EXPECT_THAT(Msg(s), HasSubstr("HTTP 429"));
  json body = json::parse(t.calls[0].body);
  EXPECT_EQ(body["apiVersion"], "policy/v1");
  EXPECT_EQ(body["deleteOptions"]["gracePeriodSeconds"], 30);
  EXPECT_EQ(t.calls[0].path, "/api/v1/namespaces/default/pods/train-0/eviction");
}

TEST(ClientTest, PodScheduledConditionIsAStrategicPatch) {
  FakeTransport t;
  t.Reply200(Fixture("pod_infer_mig.json"));
  Client c(&t);
  ASSERT_TRUE(c.SetPodScheduled("default", "infer-mig", "False", "Unschedulable", "waits", kNow).ok());
  EXPECT_EQ(t.calls[0].path, "/api/v1/namespaces/default/pods/infer-mig/status");
  EXPECT_EQ(t.calls[0].content_type, "application/strategic-merge-patch+json");
  json cond = json::parse(t.calls[0].body)["status"]["conditions"][0];
  EXPECT_EQ(cond["type"], "PodScheduled");
  EXPECT_EQ(cond["reason"], "Unschedulable");
  EXPECT_EQ(cond["lastTransitionTime"], FormatTimestamp(kNow));
}

TEST(ClientTest, EventAboutANode) {
  FakeTransport t;
  t.replies.push_back(Reply{201, "{}"});
  Client c(&t);
  EventSpec e;
  e.kind = "Node";
  e.name = "n1";
  e.reason = "ScaleDown";
  e.message = "idle 10m";
  ASSERT_TRUE(c.PostEvent(e, kNow).ok());
  EXPECT_EQ(t.calls[0].path, "/api/v1/namespaces/default/events");
  json body = json::parse(t.calls[0].body);
  EXPECT_EQ(body["source"]["component"], "tide");
  EXPECT_EQ(body["type"], "Normal");
  EXPECT_EQ(body["involvedObject"]["kind"], "Node");
  EXPECT_FALSE(body["involvedObject"].contains("namespace"));
}

TEST(ClientTest, JobParallelismAndDeletes) {
  FakeTransport t;
  t.Reply200("{}");
  t.Reply200("{}");
  t.replies.push_back(Reply{404, Fixture("error_404.json")});
  Client c(&t);
  ASSERT_TRUE(c.SetJobParallelism("ml", "train", 6).ok());
  EXPECT_EQ(t.calls[0].path, "/apis/batch/v1/namespaces/ml/jobs/train");
  EXPECT_EQ(json::parse(t.calls[0].body)["spec"]["parallelism"], 6);
  ASSERT_TRUE(c.DeletePod("ml", "p", Seconds(0)).ok());
  EXPECT_EQ(t.calls[1].path, "/api/v1/namespaces/ml/pods/p?gracePeriodSeconds=0");
  Status s = c.DeleteNode("gone");
  EXPECT_TRUE(absl::IsNotFound(s));
  EXPECT_THAT(Msg(s), HasSubstr("delete node gone: HTTP 404"));
}

TEST(ClientTest, NoReplyIsUnavailable) {
  FakeTransport t;
  Client c(&t);
  EXPECT_TRUE(absl::IsUnavailable(c.GetNode("n").status()));
}

}  // namespace
}  // namespace tide::backends::kube
