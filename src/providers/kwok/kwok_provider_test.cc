#include "providers/kwok/kwok_provider.h"

#include <functional>

#include "backends/kubernetes/kube_fake_nodes_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "providers/kwok/kwok_config.h"

namespace tide::providers {
namespace {

using backends::kube::Client;
using backends::kube::Reply;
using backends::kube::testing::FakeNodesApi;
using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const Timestamp kNow = FromUnixSeconds(1767571200);  // 2026-01-05T00:00:00Z

std::string Msg(const Status& s) { return std::string(Message(s)); }

class KwokProviderTest : public ::testing::Test {
 protected:
  KwokProviderTest() : client_(&api_), provider_(Options(), &client_) {}

  static KwokProvider::Options Options() {
    KwokProvider::Options o;
    KwokProvider::PoolOptions spot;
    spot.gpus = 8;
    spot.capacity_type = "spot";
    spot.taints = {{"nvidia.com/gpu", "present", "NoSchedule"}};
    spot.labels = {{"team", "ml"}};
    o.pools["a100-spot"] = spot;
    KwokProvider::PoolOptions mig;
    mig.gpus = 0;
    mig.mig = {{"1g.10gb", 7}};
    o.pools["mig"] = mig;
    return o;
  }

  static CreateRequest Request(std::string node, std::string key, Duration boot = Seconds(0)) {
    CreateRequest r;
    r.pool = "a100-spot";
    r.node = std::move(node);
    r.instance_type = "a100x8";
    r.tier = model::Tier::kSpot;
    r.idempotency_key = std::move(key);
    r.boot_delay = boot;
    return r;
  }

  const json& Node(const std::string& name) {
    static const json kNone;
    const json* n = api_.Get(name);
    EXPECT_NE(n, nullptr) << "no node " << name;
    return n != nullptr ? *n : kNone;
  }

  FakeNodesApi api_;
  Client client_;
  KwokProvider provider_;
};

TEST_F(KwokProviderTest, CreatePostsTheNodeWithThePoolsShape) {
  auto made = provider_.Create(Request("gpu-1", "key-1", Seconds(30)), kNow);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_THAT(made->id, StartsWith("kwok://gpu-1/"));  // and the Node's uid
  EXPECT_EQ(made->node, "gpu-1");
  EXPECT_EQ(made->pool, "a100-spot");
  EXPECT_EQ(made->idempotency_key, "key-1");
  EXPECT_EQ(made->state, "pending");
  EXPECT_EQ(made->created, kNow);

  const json& n = Node("gpu-1");
  const json& labels = n["metadata"]["labels"];
  EXPECT_EQ(labels["tide.dev/provider"], "kwok");
  EXPECT_EQ(labels["tide.dev/pool"], "a100-spot");
  EXPECT_EQ(labels["karpenter.sh/capacity-type"], "spot");
  EXPECT_EQ(labels["type"], "kwok");
  EXPECT_EQ(labels["team"], "ml");
  EXPECT_EQ(labels["node.kubernetes.io/instance-type"], "a100x8");
  const json& ann = n["metadata"]["annotations"];
  EXPECT_EQ(ann["tide.dev/idempotency-key"], "key-1");
  EXPECT_EQ(ann["tide.dev/created"], "2026-01-05T00:00:00Z");
  EXPECT_EQ(ann["tide.dev/ready-at"], "2026-01-05T00:00:30Z");
  EXPECT_EQ(ann["kwok.x-k8s.io/node"], "fake") << "kwok must manage it from its creation";
  EXPECT_EQ(n["spec"]["providerID"], "kwok://gpu-1");
  EXPECT_EQ(n["spec"]["taints"][0]["key"], "nvidia.com/gpu");
  for (const char* field : {"capacity", "allocatable"}) {
    const json& r = n["status"][field];
    EXPECT_EQ(r["nvidia.com/gpu"], "8") << field;
    EXPECT_EQ(r["cpu"], "96") << field;
    EXPECT_EQ(r["memory"], "1152Gi") << field;
    EXPECT_EQ(r["pods"], "110") << field;
  }
}

TEST_F(KwokProviderTest, MigSlicesBecomeResources) {
  CreateRequest r = Request("mig-1", "key-mig");
  r.pool = "mig";
  ASSERT_TRUE(provider_.Create(r, kNow).ok());
  EXPECT_EQ(Node("mig-1")["status"]["capacity"]["nvidia.com/mig-1g.10gb"], "7");
  EXPECT_EQ(Node("mig-1")["metadata"]["labels"]["karpenter.sh/capacity-type"], "on-demand");
}

TEST_F(KwokProviderTest, PendingUntilReadyAtThenRunning) {
  ASSERT_TRUE(provider_.Create(Request("gpu-1", "key-1", Seconds(30)), kNow).ok());
  auto early = provider_.List(kNow + Seconds(29));
  ASSERT_TRUE(early.ok()) << early.status();
  ASSERT_EQ(early->size(), 1u);
  EXPECT_EQ((*early)[0].state, "pending");
  auto due = provider_.List(kNow + Seconds(30));
  ASSERT_TRUE(due.ok()) << due.status();
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ((*due)[0].state, "running");
  EXPECT_EQ(api_.Count("PATCH"), 0) << "the boot is kwok's to play, from the annotation";
}

// A node made before the ready-at annotation existed (or by hand) is up.
TEST_F(KwokProviderTest, ANodeWithoutReadyAtIsRunning) {
  api_.Put({{"metadata", {{"name", "old-1"}, {"labels", {{"tide.dev/provider", "kwok"}}}}}});
  auto list = provider_.List(kNow);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].state, "running");
  EXPECT_EQ((*list)[0].created, kNow) << "metadata.creationTimestamp stands in";
}

