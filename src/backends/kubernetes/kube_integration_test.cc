// The Kubernetes client against a real API server: the test bed that
// tests/integration/k8s/run_gtest.sh starts (scripts/k8s-testbed). Reads
// the test bed's DIR/env from $TIDE_K8S_ENV; skips (GTEST_SKIP) without it.
// Not a unit test: registered only under the `integration` label.
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "backends/kubernetes/kube_client.h"
#include "backends/kubernetes/kube_config.h"
#include "backends/kubernetes/kube_http.h"
#include "backends/kubernetes/kube_watch.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "backends/kubernetes/kube_testbed_test.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tide::backends::kube {
namespace {

using testing::ReadTestBedEnv;
using testing::WaitFor;

using json = nlohmann::json;
using ::testing::HasSubstr;

class KubeIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* env_file = std::getenv("TIDE_K8S_ENV");
    if (env_file == nullptr) GTEST_SKIP() << "TIDE_K8S_ENV is not set: run tests/integration/k8s/run_gtest.sh";
    env_ = ReadTestBedEnv(env_file);
    auto conn = LoadKubeconfig(env_["KUBECONFIG"]);
    ASSERT_TRUE(conn.ok()) << conn.status();
    auto t = HttpTransport::Create(*conn);
    ASSERT_TRUE(t.ok()) << t.status();
    transport_ = std::move(*t);
    client_ = std::make_unique<Client>(transport_.get());
    // The ServiceAccount admission plugin refuses pods until default/default exists.
    ASSERT_TRUE(WaitFor(30, [&] {
      return client_->GetJson("/api/v1/namespaces/default/serviceaccounts/default", "serviceaccount").ok();
    }));
  }

  Status CreatePod(const json& pod) {
    auto r = transport_->Request("POST", "/api/v1/namespaces/default/pods", pod.dump());
    if (!r.ok()) return r.status();
    return StatusFromReply(*r, StrCat("create pod ", pod["metadata"]["name"].get<std::string>()));
  }

  static json Pod(const std::string& name, std::map<std::string, std::string> labels = {}) {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"labels", labels}}},
            {"spec",
             {{"schedulerName", "tide"},
              {"tolerations", json::array({{{"operator", "Exists"}}})},
              {"containers",
               json::array({{{"name", "main"},
                             {"image", "trainer"},
                             {"resources", {{"limits", {{"nvidia.com/gpu", "2"}}}}}}})}}}};
  }

  std::map<std::string, std::string> env_;
  std::unique_ptr<HttpTransport> transport_;
  std::unique_ptr<Client> client_;
  RealClock clock_;
  RealSleeper sleeper_;
};

TEST_F(KubeIntegrationTest, ClientCertificateAuthenticates) {
  Connection c;
  c.server = env_["K8S_API"];
  c.ca_file = env_["K8S_CA_FILE"];
  c.client_cert_file = env_["K8S_CLIENT_CERT"];
  c.client_key_file = env_["K8S_CLIENT_KEY"];
  c.source = "test bed admin certificate";
  auto t = HttpTransport::Create(c);
  ASSERT_TRUE(t.ok()) << t.status();
  Client admin(t->get());
  auto v = admin.GetJson("/version", "version");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ((*v)["gitVersion"], env_["K8S_VERSION"]);
  // No credentials at all: the API server says who is refused.
  c.client_cert_file.clear();
  c.client_key_file.clear();
  auto anon = HttpTransport::Create(c);
  ASSERT_TRUE(anon.ok());
  auto nodes = Client(anon->get()).ListNodes();
  EXPECT_TRUE(absl::IsPermissionDenied(nodes.status()) || absl::IsUnauthenticated(nodes.status())) << nodes.status();
}

