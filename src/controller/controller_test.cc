#include "controller/controller.h"

#include <algorithm>

#include "controller/fakes_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace tide::controller {
namespace {

using testing::SlurmJob;
using testing::SlurmNode;
const Timestamp kNow = FromUnixSeconds(1'800'000'200);

using Rig = testing::SlurmRig;

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
  r.slurm.query_error = absl::InvalidArgumentError("squeue --json: not JSON");
  auto c = r.Make(false);
  LoopReport rep = c->RunLoop(kNow);
  EXPECT_FALSE(rep.ok);
  EXPECT_NE(rep.error.find("not JSON"), std::string::npos);
  EXPECT_TRUE(r.provider.calls.empty());
  EXPECT_TRUE(r.slurm.Actions().empty());
  EXPECT_NE(c->StatusJson().find("not JSON"), std::string::npos);
  EXPECT_NE(c->MetricsText().find("tide_loop_errors_total{source=\"slurm\"} 1"), std::string::npos);
  std::string why;
  EXPECT_FALSE(c->Healthy(kNow, &why));
}

TEST(Controller, EachGoodLoopRecordsASampleForTheStatusPage) {
  Rig r;
  r.slurm.view.nodes[0] = SlurmNode("gpu1", "mixed", {}, 8);
  r.slurm.view.jobs.push_back(SlurmJob(7, "RUNNING", 8, {"gpu1"}));
  auto c = r.Make(false);
  ASSERT_TRUE(c->RunLoop(kNow).ok);  // buys for the 12 pending GPUs
  const size_t bought = r.provider.instances.size();
  ASSERT_GT(bought, 0u);
  ASSERT_TRUE(c->RunLoop(kNow + Seconds(10)).ok);
  // A failed observation records nothing: stale data is not a fact.
  r.slurm.query_error = absl::UnavailableError("slurmctld does not answer");
  ASSERT_FALSE(c->RunLoop(kNow + Seconds(20)).ok);
  r.slurm.query_error = OkStatus();
  ASSERT_TRUE(c->RunLoop(kNow + Seconds(30)).ok);

  auto samples = r.store->Samples(kInfinitePast);
  ASSERT_TRUE(samples.ok());
  std::vector<int64_t> times;
  for (const auto& s : *samples) times.push_back((s.at - kNow).count());
  EXPECT_EQ(times, (std::vector<int64_t>{0, 10, 30}));
  EXPECT_DOUBLE_EQ((*samples)[0].demand_gpus, 12 + 8);
  EXPECT_DOUBLE_EQ((*samples)[0].capacity_gpus.total(), 0);             // decided on before the buys
  EXPECT_DOUBLE_EQ((*samples)[1].capacity_gpus.total(), 8.0 * bought);  // booting
  // Job 7's start, once however many loops saw it running.
  auto starts = r.store->JobStarts(kInfinitePast);
  ASSERT_TRUE(starts.ok());
  ASSERT_EQ(starts->size(), 1u);
  EXPECT_EQ((*starts)[0].job, "7");

  auto text = LiveReportJson(r.cfg, r.store.get(), kNow + Seconds(40));
  ASSERT_TRUE(text.ok()) << text.status();
  const auto j = nlohmann::json::parse(*text, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["mode"], "live");
  const auto& series = j["policies"][0]["timeline"]["series"];
  const auto max_of = [&](const std::string& name) {
    double m = 0;
    for (double v : series.at(name).get<std::vector<double>>()) m = std::max(m, v);
    return m;
  };
  EXPECT_DOUBLE_EQ(max_of("demand_gpus"), 20);
  EXPECT_DOUBLE_EQ(max_of("capacity_gpus/spot") + max_of("capacity_gpus/on-demand"), 8.0 * bought);
  EXPECT_DOUBLE_EQ(max_of("pending_jobs"), 6);
  EXPECT_GT(max_of("cost/spot") + max_of("cost/on-demand"), 0);
  const auto& headline = j["summary"]["policies"][0];
  EXPECT_EQ(headline["name"], "live");
  EXPECT_EQ(headline["nodes_bought"], bought);
  EXPECT_EQ(headline["jobs_running"], 1);
  EXPECT_EQ(headline["wait_s"]["p50"], 100);
}

TEST(Controller, DryRunPrintsThePlanAndTouchesNothing) {
  Rig r;
  auto c = r.Make(true);
  LoopReport rep = c->RunLoop(kNow);
  ASSERT_TRUE(rep.ok);
  EXPECT_FALSE(rep.plan.empty());
  EXPECT_TRUE(r.provider.calls.empty());
  EXPECT_TRUE(r.slurm.Actions().empty());
  bool printed = false;
  for (const auto& l : r.log) printed |= l.rfind("[dry-run] plan: scale-up", 0) == 0;
  EXPECT_TRUE(printed);
  EXPECT_TRUE(r.store->Instances(true)->empty());
  EXPECT_TRUE(r.store->Samples(kInfinitePast)->empty());
}

// A workload manager that does not schedule by itself (as Kubernetes with
// schedulerName: tide): the controller places waiting jobs with the
// simulator's scheduler and binds them, and buys only for what does not fit.
// tide's options without spare nodes against slow boots, so that what is
// bought is exactly what the jobs need.
config::Config WithoutSpares(config::Config cfg) {
  cfg.policies.tide.scale_up.hedge.nodes = 0;
  return cfg;
}

struct Unscheduled {
  config::Config cfg = WithoutSpares(testing::TwoPools());
  testing::FakeWorkload manager;
  testing::FakeProvider provider;
  std::unique_ptr<Store> store = *Store::Open(":memory:");
  std::vector<std::string> log;
  std::unique_ptr<Controller> Make(ControllerOptions options = {}) {
    return std::make_unique<Controller>(cfg, *autoscale::Autoscaler::Make(cfg.policies.tide), &manager, &provider,
                                        store.get(), nullptr, options,
                                        [this](const std::string& l) { log.push_back(l); });
  }
  // A ready node of pool 0 that tide bought.
  void ReadyNode(const std::string& name) {
    manager.obs.nodes.push_back(testing::FakeNode(name, 0));
    provider.instances.push_back({StrCat("i-", name), name, "ondemand", StrCat("k-", name), "running", kNow});
  }
};

TEST(Controller, PlacesAndBindsJobsWhenTheManagerDoesNotScheduleThem) {
  Unscheduled u;
  u.cfg.cluster.pools[0].max_nodes = 4;
  u.ReadyNode("a1");
  u.ReadyNode("a2");
  u.manager.obs.jobs = {testing::FakeJob("ml/train", 1, 8), testing::FakeJob("ml/eval", 2, 4),
                        testing::FakeJob("ml/big", 2, 8)};
  auto c = u.Make();
  LoopReport rep = c->RunLoop(kNow);
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_EQ(rep.placed, 2);
  EXPECT_EQ(rep.acted.binds, 2);
  std::vector<std::string> binds;
  for (const auto& call : u.manager.calls) {
    if (call.rfind("bind ", 0) == 0) binds.push_back(call);
  }
  EXPECT_EQ(binds, (std::vector<std::string>{"bind ml/train a1:1", "bind ml/eval a2:2"}));
  // The gang of 2 x 8 fits nowhere now: two nodes are bought for it, and
  // nothing for the jobs just bound.
  EXPECT_EQ(rep.acted.creates, 2);
  // Once bound, a job is not bound again.
  rep = c->RunLoop(kNow + Seconds(10));
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_EQ(rep.placed, 0);
  EXPECT_EQ(rep.acted.creates, 0);
}

TEST(Controller, ExplainsWhyEachWaitingJobWaitsWhenThatChanges) {
  Unscheduled u;
  u.manager.caps.explain = true;
  u.cfg.cluster.pools[0].max_nodes = 4;
  u.manager.obs.jobs = {testing::FakeJob("ml/big", 2, 8)};
  auto c = u.Make();
  auto explains = [&] {
    std::vector<std::string> out;
    for (const auto& call : u.manager.calls) {
      if (call.rfind("explain ", 0) == 0) out.push_back(call);
    }
    return out;
  };
  LoopReport rep = c->RunLoop(kNow);
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_EQ(rep.acted.creates, 2);
  ASSERT_EQ(explains().size(), 1u);
  EXPECT_THAT(explains()[0], ::testing::HasSubstr("explain ml/big: gang 2/2 waits for nodes of pool "));
  EXPECT_THAT(explains()[0], ::testing::HasSubstr(": 2 bought now, ready in about "));
  // The next loop: the nodes boot; the job is said to wait for them, once.
  rep = c->RunLoop(kNow + Seconds(10));
  ASSERT_TRUE(rep.ok) << rep.error;
  rep = c->RunLoop(kNow + Seconds(20));
  ASSERT_TRUE(rep.ok) << rep.error;
  ASSERT_EQ(explains().size(), 2u) << StrJoin(explains(), "\n");
  EXPECT_THAT(explains()[1], ::testing::HasSubstr("waits for nodes of pool "));
  EXPECT_THAT(explains()[1], ::testing::HasSubstr(", booting, ready within a minute"));
}

TEST(Controller, ExplainsNothingInADryRunOrToAManagerThatCannotShowIt) {
  Unscheduled u;
  u.manager.obs.jobs = {testing::FakeJob("ml/big", 2, 8)};
  auto c = u.Make();
  ASSERT_TRUE(c->RunLoop(kNow).ok);
  for (const auto& call : u.manager.calls) EXPECT_NE(call.rfind("explain ", 0), 0u) << call;
  Unscheduled dry;
  dry.manager.caps.explain = true;
  dry.manager.obs.jobs = {testing::FakeJob("ml/big", 2, 8)};
  ControllerOptions o;
  o.dry_run = true;
  auto d = dry.Make(o);
  ASSERT_TRUE(d->RunLoop(kNow).ok);
  EXPECT_TRUE(dry.manager.calls.empty()) << StrJoin(dry.manager.calls, "\n");
}

TEST(Controller, BuysOnlyInThePoolsAJobMayUse) {
  Unscheduled u;
  auto job = testing::FakeJob("ml/search", 1, 8);
  job.priority_class = 2;  // low: preemptible, so it may run on either pool
  u.manager.obs.jobs = {job};
  auto c = u.Make();
  LoopReport rep = c->RunLoop(kNow);
  ASSERT_TRUE(rep.ok) << rep.error;
  ASSERT_EQ(u.provider.instances.size(), 1u);
  EXPECT_EQ(u.provider.instances[0].pool, "ondemand");
  // The same job limited to pool 1 (spot) is bought for there.
  Unscheduled limited;
  job.pools = backends::PoolSet{2};
  limited.manager.obs.jobs = {job};
  rep = limited.Make()->RunLoop(kNow);
  ASSERT_TRUE(rep.ok) << rep.error;
  ASSERT_EQ(limited.provider.instances.size(), 1u);
  EXPECT_EQ(limited.provider.instances[0].pool, "spot");
}

TEST(Controller, AJobThatMayUseNoPoolIsNotDemand) {
  Unscheduled u;
  auto job = testing::FakeJob("ml/other", 1, 8);
  job.pools = 0;
  u.manager.obs.jobs = {job};
  LoopReport rep = u.Make()->RunLoop(kNow);
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_EQ(rep.pending_jobs, 0);
  EXPECT_TRUE(u.provider.instances.empty());
}

TEST(Controller, AnEvictionRefusedByABudgetIsCountedAndAskedAgain) {
  Unscheduled u;
  u.cfg.policies.tide.reclaim.enabled = false;
  u.ReadyNode("a1");
  auto low = testing::FakeJob("ml/low", 1, 8);
  low.priority_class = 2;
  low.phase = backends::JobPhase::kRunning;
  low.nodes = {"a1"};
  low.start = kNow - Seconds(600);
  u.manager.obs.nodes[0].gpus_used = 8;
  u.manager.obs.nodes[0].busy = true;
  auto high = testing::FakeJob("ml/high", 1, 8);
  high.priority_class = 0;
  high.submit = kNow - Seconds(3600);
  u.manager.obs.jobs = {low, high};
  // Both pools at their max: only preemption can start the high job.
  u.cfg.cluster.pools[0].max_nodes = 1;
  u.cfg.cluster.pools[1].max_nodes = 0;
  u.manager.refuse_evictions = true;
  auto c = u.Make();
  LoopReport rep = c->RunLoop(kNow);
  ASSERT_TRUE(rep.ok) << rep.error;
  bool preempt = false;
  for (const auto& a : rep.plan.actions) preempt |= a.kind == autoscale::ActionKind::kPreempt;
  ASSERT_TRUE(preempt) << "the plan should preempt the low job";
  EXPECT_EQ(rep.acted.refused, 1);
  EXPECT_EQ(rep.acted.evictions, 0);
  EXPECT_NE(c->MetricsText().find("tide_actions_total{action=\"refused\"} 1"), std::string::npos);
  // The budget allows it now: the same decision is carried out.
  u.manager.refuse_evictions = false;
  rep = c->RunLoop(kNow + Seconds(10));
  ASSERT_TRUE(rep.ok) << rep.error;
  EXPECT_EQ(rep.acted.evictions, 1);
}

TEST(Controller, ClassRulesMustNameAttributesTheBackendReports) {
  auto cfg = testing::TwoPools();
  testing::FakeWorkload manager;
  Status s = CheckClassRules(cfg, manager.capabilities());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(Message(s)).find("test.yaml"), std::string::npos) << s;
  EXPECT_NE(std::string(Message(s)).find("'partition' is not a job attribute the fake backend reports"),
            std::string::npos)
      << s;
  testing::FakeSlurm slurm;
  EXPECT_TRUE(CheckClassRules(cfg, testing::SlurmOver(cfg, &slurm)->capabilities()).ok());
}

TEST(ReasonClass, FoldsNumbers) {
  EXPECT_EQ(ReasonClass("7 pending GPU jobs waited 45s: 12 GPUs"), ReasonClass("3 pending GPU jobs waited 30s"));
  EXPECT_EQ(ReasonClass(""), "none");
}

}  // namespace
}  // namespace tide::controller