TEST_F(KwokProviderTest, NoBootDelayIsRunningAtOnce) {
  auto made = provider_.Create(Request("gpu-1", "key-1"), kNow);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->state, "running");
}

TEST_F(KwokProviderTest, CreateIsIdempotentOnTheKey) {
  auto first = provider_.Create(Request("gpu-1", "key-1", Seconds(30)), kNow);
  ASSERT_TRUE(first.ok()) << first.status();
  // A retry after a crash: same key, even under another node name.
  auto again = provider_.Create(Request("gpu-9", "key-1", Seconds(30)), kNow + Seconds(5));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->id, first->id);
  EXPECT_EQ(again->node, "gpu-1");
  EXPECT_EQ(api_.Count("POST"), 1);
  EXPECT_EQ(api_.size(), 1u);
}

// The POST went through but its reply was lost: the retry's POST finds the
// name taken, and the node is ours by its key.
TEST_F(KwokProviderTest, CreateAfterALostReplyReturnsTheNodeMade) {
  auto first = provider_.Create(Request("gpu-1", "key-1"), kNow);
  ASSERT_TRUE(first.ok()) << first.status();
  // A provider that never saw it made (a new process) tries the POST.
  KwokProvider fresh(Options(), &client_);
  auto again = fresh.Create(Request("gpu-1", "key-1"), kNow);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->id, first->id);
  EXPECT_EQ(api_.size(), 1u);
}

TEST_F(KwokProviderTest, CreateRefusesANameTakenByAnotherKeyOrSomeoneElse) {
  ASSERT_TRUE(provider_.Create(Request("gpu-1", "key-1"), kNow).ok());
  auto other_key = provider_.Create(Request("gpu-1", "key-2"), kNow);
  EXPECT_TRUE(absl::IsAlreadyExists(other_key.status())) << other_key.status();
  EXPECT_THAT(Msg(other_key.status()), HasSubstr("node gpu-1"));
  EXPECT_THAT(Msg(other_key.status()), HasSubstr("key 'key-1', not 'key-2'"));

  api_.Put({{"metadata", {{"name", "real-1"}}}});
  auto foreign = provider_.Create(Request("real-1", "key-3"), kNow);
  EXPECT_TRUE(absl::IsAlreadyExists(foreign.status())) << foreign.status();
  EXPECT_THAT(Msg(foreign.status()), HasSubstr("did not make"));
}