TEST_F(KubeIntegrationTest, WatchesBindsEvictsAndReports) {
  InformerOptions o;
  o.watch_timeout = Seconds(5);  // the server ends each watch soon; the informer reopens it
  o.page_size = 1;               // paging exercised on the real server
  NodeInformer nodes(transport_.get(), &clock_, &sleeper_, o);
  o.namespace_name = "default";
  PodInformer pods(transport_.get(), &clock_, &sleeper_, o);
  PodDisruptionBudgetInformer pdbs(transport_.get(), &clock_, &sleeper_, o);
  std::jthread node_loop([&](std::stop_token st) { nodes.Run(st); });
  std::jthread pod_loop([&](std::stop_token st) { pods.Run(st); });
  std::jthread pdb_loop([&](std::stop_token st) { pdbs.Run(st); });
  ASSERT_TRUE(WaitFor(30, [&] { return nodes.Synced() && pods.Synced() && pdbs.Synced(); }))
      << nodes.State().last_error << pods.State().last_error << pdbs.State().last_error;

  // A kwok node with 8 GPUs turns Ready in the cache.
  NodeTemplate t;
  t.name = "kwok-gpu-0";
  t.labels = {{"tide.dev/pool", "a100x8-ondemand"}};
  t.annotations = {{"kwok.x-k8s.io/node", "fake"}};
  t.capacity = {{"nvidia.com/gpu", "8"}, {"cpu", "96"}, {"memory", "1Ti"}, {"pods", "110"}};
  auto created = client_->CreateNode(t);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_TRUE(absl::IsAlreadyExists(client_->CreateNode(t).status()));
  ASSERT_TRUE(WaitFor(30, [&] {
    auto n = nodes.Get("kwok-gpu-0");
    return n && n->IsReady() && n->allocatable.gpus == 8;
  }));

  // Two pods for tide: one bound (and run by kwok), one told why it waits.
  ASSERT_TRUE(CreatePod(Pod("bound", {{"app", "guarded"}})).ok());
  ASSERT_TRUE(CreatePod(Pod("waiting")).ok());
  ASSERT_TRUE(WaitFor(30, [&] { return pods.Get("default/bound") && pods.Get("default/waiting"); }));
  EXPECT_EQ(pods.Get("default/bound")->requests.gpus, 2);
  const std::string uid = pods.Get("default/bound")->meta.uid;
  ASSERT_TRUE(client_->BindPod("default", "bound", "kwok-gpu-0", uid).ok());
  EXPECT_FALSE(client_->BindPod("default", "bound", "kwok-gpu-0", uid).ok());  // bound already
  ASSERT_TRUE(WaitFor(30, [&] {
    auto p = pods.Get("default/bound");
    return p && p->node_name == "kwok-gpu-0" && p->phase == "Running";
  }));
  ASSERT_TRUE(
      client_->SetPodScheduled("default", "waiting", "False", "Unschedulable", "gang 1/1 waits for 1 node", clock_.Now())
          .ok());
  ASSERT_TRUE(WaitFor(30, [&] {
    auto p = pods.Get("default/waiting");
    const Condition* c = p ? p->FindCondition("PodScheduled") : nullptr;
    return c != nullptr && c->reason == "Unschedulable" && c->message == "gang 1/1 waits for 1 node";
  }));

  // An Event about the waiting pod, as kubectl describe finds it.
  auto pod = client_->GetPod("default", "waiting");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EventSpec e;
  e.kind = "Pod";
  e.namespace_name = "default";
  e.name = "waiting";
  e.uid = pod->meta.uid;
  e.reason = "ScaleUp";
  e.message = "buying 1 node of pool a100x8-ondemand";
  ASSERT_TRUE(client_->PostEvent(e, clock_.Now()).ok());
  auto events = client_->ListOnePage(CollectionPath("", "events", "default"),
                                     ListOptions{"", "involvedObject.name=waiting", 0});
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->items.size(), 1u);
  EXPECT_EQ(events->items[0]["source"]["component"], "tide");

  // A budget that allows no disruption: the eviction is refused with 429.
  json pdb = {{"apiVersion", "policy/v1"},
              {"kind", "PodDisruptionBudget"},
              {"metadata", {{"name", "guard"}}},
              {"spec", {{"minAvailable", 1}, {"selector", {{"matchLabels", {{"app", "guarded"}}}}}}}};
  auto r = transport_->Request("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb.dump());
  ASSERT_TRUE(r.ok() && StatusFromReply(*r, "create pdb").ok()) << (r.ok() ? r->body : std::string(Message(r.status())));
  ASSERT_TRUE(WaitFor(60, [&] {
    auto b = pdbs.Get("default/guard");
    return b && b->current_healthy == 1 && b->desired_healthy == 1;
  }));
  Status evicted = client_->EvictPod("default", "bound", Seconds(30));
  EXPECT_TRUE(absl::IsResourceExhausted(evicted)) << evicted;
  EXPECT_THAT(std::string(Message(evicted)), HasSubstr("pod default/bound: eviction refused by a disruption budget"));
  // Without a budget in the way the waiting pod is evicted (201), and the cache sees it go.
  EXPECT_TRUE(client_->EvictPod("default", "waiting", Seconds(0)).ok());
  EXPECT_TRUE(WaitFor(30, [&] { return !pods.Get("default/waiting"); }));

  // Cordon, then delete the node: the cache sees both.
  NodePatch cordon;
  cordon.unschedulable = true;
  cordon.annotations = {{"tide.dev/cordon", "release"}};
  ASSERT_TRUE(client_->PatchNode("kwok-gpu-0", cordon).ok());
  ASSERT_TRUE(WaitFor(30, [&] {
    auto n = nodes.Get("kwok-gpu-0");
    return n && n->unschedulable;
  }));
  ASSERT_TRUE(client_->DeleteNode("kwok-gpu-0").ok());
  EXPECT_TRUE(WaitFor(30, [&] { return !nodes.Get("kwok-gpu-0"); }));
  EXPECT_TRUE(absl::IsNotFound(client_->DeleteNode("kwok-gpu-0")));

  EXPECT_TRUE(nodes.Synced()) << nodes.State().last_error;
  EXPECT_TRUE(pods.Synced()) << pods.State().last_error;
  EXPECT_EQ(nodes.State().lists, 1);  // the watches kept the view: no relist
  EXPECT_EQ(pods.State().lists, 1);
}

}  // namespace
}  // namespace tide::backends::kube
