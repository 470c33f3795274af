#include "backends/kubernetes/kube_objects.h"

#include "backends/kubernetes/kube_fake_transport_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tide::backends::kube {
namespace {

using json = nlohmann::json;
using testing::Fixture;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

std::string Msg(const Status& s) { return std::string(Message(s)); }

TEST(ParsePodTest, GpuPodBoundAndRunning) {
  auto p = ParsePodText(Fixture("pod_train_0.json"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(Key(p->meta), "default/train-0");
  EXPECT_FALSE(p->meta.uid.empty());
  EXPECT_FALSE(p->meta.resource_version.empty());
  EXPECT_EQ(p->scheduler_name, "tide");
  EXPECT_EQ(p->node_name, "kwok-a100-0");
  EXPECT_EQ(p->phase, "Running");
  EXPECT_EQ(p->priority, 100000);  // from PriorityClass prod-high, by the admission plugin
  EXPECT_EQ(p->priority_class_name, "prod-high");
  EXPECT_EQ(p->requests.gpus, 6);  // 4 (limits only) + 2
  EXPECT_THAT(p->meta.labels, ElementsAre(Pair("app", "train")));
  EXPECT_THAT(p->node_selector, ElementsAre(Pair("tide.dev/pool", "a100x8-ondemand")));
  ASSERT_EQ(p->required_affinity.size(), 1u);
  ASSERT_EQ(p->required_affinity[0].size(), 1u);
  EXPECT_EQ(p->required_affinity[0][0].key, "karpenter.sh/capacity-type");
  EXPECT_EQ(p->required_affinity[0][0].op, "In");
  EXPECT_THAT(p->required_affinity[0][0].values, ElementsAre("on-demand", "reserved"));
  bool gpu_toleration = false;
  for (const auto& t : p->tolerations) gpu_toleration |= t.key == "nvidia.com/gpu" && t.op == "Exists";
  EXPECT_TRUE(gpu_toleration);
  ASSERT_NE(p->FindCondition("PodScheduled"), nullptr);
  EXPECT_EQ(p->FindCondition("PodScheduled")->status, "True");
  EXPECT_TRUE(p->started.has_value());
  EXPECT_GT(ToUnixSeconds(p->meta.created), 0);
  EXPECT_FALSE(p->meta.deleted.has_value());
}

TEST(ParsePodTest, MigPodUnschedulable) {
  auto p = ParsePodText(Fixture("pod_infer_mig.json"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->requests.gpus, 0);
  EXPECT_THAT(p->requests.mig, ElementsAre(Pair("1g.5gb", 2)));
  EXPECT_TRUE(p->node_name.empty());
  EXPECT_EQ(p->phase, "Pending");
  const Condition* c = p->FindCondition("PodScheduled");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, "False");
  EXPECT_EQ(c->reason, "Unschedulable");
  EXPECT_THAT(c->message, HasSubstr("waits for 1 node"));
}

TEST(ParsePodTest, KueueLabelsAndAnnotations) {
  auto p = ParsePodText(Fixture("pod_kueue_w0.json"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->meta.labels.at("kueue.x-k8s.io/pod-group-name"), "llm");
  EXPECT_EQ(p->meta.labels.at("kueue.x-k8s.io/queue-name"), "team-a");
  EXPECT_EQ(p->meta.annotations.at("kueue.x-k8s.io/pod-group-total-count"), "4");
  EXPECT_EQ(p->requests.gpus, 8);
}

TEST(ParsePodTest, SafeToEvictAnnotation) {
  auto p = ParsePodText(Fixture("pod_protected.json"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->meta.annotations.at("cluster-autoscaler.kubernetes.io/safe-to-evict"), "false");
  EXPECT_EQ(p->meta.annotations.at("karpenter.sh/do-not-disrupt"), "true");
  EXPECT_EQ(p->node_name, "kwok-a100-0");
}

TEST(ParseNodeTest, KwokNode) {
  auto n = ParseNodeText(Fixture("node_kwok.json"));
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(Key(n->meta), "kwok-a100-0");
  EXPECT_EQ(n->meta.annotations.at("kwok.x-k8s.io/node"), "fake");
  EXPECT_EQ(n->meta.labels.at("tide.dev/pool"), "a100x8-ondemand");
  EXPECT_EQ(n->provider_id, "kwok://kwok-a100-0");
  EXPECT_TRUE(n->IsReady());
  EXPECT_FALSE(n->unschedulable);
  EXPECT_EQ(n->capacity.gpus, 8);
  EXPECT_THAT(n->capacity.mig, ElementsAre(Pair("1g.5gb", 0)));
  EXPECT_EQ(n->allocatable.gpus, 8);
  ASSERT_EQ(n->taints.size(), 1u);
  EXPECT_EQ(n->taints[0].effect, "NoSchedule");
}

TEST(ParseNodeTest, NoConditionsIsNotReady) {
  auto n = ParseNode(json::parse(R"({"metadata":{"name":"n1"}})"));
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_FALSE(n->IsReady());
  EXPECT_EQ(n->ready.status, "Unknown");
}

TEST(ParseOthersTest, PodDisruptionBudget) {
  auto b = ParsePodDisruptionBudget(json::parse(Fixture("pdb.json")));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(Key(b->meta), "default/train-pdb");
  EXPECT_THAT(b->match_labels, ElementsAre(Pair("app", "train")));
  EXPECT_EQ(b->disruptions_allowed, 0);
  EXPECT_EQ(b->current_healthy, 1);
  EXPECT_EQ(b->desired_healthy, 1);
}

TEST(ParseOthersTest, PriorityClassAndPodGroup) {
  auto c = ParsePriorityClass(json::parse(Fixture("priorityclass.json")));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->meta.name, "prod-high");
  EXPECT_EQ(c->value, 100000);
  EXPECT_EQ(c->preemption_policy, "Never");
  auto g = ParsePodGroup(json::parse(Fixture("podgroup.json")));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(Key(g->meta), "team-a/llm");
  EXPECT_EQ(g->min_member, 4);
}

struct BadCase {
  std::string name;
  std::string object;
  std::string want;
};

class BadPodTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadPodTest, NamesObjectAndField) {
  auto p = ParsePodText(GetParam().object);
  ASSERT_FALSE(p.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(p.status())) << p.status();
  EXPECT_THAT(Msg(p.status()), HasSubstr(GetParam().want));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadPodTest,
    ::testing::Values(
        BadCase{"NotJson", "{", "pod: reply is not JSON"},
        BadCase{"NoName", R"({"metadata":{}})", "pod: metadata.name: missing"},
        BadCase{"PriorityString", R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"priority":"high"}})",
                "pod ns/p: spec.priority: expected an integer, got string"},
        BadCase{"LabelsList", R"({"metadata":{"name":"p","namespace":"ns","labels":["a"]}})",
                "pod ns/p: metadata.labels: expected an object, got array"},
        BadCase{"FractionalGpu",
                R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"0.5"}}}]}})",
                "pod ns/p: spec.containers[0].resources.limits[nvidia.com/gpu]: '0.5' is not a whole count"},
        BadCase{"MilliGpu",
                R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"resources":{"requests":{"nvidia.com/gpu":"500m"}}}]}})",
                "'500m' is not a whole count"},
        BadCase{"BadTime", R"({"metadata":{"name":"p","namespace":"ns","creationTimestamp":"yesterday"}})",
                "pod ns/p: metadata.creationTimestamp: 'yesterday' is not an RFC 3339 time"},
        BadCase{"ConditionsNotList", R"({"metadata":{"name":"p","namespace":"ns"},"status":{"conditions":{}}})",
                "pod ns/p: status.conditions: expected a list"}),
    [](const auto& info) { return info.param.name; });

TEST(ParseCountTest, Quantities) {
  EXPECT_EQ(*ParseCount(json("8"), "x"), 8);
  EXPECT_EQ(*ParseCount(json(8), "x"), 8);
  EXPECT_EQ(*ParseCount(json("2k"), "x"), 2000);
  EXPECT_FALSE(ParseCount(json("-1"), "x").ok());
  EXPECT_FALSE(ParseCount(json(-1), "x").ok());
  EXPECT_FALSE(ParseCount(json("1Gi"), "x").ok());
  EXPECT_FALSE(ParseCount(json(1.5), "x").ok());
  EXPECT_FALSE(ParseCount(json(""), "x").ok());
}

}  // namespace
}  // namespace tide::backends::kube