TEST_F(KwokProviderTest, CreateInAPoolNotConfiguredIsInvalidArgument) {
  CreateRequest r = Request("gpu-1", "key-1");
  r.pool = "h100";
  auto made = provider_.Create(r, kNow);
  EXPECT_TRUE(absl::IsInvalidArgument(made.status())) << made.status();
  EXPECT_THAT(Msg(made.status()), HasSubstr("pool 'h100'"));
  EXPECT_EQ(api_.Count("POST"), 0);
}

TEST_F(KwokProviderTest, DeleteTwiceIsOk) {
  auto made = provider_.Create(Request("gpu-1", "key-1"), kNow);
  ASSERT_TRUE(made.ok());
  EXPECT_TRUE(provider_.Delete(made->id, "del-1", kNow).ok());
  EXPECT_EQ(api_.Get("gpu-1"), nullptr);
  EXPECT_TRUE(provider_.Delete(made->id, "del-1", kNow).ok());
  EXPECT_TRUE(provider_.Delete("gpu-1", "del-1", kNow).ok()) << "a bare node name";
  EXPECT_EQ(api_.Count("DELETE"), 1);
}

TEST_F(KwokProviderTest, AnOldIdNeverNamesALaterNodeOfTheSameName) {
  auto old = provider_.Create(Request("gpu-1", "key-1"), kNow);
  ASSERT_TRUE(old.ok()) << old.status();
  ASSERT_TRUE(provider_.Delete(old->id, "del-1", kNow).ok());
  auto later = provider_.Create(Request("gpu-1", "key-2"), kNow);
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_NE(later->id, old->id);  // the store never sees an id come back
  ASSERT_TRUE(provider_.Delete(old->id, "del-1", kNow).ok());  // the old one is gone: done
  EXPECT_NE(api_.Get("gpu-1"), nullptr);                      // the later one stays
}

TEST_F(KwokProviderTest, DeleteLeavesNodesItDidNotMake) {
  api_.Put({{"metadata", {{"name", "real-1"}, {"labels", {{"tide.dev/pool", "a100-spot"}}}}}});
  Status s = provider_.Delete("kwok://real-1", "del-1", kNow);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(Msg(s), HasSubstr("node real-1"));
  EXPECT_NE(api_.Get("real-1"), nullptr);
}

TEST_F(KwokProviderTest, ANodeBeingDeletedIsTerminating) {
  ASSERT_TRUE(provider_.Create(Request("gpu-1", "key-1"), kNow).ok());
  json finalizers = {{"metadata", {{"finalizers", {"example.com/hold"}}}}};
  ASSERT_TRUE(api_.Request("PATCH", "/api/v1/nodes/gpu-1", finalizers.dump(), "application/merge-patch+json").ok());
  ASSERT_TRUE(provider_.Delete("kwok://gpu-1", "del-1", kNow).ok());
  auto list = provider_.List(kNow);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].state, "terminating");
  api_.FinishDeletion("gpu-1");
  list = provider_.List(kNow);
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->empty());
}

TEST_F(KwokProviderTest, ListSeesOnlyItsOwnNodes) {
  api_.Put({{"metadata", {{"name", "real-1"}, {"labels", {{"tide.dev/pool", "a100-spot"}}}}}});
  ASSERT_TRUE(provider_.Create(Request("gpu-1", "key-1"), kNow).ok());
  auto list = provider_.List(kNow);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].node, "gpu-1");
  EXPECT_THAT(api_.calls.back().path, HasSubstr("labelSelector=tide.dev%2Fprovider%3Dkwok"));
}

