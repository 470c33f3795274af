// The kwok provider against a real API server and a real kwok: the test bed
// that tests/integration/k8s/run_gtest.sh starts (scripts/k8s-testbed).
// Reads the test bed's DIR/env from $TIDE_K8S_ENV; skips (GTEST_SKIP)
// without it. Not a unit test: registered only under the `integration`
// label. Times are the real clock's (the provider is handed clock.Now()),
// waits are bounded polls, never assertions on how long anything took.
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include "backends/kubernetes/kube_client.h"
#include "backends/kubernetes/kube_config.h"
#include "backends/kubernetes/kube_http.h"
#include "core/strings.h"
#include "gmock/gmock.h"
#include "backends/kubernetes/kube_testbed_test.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "providers/kwok/kwok_provider.h"

namespace tide::providers {
namespace {

using backends::kube::testing::ReadTestBedEnv;
using backends::kube::testing::WaitFor;

namespace kube = backends::kube;
using json = nlohmann::json;

const Instance* Find(const std::vector<Instance>& list, const std::string& node) {
  for (const Instance& i : list) {
    if (i.node == node) return &i;
  }
  return nullptr;
}

class KwokIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* env_file = std::getenv("TIDE_K8S_ENV");
    if (env_file == nullptr) GTEST_SKIP() << "TIDE_K8S_ENV is not set: run tests/integration/k8s/run_gtest.sh";
    env_ = ReadTestBedEnv(env_file);
    auto conn = kube::LoadKubeconfig(env_["KUBECONFIG"]);
    ASSERT_TRUE(conn.ok()) << conn.status();
    auto t = kube::HttpTransport::Create(*conn);
    ASSERT_TRUE(t.ok()) << t.status();
    transport_ = std::move(*t);
    client_ = std::make_unique<kube::Client>(transport_.get());
  }

  static KwokProvider::Options Options() {
    KwokProvider::Options o;
    KwokProvider::PoolOptions spot;
    spot.gpus = 8;
    spot.capacity_type = "spot";
    o.pools["a100x8-spot"] = spot;
    return o;
  }

  static CreateRequest Request(const std::string& node, const std::string& key, Duration boot) {
    CreateRequest r;
    r.pool = "a100x8-spot";
    r.node = node;
    r.instance_type = "a100x8";
    r.tier = model::Tier::kSpot;
    r.idempotency_key = key;
    r.boot_delay = boot;
    return r;
  }

  std::map<std::string, std::string> env_;
  std::unique_ptr<kube::HttpTransport> transport_;
  std::unique_ptr<kube::Client> client_;
  RealClock clock_;
};

