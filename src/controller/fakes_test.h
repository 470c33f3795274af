// Fakes for the controller's tests: a workload manager and a provider that
// record every call and can be told to fail the next one.
#ifndef TIDE_CONTROLLER_FAKES_TEST_H_
#define TIDE_CONTROLLER_FAKES_TEST_H_

#include <functional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "config/config.h"
#include "core/strings.h"
#include "providers/provider.h"

namespace tide::controller::testing {

class FakeBackend : public backends::ClusterBackend {
 public:
  backends::Observation obs;
  Status observe_error = OkStatus();
  std::vector<std::string> calls;  // "drain gpu1 <reason>", "requeue 7", ...

  Result<backends::Observation> Observe() override {
    calls.push_back("observe");
    if (!observe_error.ok()) return observe_error;
    return obs;
  }
  Status Drain(const std::string& node, const std::string& reason) override { return Call(StrCat("drain ", node, " ", reason)); }
  Status Undrain(const std::string& node) override { return Call(StrCat("undrain ", node)); }
  Status PowerUp(const std::string& node) override { return Call(StrCat("power_up ", node)); }
  Status PowerDown(const std::string& node) override { return Call(StrCat("power_down ", node)); }
  Status Requeue(int64_t job) override { return Call(StrCat("requeue ", job)); }
  Status Cancel(int64_t job) override { return Call(StrCat("cancel ", job)); }
  Status Signal(int64_t job, const std::string& signal) override { return Call(StrCat("signal ", job, " ", signal)); }
  // Calls other than observe.
  std::vector<std::string> Actions() const {
    std::vector<std::string> out;
    for (const auto& c : calls) {
      if (c != "observe") out.push_back(c);
    }
    return out;
  }

 private:
  Status Call(std::string c) {
    calls.push_back(std::move(c));
    return OkStatus();
  }
};

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

// A Slurm node as sinfo would show it.
inline backends::ObservedNode SlurmNode(std::string name, std::string state, std::vector<std::string> flags = {},
                                        int used = 0, std::string reason = "") {
  backends::ObservedNode n;
  n.name = std::move(name);
  n.state = std::move(state);
  n.flags = std::move(flags);
  n.gpus = 8;
  n.gpus_used = used;
  n.reason = std::move(reason);
  n.partitions = {"gpu"};
  return n;
}

inline backends::ObservedJob SlurmJob(int64_t id, std::string state, int gpus, std::vector<std::string> nodes = {},
                                      std::string partition = "gpu") {
  backends::ObservedJob j;
  j.id = id;
  j.state = std::move(state);
  j.partition = std::move(partition);
  j.gpus_per_node = gpus;
  j.gpus = gpus;
  j.nodes = std::move(nodes);
  j.submit = FromUnixSeconds(1'800'000'000);
  j.start = j.nodes.empty() ? Timestamp{} : FromUnixSeconds(1'800'000'100);
  j.state_reason = j.nodes.empty() ? "Resources" : "None";
  return j;
}

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

}  // namespace tide::controller::testing

#endif  // TIDE_CONTROLLER_FAKES_TEST_H_