TEST_F(KwokProviderTest, InterruptionIsANoticeThenTheNodeGoes) {
  auto made = provider_.Create(Request("gpu-1", "key-1"), kNow);
  ASSERT_TRUE(made.ok());
  ASSERT_TRUE(provider_.Create(Request("gpu-2", "key-2"), kNow).ok());
  const Timestamp at = kNow + Seconds(120);
  ASSERT_TRUE(provider_.InjectInterruption("gpu-1", at).ok());

  const json& n = Node("gpu-1");
  EXPECT_EQ(n["metadata"]["annotations"]["tide.dev/interruption-at"], "2026-01-05T00:02:00Z");
  ASSERT_EQ(n["spec"]["taints"].size(), 2u) << n["spec"]["taints"].dump();
  EXPECT_EQ(n["spec"]["taints"][0]["key"], "nvidia.com/gpu") << "the pool's taint stays";
  EXPECT_EQ(n["spec"]["taints"][1]["key"], "tide.dev/interruption");
  EXPECT_EQ(n["spec"]["taints"][1]["effect"], "NoSchedule");

  auto notices = provider_.Interruptions(kNow + Seconds(60));
  ASSERT_TRUE(notices.ok()) << notices.status();
  ASSERT_EQ(notices->size(), 1u);
  EXPECT_EQ((*notices)[0].instance_id, made->id);
  EXPECT_EQ((*notices)[0].node, "gpu-1");
  EXPECT_EQ((*notices)[0].at, at);
  EXPECT_NE(api_.Get("gpu-1"), nullptr) << "still there during the notice";

  auto past = provider_.Interruptions(at);
  ASSERT_TRUE(past.ok()) << past.status();
  EXPECT_TRUE(past->empty());
  EXPECT_EQ(api_.Get("gpu-1"), nullptr) << "taken at `at`";
  auto list = provider_.List(at);
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].node, "gpu-2");
}

TEST_F(KwokProviderTest, InjectingTwiceKeepsOneTaintAndTheLaterTime) {
  ASSERT_TRUE(provider_.Create(Request("gpu-1", "key-1"), kNow).ok());
  ASSERT_TRUE(provider_.InjectInterruption("gpu-1", kNow + Seconds(60)).ok());
  ASSERT_TRUE(provider_.InjectInterruption("gpu-1", kNow + Seconds(90)).ok());
  EXPECT_EQ(Node("gpu-1")["spec"]["taints"].size(), 2u);
  EXPECT_EQ(Node("gpu-1")["metadata"]["annotations"]["tide.dev/interruption-at"], "2026-01-05T00:01:30Z");
  EXPECT_TRUE(absl::IsNotFound(provider_.InjectInterruption("gpu-404", kNow)));
}

TEST_F(KwokProviderTest, InjectRetriesAConflict) {
  ASSERT_TRUE(provider_.Create(Request("gpu-1", "key-1"), kNow).ok());
  json stale = *api_.Get("gpu-1");
  api_.injected.push_back(Reply{200, stale.dump()});  // the GET
  api_.injected.push_back(Reply{409, R"({"kind":"Status","reason":"Conflict","message":"modified"})"});
  EXPECT_TRUE(provider_.InjectInterruption("gpu-1", kNow + Seconds(60)).ok());
  EXPECT_EQ(Node("gpu-1")["metadata"]["annotations"]["tide.dev/interruption-at"], "2026-01-05T00:01:00Z");
}

// The API server down or answering garbage: Unavailable, naming what was asked.
struct FaultCase {
  std::string name;
  std::function<void(FakeNodesApi*)> fault;
  std::string message;  // part of every call's message
};

class KwokProviderFaultTest : public KwokProviderTest, public ::testing::WithParamInterface<FaultCase> {};

