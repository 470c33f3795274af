// The CloudProvider contract (provider_contract.h) over every implementation:
// the local provider (with a stand-in for slurmd), the exec provider (over
// an in-memory fake cloud), the kwok provider (over an in-memory Nodes API)
// and the simulator's cloud. A new provider gets
// the suite by writing its traits here and adding them to ProviderTypes.
//
// With -DTIDE_CONTRACT_SELFTEST=ON the list also holds BrokenProvider and a
// kwok provider that forgets idempotency keys, whose tests must fail: that
// shows the suite can tell a broken provider.
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "autoscale/policy.h"
#include "backends/kubernetes/kube_client.h"
#include "backends/kubernetes/kube_fake_nodes_test.h"
#include "contract/broken_provider.h"
#include "contract/fake_cloud_runner.h"
#include "contract/provider_contract.h"
#include "core/files.h"
#include "core/process.h"
#include "core/strings.h"
#include "nlohmann/json.hpp"
#include "providers/exec/exec_provider.h"
#include "providers/kwok/kwok_provider.h"
#include "providers/local/local_provider.h"
#include "sim/simulator.h"
#include "testutil/builders.h"
#include "testutil/vector_trace.h"

namespace tide::contract {
namespace {

constexpr Timestamp kNow = FromUnixSeconds(1767571200);

// Real processes: /bin/sleep stands in for slurmd (command_override), in a
// state directory of its own.
class LocalTraits {
 public:
  static constexpr const char* kName = "Local";

  LocalTraits() {
    char tmpl[] = "/tmp/tide-contract-local-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    dir_ = tmpl;
    providers::LocalProvider::Options o;
    o.state_dir = dir_;
    o.command_override = {"/bin/sleep", "300"};
    o.stop_grace = Seconds(1);
    provider_.emplace(std::move(o));
  }

