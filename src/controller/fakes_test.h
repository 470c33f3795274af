// Fakes for the controller's tests: a provider that records every call and
// can be told to fail the next one, the configuration the tests share, and
// the controller over them (SlurmRig).
// The workload managers are testutil's: FakeSlurm (the real Slurm backend
// over recorded tool replies) and FakeWorkload (tide's terms).
#ifndef TIDE_CONTROLLER_FAKES_TEST_H_
#define TIDE_CONTROLLER_FAKES_TEST_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/slurm/slurm_backend.h"
#include "controller/controller.h"
#include "controller/store.h"
#include "testutil/fake_slurm.h"
#include "testutil/fake_workload.h"
#include "config/config.h"
#include "core/strings.h"
#include "providers/provider.h"

namespace tide::controller::testing {

using tide::testing::FakeSlurm;
using tide::testing::FakeJob;
using tide::testing::FakeNode;
using tide::testing::FakeWorkload;
using tide::testing::SlurmJob;
using tide::testing::SlurmNode;


class FakeProvider : public providers::CloudProvider {
 public:
  std::vector<providers::Instance> instances;
  std::vector<providers::Interruption> notices;
  Status next_error = OkStatus();   // the next create or delete fails with it
  Status list_error = OkStatus();   // List fails with it while not OK
  std::vector<std::string> calls;
  std::function<void(const providers::CreateRequest&)> on_create;  // runs inside Create

  std::string Name() const override { return "fake"; }
  Result<providers::Instance> Create(const providers::CreateRequest& r, Timestamp now) override {
    calls.push_back(StrCat("create ", r.node, " ", r.idempotency_key));
    if (on_create) on_create(r);
    if (!next_error.ok()) return std::exchange(next_error, OkStatus());
    for (const auto& i : instances) {
      if (i.idempotency_key == r.idempotency_key || i.node == r.node) return i;
    }
    providers::Instance i{StrCat("i-", r.node), r.node, r.pool, r.idempotency_key, "pending", now};
    instances.push_back(i);
    return i;
  }
  Status Delete(const std::string& id, const std::string& key, Timestamp) override {
    calls.push_back(StrCat("delete ", id));
    if (!next_error.ok()) return std::exchange(next_error, OkStatus());
    std::erase_if(instances, [&](const auto& i) { return i.id == id; });
    return OkStatus();
  }
  Result<std::vector<providers::Instance>> List(Timestamp) override {
    if (!list_error.ok()) return list_error;
    return instances;
  }
  Result<std::vector<providers::Interruption>> Interruptions(Timestamp) override { return notices; }
};

// Two pools of two 8-GPU nodes each: ondemand gpu[1-2], spot gpu[3-4].
inline config::Config TwoPools() {
  auto c = config::ParseConfig(R"(
pools:
  - {name: ondemand, instance_type: {gpus: 8}, price_per_hour: 32, max_nodes: 2, boot_delay: 60s}
  - {name: spot, instance_type: {gpus: 8}, tier: spot, price_per_hour: 10, max_nodes: 2, boot_delay: 60s}
priority_classes:
  - {name: high, value: 100}
  - {name: normal, value: 50}
  - {name: low, value: 10, preemptible: true}
live:
  jobs:
    classes: [{partition: high, class: high}]
    checkpoint_grace: 30s
  slurm:
    pools: {ondemand: "gpu[1-2]", spot: "gpu[3-4]"}
)",
                               "test.yaml");
  return *c;
}

// The Slurm backend of `cfg` over `slurm`.
inline std::unique_ptr<backends::SlurmBackend> SlurmOver(const config::Config& cfg, FakeSlurm* slurm) {
  return std::make_unique<backends::SlurmBackend>(*backends::SlurmBackendOptionsFor(cfg), slurm);
}

// A CLOUD node with no machine behind it, as tide leaves one: powered down
// and drained as not bought.
inline backends::SlurmNode UnboughtNode(std::string name) {
  return SlurmNode(std::move(name), "idle", {"CLOUD", "POWERED_DOWN", "DRAIN"}, 0, "tide: not provisioned");
}

// TwoPools' nodes gpu1-gpu4, none bought.
inline void AddUnboughtNodes(FakeSlurm* slurm) {
  for (int i = 1; i <= 4; ++i) slurm->view.nodes.push_back(UnboughtNode(StrCat("gpu", i)));
}

// A controller over the Slurm backend on FakeSlurm and a FakeProvider:
// TwoPools' four nodes unbought and six jobs waiting for 2 GPUs each (two
// nodes' worth); the store at `state` (in memory unless a path is given);
// every log line kept.
struct SlurmRig {
  config::Config cfg = TwoPools();
  FakeSlurm slurm;
  std::unique_ptr<backends::SlurmBackend> backend = SlurmOver(cfg, &slurm);
  FakeProvider provider;
  std::unique_ptr<Store> store;
  std::vector<std::string> log;

  explicit SlurmRig(const std::string& state = ":memory:") : store(*Store::Open(state)) {
    AddUnboughtNodes(&slurm);
    for (int j = 1; j <= 6; ++j) slurm.view.jobs.push_back(SlurmJob(j, "PENDING", 2));
  }
  std::unique_ptr<Controller> Make(bool dry_run = false) { return MakeOver(&provider, dry_run); }
  // Over another provider than `provider` (one that wraps it).
  std::unique_ptr<Controller> MakeOver(providers::CloudProvider* p, bool dry_run = false) {
    ControllerOptions o;
    o.dry_run = dry_run;
    return std::make_unique<Controller>(cfg, *autoscale::Autoscaler::Make(cfg.policies.tide), backend.get(), p,
                                        store.get(), nullptr, o, [this](const std::string& l) { log.push_back(l); });
  }
};

}  // namespace tide::controller::testing

#endif  // TIDE_CONTROLLER_FAKES_TEST_H_