TEST_P(KwokProviderFaultTest, EveryCallIsUnavailable) {
  ASSERT_TRUE(provider_.Create(Request("gpu-1", "key-1"), kNow).ok());
  const size_t before = api_.size();
  GetParam().fault(&api_);
  auto check = [&](const Status& s, const char* call) {
    EXPECT_TRUE(absl::IsUnavailable(s)) << call << ": " << s;
    EXPECT_THAT(Msg(s), HasSubstr(GetParam().message)) << call;
  };
  check(provider_.Create(Request("gpu-2", "key-2"), kNow).status(), "Create");
  check(provider_.List(kNow).status(), "List");
  check(provider_.Interruptions(kNow).status(), "Interruptions");
  check(provider_.Delete("kwok://gpu-1", "del-1", kNow), "Delete");
  api_.down = false;
  api_.injected.clear();
  EXPECT_EQ(api_.size(), before) << "nothing bought or deleted on a failure";
}

INSTANTIATE_TEST_SUITE_P(
    Faults, KwokProviderFaultTest,
    ::testing::Values(
        FaultCase{"Down", [](FakeNodesApi* a) { a->down = true; }, "connection refused"},
        FaultCase{"ServerError",
                  [](FakeNodesApi* a) {
                    for (int i = 0; i < 4; ++i) a->injected.push_back(Reply{503, "etcd is down"});
                  },
                  "HTTP 503"},
        FaultCase{"Garbage",
                  [](FakeNodesApi* a) {
                    for (int i = 0; i < 4; ++i) a->injected.push_back(Reply{200, "<html>proxy error</html>"});
                  },
                  "HTTP 200 but the reply is not a JSON object"}),
    [](const ::testing::TestParamInfo<FaultCase>& i) { return i.param.name; });

TEST_F(KwokProviderTest, AFailedReclaimNamesTheNode) {
  ASSERT_TRUE(provider_.Create(Request("gpu-1", "key-1"), kNow).ok());
  ASSERT_TRUE(provider_.InjectInterruption("gpu-1", kNow + Seconds(10)).ok());
  // The list answers; the DELETE that carries out the notice does not.
  const json* n = api_.Get("gpu-1");
  api_.injected.push_back(Reply{200, json{{"kind", "NodeList"}, {"metadata", {{"resourceVersion", "9"}}},
                                          {"items", json::array({*n})}}.dump()});
  api_.injected.push_back(Reply{503, R"({"kind":"Status","message":"etcdserver: request timed out"})"});
  auto list = provider_.List(kNow + Seconds(10));
  EXPECT_TRUE(absl::IsUnavailable(list.status())) << list.status();
  EXPECT_THAT(Msg(list.status()), HasSubstr("delete node gpu-1: HTTP 503"));
  auto later = provider_.List(kNow + Seconds(11));
  ASSERT_TRUE(later.ok()) << later.status();
  EXPECT_TRUE(later->empty()) << "carried out on the next call";
}

TEST_F(KwokProviderTest, AnUnreadableTimeAnnotationIsUnavailable) {
  ASSERT_TRUE(provider_.Create(Request("gpu-1", "key-1"), kNow).ok());
  json bad = {{"metadata", {{"annotations", {{"tide.dev/interruption-at", "soon"}}}}}};
  ASSERT_TRUE(api_.Request("PATCH", "/api/v1/nodes/gpu-1", bad.dump(), "application/merge-patch+json").ok());
  auto notices = provider_.Interruptions(kNow);
  EXPECT_TRUE(absl::IsUnavailable(notices.status())) << notices.status();
  EXPECT_THAT(Msg(notices.status()), HasSubstr("node gpu-1: annotation tide.dev/interruption-at: 'soon'"));
  EXPECT_NE(api_.Get("gpu-1"), nullptr);
}

TEST_F(KwokProviderTest, ARefusedRequestStaysInvalidArgument) {
  api_.injected.push_back(
      Reply{422, R"({"kind":"Status","reason":"Invalid","message":"Node \"GPU_1\" is invalid: metadata.name"})"});
  auto made = provider_.Create(Request("GPU_1", "key-1"), kNow);
  EXPECT_TRUE(absl::IsInvalidArgument(made.status())) << made.status();
  EXPECT_THAT(Msg(made.status()), HasSubstr("create node GPU_1: HTTP 422"));
}