TEST_F(KwokIntegrationTest, BootsListsInterruptsAndDeletes) {
  KwokProvider provider(Options(), client_.get());

  // Bought with a 2 s boot delay: the Node is there at once, NotReady.
  auto made = provider.Create(Request("kwok-spot-0", "integration-key-0", Seconds(2)), clock_.Now());
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_TRUE(made->id.rfind("kwok://kwok-spot-0/", 0) == 0) << made->id;
  EXPECT_EQ(made->state, "pending");
  auto node = client_->GetNode("kwok-spot-0");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->provider_id, "kwok://kwok-spot-0");
  EXPECT_EQ(node->meta.labels["tide.dev/pool"], "a100x8-spot");
  EXPECT_EQ(node->meta.labels["karpenter.sh/capacity-type"], "spot");
  EXPECT_EQ(node->meta.annotations["kwok.x-k8s.io/node"], "fake");
  // kwok makes a node without ready-at Ready within a fraction of a second;
  // this one it must hold until ready-at (at least 1 s away: times are whole
  // seconds).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  node = client_->GetNode("kwok-spot-0");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_FALSE(node->IsReady()) << "Ready before its boot delay";

  // A second Create with the key (a retry) buys nothing.
  auto again = provider.Create(Request("kwok-spot-0", "integration-key-0", Seconds(2)), clock_.Now());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->id, made->id);

  // At ready-at the provider reports it running, and kwok makes it Ready
  // with its 8 GPUs allocatable.
  ASSERT_TRUE(WaitFor(15, [&] {
    auto list = provider.List(clock_.Now());
    const Instance* i = list.ok() ? Find(*list, "kwok-spot-0") : nullptr;
    return i != nullptr && i->state == "running";
  }));
  ASSERT_TRUE(WaitFor(15, [&] {
    auto n = client_->GetNode("kwok-spot-0");
    return n.ok() && n->IsReady() && n->allocatable.gpus == 8;
  })) << "kwok did not make the node Ready with nvidia.com/gpu 8";

  // A restarted tide (a new provider, nothing in memory) finds it.
  KwokProvider restarted(Options(), client_.get());
  auto listed = restarted.List(clock_.Now());
  ASSERT_TRUE(listed.ok()) << listed.status();
  const Instance* found = Find(*listed, "kwok-spot-0");
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->idempotency_key, "integration-key-0");
  EXPECT_EQ(found->pool, "a100x8-spot");
  EXPECT_EQ(found->state, "running");

  // A second node, ready at once; its notice comes the way a test would
  // send it with curl (one merge patch of the taints and the annotation).
  auto other = provider.Create(Request("kwok-spot-1", "integration-key-1", Seconds(0)), clock_.Now());
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->state, "running");

  // A spot interruption: notice now, the node taken 3 s later.
  const Timestamp at = clock_.Now() + Seconds(3);
  ASSERT_TRUE(provider.InjectInterruption("kwok-spot-0", at).ok());
  node = client_->GetNode("kwok-spot-0");
  ASSERT_TRUE(node.ok()) << node.status();
  bool tainted = false;
  for (const auto& t : node->taints) tainted |= t.key == "tide.dev/interruption" && t.effect == "NoSchedule";
  EXPECT_TRUE(tainted);
  auto notices = provider.Interruptions(clock_.Now());
  ASSERT_TRUE(notices.ok()) << notices.status();
  ASSERT_EQ(notices->size(), 1u);
  EXPECT_EQ((*notices)[0].node, "kwok-spot-0");
  EXPECT_EQ((*notices)[0].at, at);
  ASSERT_TRUE(WaitFor(15, [&] {
    auto n = provider.Interruptions(clock_.Now());
    return n.ok() && absl::IsNotFound(client_->GetNode("kwok-spot-0").status());
  })) << "the interrupted node was not deleted after its time";
  listed = provider.List(clock_.Now());
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(Find(*listed, "kwok-spot-0"), nullptr);
  EXPECT_NE(Find(*listed, "kwok-spot-1"), nullptr);

  // The curl recipe of kwok_provider.h, sent as it is.
  const std::string at1 = FormatTimestamp(clock_.Now() + Seconds(60));
  const json patch = {{"metadata", {{"annotations", {{"tide.dev/interruption-at", at1}}}}},
                      {"spec", {{"taints", json::array({{{"key", "tide.dev/interruption"}, {"effect", "NoSchedule"}}})}}}};
  auto r = transport_->Request("PATCH", "/api/v1/nodes/kwok-spot-1", patch.dump(), "application/merge-patch+json");
  ASSERT_TRUE(r.ok() && kube::StatusFromReply(*r, "patch").ok()) << (r.ok() ? r->body : std::string(Message(r.status())));
  notices = provider.Interruptions(clock_.Now());
  ASSERT_TRUE(notices.ok()) << notices.status();
  ASSERT_EQ(notices->size(), 1u);
  EXPECT_EQ((*notices)[0].node, "kwok-spot-1");

  // Delete, twice.
  ASSERT_TRUE(provider.Delete(other->id, "integration-delete-1", clock_.Now()).ok());
  EXPECT_TRUE(absl::IsNotFound(client_->GetNode("kwok-spot-1").status()));
  EXPECT_TRUE(provider.Delete(other->id, "integration-delete-1", clock_.Now()).ok());
  listed = provider.List(clock_.Now());
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_TRUE(listed->empty());
}

TEST_F(KwokIntegrationTest, AServerThatDoesNotAnswerIsUnavailable) {
  kube::Connection c;
  c.server = "https://127.0.0.1:1";  // nothing listens on port 1
  c.insecure_skip_tls_verify = true;
  c.source = "a closed port";
  kube::HttpOptions ho;
  ho.connect_timeout = Seconds(2);
  auto t = kube::HttpTransport::Create(c, ho);
  ASSERT_TRUE(t.ok()) << t.status();
  kube::Client dead(t->get());
  KwokProvider provider(Options(), &dead);
  auto list = provider.List(clock_.Now());
  EXPECT_TRUE(absl::IsUnavailable(list.status())) << list.status();
  auto made = provider.Create(Request("kwok-never", "never", Seconds(0)), clock_.Now());
  EXPECT_TRUE(absl::IsUnavailable(made.status())) << made.status();
}

}  // namespace
}  // namespace tide::providers