  // Every process a record names goes, with its group (only while its start
  // time still matches: a reused pid is left alone).
  ~LocalTraits() {
    Result<std::vector<std::string>> records = ListFiles(StrCat(dir_, "/instances"), ".json");
    for (const auto& path : records.ok() ? *records : std::vector<std::string>{}) {
      Result<std::string> text = ReadFile(path);
      if (!text.ok()) continue;
      const nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
      if (j.is_discarded()) continue;
      const ProcessId id{j.value("pid", int64_t{0}), j.value("start_time", uint64_t{0})};
      if (IsRunning(id)) {
        SignalProcessGroup(id.pid, SIGKILL);
        SignalProcess(id, SIGKILL);
      }
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  providers::CloudProvider& provider() { return *provider_; }
  std::string pool() { return "local-spot"; }
  std::string NextNode() { return StrCat("gpu", ++nodes_); }
  Timestamp now() { return kNow; }
  Status Interrupt(const providers::Instance& instance, Timestamp at) {
    return provider_->InjectInterruption(instance.node, at - now(), now());
  }

 private:
  std::string dir_;
  std::optional<providers::LocalProvider> provider_;
  int nodes_ = 0;
};

// The exec provider's JSON protocol, answered by a cloud in memory.
class ExecTraits {
 public:
  static constexpr const char* kName = "Exec";

  ExecTraits() : provider_(Commands(), &cloud_) {}

  providers::CloudProvider& provider() { return provider_; }
  std::string pool() { return "exec-spot"; }
  std::string NextNode() { return StrCat("node", ++nodes_); }
  Timestamp now() { return kNow; }
  Status Interrupt(const providers::Instance& instance, Timestamp at) {
    cloud_.Announce(instance.id, ToUnixSeconds(at));
    return OkStatus();
  }

 private:
  static providers::ExecProvider::Options Commands() {
    providers::ExecProvider::Options o;
    o.create = {"create"};
    o.delete_ = {"delete"};
    o.list = {"list"};
    o.interruptions = {"interruptions"};
    return o;
  }

  FakeCloudRunner cloud_;
  providers::ExecProvider provider_;
  int nodes_ = 0;
};

// The kwok provider over an in-memory Nodes API: the Node objects are its
// records.
class KwokTraits {
 public:
  static constexpr const char* kName = "Kwok";

  KwokTraits() : client_(&api_), provider_(Options(), &client_) {}

  providers::CloudProvider& provider() { return provider_; }
  std::string pool() { return "kwok-spot"; }
  std::string NextNode() { return StrCat("kwok-node-", ++nodes_); }
  Timestamp now() { return kNow; }
  Status Interrupt(const providers::Instance& instance, Timestamp at) {
    return provider_.InjectInterruption(instance.node, at);
  }

 protected:
  static providers::KwokProvider::Options Options() {
    providers::KwokProvider::Options o;
    providers::KwokProvider::PoolOptions spot;
    spot.capacity_type = "spot";
    o.pools["kwok-spot"] = spot;
    return o;
  }

  backends::kube::testing::FakeNodesApi api_;
  backends::kube::Client client_;
  providers::KwokProvider provider_;
  int nodes_ = 0;
};

// The simulator's cloud, on a one-pool spot cluster that starts with one
// node (so List is not empty to begin with), before any event has run.
class SimCloudTraits {
 public:
  static constexpr const char* kName = "Simulated";

  SimCloudTraits()
      : spec_(testing::Spec({testing::Pool("spot", 8, model::Tier::kSpot, 12, /*min_nodes=*/1, /*max_nodes=*/10)})),
        trace_({}, testing::kT0) {
    Result<autoscale::PolicyProfile> policy =
        autoscale::MakePolicy("tide", autoscale::PolicyDefaults{}, spec_, autoscale::DemandStats{16, 8});
    if (!policy.ok()) {
      ADD_FAILURE() << policy.status();
      return;
    }
    spec_for_run_ = policy->ApplyTo(spec_);
    sim_.emplace(&spec_for_run_, *policy, sim::SimOptions{}, &trace_);
    if (Status s = sim_->Init(); !s.ok()) ADD_FAILURE() << s;
  }

  providers::CloudProvider& provider() { return *sim_->cloud(); }
  std::string pool() { return "spot"; }
  // The simulated workload manager names the node, as the applier asks it to.
  std::string NextNode() {
    Result<std::string> name = sim_->workload()->RegisterNode(0, {});
    if (!name.ok()) ADD_FAILURE() << name.status();
    return name.ok() ? *name : "";
  }
  Timestamp now() { return testing::kT0; }
  Status Interrupt(const providers::Instance& instance, Timestamp at) {
    const model::NodeId id = sim_->cloud()->NodeNamed(instance.node);
    if (id == 0) return absl::NotFoundError(StrCat("no simulated node ", instance.node));
    bool changed = false;
    sim_->cloud()->SpotNoticeDue(id, at, now(), &changed);
    return OkStatus();
  }

 private:
  model::ClusterSpec spec_;
  model::ClusterSpec spec_for_run_;
  testing::VectorTrace trace_;
  std::optional<sim::Simulator> sim_;
};

#ifdef TIDE_CONTRACT_SELFTEST
// The real kwok provider behind a wrapper that loses each request's
// idempotency key (a fresh key per call, as a provider that ignored it
// would): a retry cannot find what the first call bought.
class BrokenKwokTraits : public KwokTraits {
 public:
  static constexpr const char* kName = "BrokenKwok";
  BrokenKwokTraits() : forgetful_(&provider_) {}
  providers::CloudProvider& provider() { return forgetful_; }

 private:
  class Forgetful final : public providers::CloudProvider {
   public:
    explicit Forgetful(providers::CloudProvider* real) : real_(real) {}
    std::string Name() const override { return real_->Name(); }
    Result<providers::Instance> Create(const providers::CreateRequest& request, Timestamp now) override {
      providers::CreateRequest r = request;
      r.idempotency_key = StrCat(request.idempotency_key, "-", ++calls_);  // wrong on purpose
      Result<providers::Instance> made = real_->Create(r, now);
      if (made.ok()) made->idempotency_key = request.idempotency_key;
      return made;
    }
    Status Delete(const std::string& id, const std::string& key, Timestamp now) override {
      return real_->Delete(id, key, now);
    }
    Result<std::vector<providers::Instance>> List(Timestamp now) override { return real_->List(now); }
    Result<std::vector<providers::Interruption>> Interruptions(Timestamp now) override {
      return real_->Interruptions(now);
    }

   private:
    providers::CloudProvider* real_;
    int calls_ = 0;
  };
  Forgetful forgetful_;
};

class BrokenTraits {
 public:
  static constexpr const char* kName = "Broken";
  providers::CloudProvider& provider() { return provider_; }
  std::string pool() { return "broken-pool"; }
  std::string NextNode() { return StrCat("n", ++nodes_); }
  Timestamp now() { return kNow; }
  Status Interrupt(const providers::Instance& instance, Timestamp at) {
    provider_.Announce(instance, at);
    return OkStatus();
  }

 private:
  BrokenProvider provider_;
  int nodes_ = 0;
};
#endif

using ProviderTypes = ::testing::Types<LocalTraits, ExecTraits, KwokTraits, SimCloudTraits
#ifdef TIDE_CONTRACT_SELFTEST
                                       ,
                                       BrokenTraits, BrokenKwokTraits
#endif
                                       >;

INSTANTIATE_TYPED_TEST_SUITE_P(Providers, ProviderContract, ProviderTypes, TraitsName);

}  // namespace
}  // namespace tide::contract
