#include "controller/controller.h"

#include "controller/fakes_test.h"
#include "gtest/gtest.h"

namespace tide::controller {
namespace {

using testing::SlurmJob;
using testing::SlurmNode;
const Timestamp kNow = FromUnixSeconds(1'800'000'200);

struct Rig {
  config::Config cfg = testing::TwoPools();
  testing::FakeBackend backend;
  testing::FakeProvider provider;
  std::unique_ptr<Store> store = *Store::Open(":memory:");
  std::vector<std::string> log;

  Rig() {
    for (int i = 1; i <= 4; ++i) {
      backend.obs.nodes.push_back(SlurmNode(StrCat("gpu", i), "idle", {"CLOUD", "POWERED_DOWN", "DRAIN"}, 0,
                                            "tide: not provisioned"));
    }
    for (int j = 1; j <= 6; ++j) backend.obs.jobs.push_back(SlurmJob(j, "PENDING", 2));
  }
  std::unique_ptr<Controller> Make(bool dry_run) {
    ControllerOptions o;
    o.dry_run = dry_run;
    return std::make_unique<Controller>(cfg, *MapSlots(cfg), *autoscale::Autoscaler::Make(cfg.policies.tide), &backend,
                                        &provider, store.get(), nullptr, o,
                                        [this](const std::string& l) { log.push_back(l); });
  }
};

TEST(Controller, BuysForWaitingJobsWithinOneLoop) {
  Rig r;
  auto c = r.Make(false);
  LoopReport rep = c->RunLoop(kNow);
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_EQ(rep.pending_jobs, 6);
  EXPECT_EQ(rep.pending_gpus, 12);
  EXPECT_EQ(rep.acted.creates, 2);  // 12 GPUs: two 8-GPU nodes
  EXPECT_NE(c->MetricsText().find("tide_pending_gpus 12"), std::string::npos);
  EXPECT_NE(c->StatusJson().find("\"ok\": true"), std::string::npos);
  std::string why;
  EXPECT_TRUE(c->Healthy(kNow, &why)) << why;
  // The next loop sees them booting and buys nothing more.
  rep = c->RunLoop(kNow + Seconds(10));
  EXPECT_EQ(rep.acted.creates, 0);
  EXPECT_EQ(r.provider.instances.size(), 2u);
}

TEST(Controller, AFailedObservationDecidesNothing) {
  Rig r;
  r.backend.observe_error = absl::InvalidArgumentError("squeue --json: not JSON");
  auto c = r.Make(false);
  LoopReport rep = c->RunLoop(kNow);
  EXPECT_FALSE(rep.ok);
  EXPECT_NE(rep.error.find("not JSON"), std::string::npos);
  EXPECT_TRUE(r.provider.calls.empty());
  EXPECT_TRUE(r.backend.Actions().empty());
  EXPECT_NE(c->StatusJson().find("not JSON"), std::string::npos);
  EXPECT_NE(c->MetricsText().find("tide_loop_errors_total{source=\"slurm\"} 1"), std::string::npos);
  std::string why;
  EXPECT_FALSE(c->Healthy(kNow, &why));
}

TEST(Controller, DryRunPrintsThePlanAndTouchesNothing) {
  Rig r;
  auto c = r.Make(true);
  LoopReport rep = c->RunLoop(kNow);
  ASSERT_TRUE(rep.ok);
  EXPECT_FALSE(rep.plan.empty());
  EXPECT_TRUE(r.provider.calls.empty());
  EXPECT_TRUE(r.backend.Actions().empty());
  bool printed = false;
  for (const auto& l : r.log) printed |= l.rfind("[dry-run] plan: scale-up", 0) == 0;
  EXPECT_TRUE(printed);
  EXPECT_TRUE(r.store->Instances(true)->empty());
}

TEST(ReasonClass, FoldsNumbers) {
  EXPECT_EQ(ReasonClass("7 pending GPU jobs waited 45s: 12 GPUs"), ReasonClass("3 pending GPU jobs waited 30s"));
  EXPECT_EQ(ReasonClass(""), "none");
}

}  // namespace
}  // namespace tide::controller