TEST_F(KwokProviderTest, AnotherLabelPrefix) {
  KwokProvider::Options o = Options();
  o.label_prefix = "tide.example.com";
  KwokProvider p(o, &client_);
  EXPECT_EQ(p.Selector(), "tide.example.com/provider=kwok");
  ASSERT_TRUE(p.Create(Request("gpu-1", "key-1"), kNow).ok());
  EXPECT_EQ(Node("gpu-1")["metadata"]["labels"]["tide.example.com/pool"], "a100-spot");
  ASSERT_TRUE(p.InjectInterruption("gpu-1", kNow + Seconds(10)).ok());
  EXPECT_EQ(Node("gpu-1")["spec"]["taints"][1]["key"], "tide.example.com/interruption");
  auto list = provider_.List(kNow);  // the tide.dev provider sees none of it
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(list->empty());
}

TEST(KwokConfigTest, OptionsFromTheConfiguration) {
  config::Config c;
  model::NodePool a;
  a.name = "a100-reserved";
  a.type.gpus = 8;
  a.type.cpus = 64;
  a.type.memory_gib = 512;
  a.tier = model::Tier::kReserved;
  model::NodePool b;
  b.name = "t4-spot";
  b.type.gpus = 4;
  b.tier = model::Tier::kSpot;
  c.cluster.pools = {a, b};
  c.live.kubernetes.label_prefix = "tide.example.com";
  KwokProvider::Options o = KwokOptionsFor(c);
  EXPECT_EQ(o.label_prefix, "tide.example.com");
  ASSERT_EQ(o.pools.size(), 2u);
  EXPECT_EQ(o.pools["a100-reserved"].gpus, 8);
  EXPECT_EQ(o.pools["a100-reserved"].cpus, 64);
  EXPECT_EQ(o.pools["a100-reserved"].memory_gib, 512);
  EXPECT_EQ(o.pools["a100-reserved"].capacity_type, "reserved");
  EXPECT_EQ(o.pools["t4-spot"].gpus, 4);
  EXPECT_EQ(o.pools["t4-spot"].capacity_type, "spot");
  EXPECT_TRUE(o.pools["t4-spot"].labels.empty());
  EXPECT_TRUE(o.pools["t4-spot"].taints.empty());
}

TEST(KwokConfigTest, KwokNeedsTheKubernetesBackend) {
  config::Config c;
  c.source = "lab.yaml";
  c.live.backend = "slurm";
  c.live.provider.kind = "kwok";
  auto p = MakeKwokProvider(c);
  EXPECT_TRUE(absl::IsFailedPrecondition(p.status())) << p.status();
  EXPECT_THAT(Msg(p.status()), HasSubstr("lab.yaml: live.provider.kind: kwok"));
  EXPECT_THAT(Msg(p.status()), HasSubstr("not slurm"));
}

TEST(KwokConfigTest, AKubeconfigThatCannotBeReadIsAnError) {
  config::Config c;
  c.live.backend = "kubernetes";
  c.live.kubernetes.kubeconfig = "/nonexistent/kubeconfig";
  auto p = MakeKwokProvider(c);
  EXPECT_FALSE(p.ok());
  EXPECT_THAT(Msg(p.status()), HasSubstr("/nonexistent/kubeconfig"));
}


// Interruptions reuses List's sweep only when nothing came between: a notice
// injected after the List is seen at once, in the same second.
TEST_F(KwokProviderTest, InterruptionsAfterAnInjectionSeeItInTheSameSecond) {
  ASSERT_TRUE(provider_.Create(Request("gpu-1", "key-1"), kNow).ok());
  ASSERT_TRUE(provider_.List(kNow).ok());
  ASSERT_TRUE(provider_.InjectInterruption("gpu-1", kNow + Seconds(30)).ok());
  auto notices = provider_.Interruptions(kNow);
  ASSERT_TRUE(notices.ok()) << notices.status();
  ASSERT_EQ(notices->size(), 1u);
  EXPECT_EQ((*notices)[0].node, "gpu-1");
}

}  // namespace
}  // namespace tide::providers
