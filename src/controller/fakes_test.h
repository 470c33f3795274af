// Fakes for the controller's tests: a provider that records every call and
// can be told to fail the next one, and the configuration the tests share.
// The workload managers are testutil's: FakeSlurm (the real Slurm backend
// over recorded tool replies) and FakeWorkload (tide's terms).
#ifndef TIDE_CONTROLLER_FAKES_TEST_H_
#define TIDE_CONTROLLER_FAKES_TEST_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/slurm/slurm_backend.h"
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
  Status next_error = OkStatus();
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
  Result<std::vector<providers::Instance>> List(Timestamp) override { return instances; }
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

}  // namespace tide::controller::testing

#endif  // TIDE_CONTROLLER_FAKES_TEST_H_
