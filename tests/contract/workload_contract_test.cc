// The WorkloadManager contract (workload_contract.h) over every
// implementation: the recording fake, Slurm over recorded tool replies, and
// the simulator's own. A new backend gets the whole suite by adding its
// traits to WorkloadManagers below.
//
// With TIDE_CONTRACT_SELFTEST defined (cmake -DTIDE_CONTRACT_SELFTEST=ON),
// deliberately broken managers join the list: each must fail the tests
// that check what it gets wrong, which shows the suite catches it.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autoscale/policy.h"
#include "backends/kubernetes/kube_backend.h"
#include "backends/kubernetes/kube_fake_api_test.h"
#include "backends/slurm/slurm_backend.h"
#include "config/config.h"
#include "contract/workload_contract.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "testutil/builders.h"
#include "testutil/fake_slurm.h"
#include "testutil/fake_workload.h"
#include "testutil/vector_trace.h"

namespace tide::contract {
namespace {

using backends::Cause;

// testing::FakeWorkload, in tide's terms: the situations are entries in its
// `obs`; it keeps every cause as given and shows every verb at once. Its
// `calls` record what it was asked, not what it did, so Effects is empty:
// what it did is in `obs`. `Manager` is what the tests talk to: the fake
// itself, or (self-test) a broken wrapper around it.
template <typename Manager>
struct FakeTraitsOf {
  struct Env {
    testing::FakeWorkload fake;
    Manager manager{&fake};
    int nodes = 0;
    int jobs = 0;
  };
  static std::unique_ptr<Env> Make() { return std::make_unique<Env>(); }
  static backends::WorkloadManager& Manager_(Env& env) {
    if constexpr (std::is_same_v<Manager, testing::FakeWorkload*>) {
      return env.fake;
    } else {
      return env.manager;
    }
  }
  static std::optional<std::string> AddReadyNode(Env& env) {
    const std::string name = StrCat("n", ++env.nodes);
    env.fake.obs.nodes.push_back(testing::FakeNode(name, 0));
    return name;
  }
  static std::optional<std::string> AddRunningJob(Env& env, const std::string& node) {
    backends::ObservedNode* n = env.fake.Node(node);
    if (n == nullptr) return std::nullopt;
    n->gpus_used = 8;
    n->busy = true;
    backends::ObservedJob j = testing::FakeJob(StrCat("j", ++env.jobs), 1, 8);
    j.phase = backends::JobPhase::kRunning;
    j.nodes = {node};
    j.start = j.submit + Seconds(60);
    env.fake.obs.jobs.push_back(j);
    return j.key;
  }
  static std::optional<std::string> AddWaitingJob(Env& env) {
    env.fake.obs.jobs.push_back(testing::FakeJob(StrCat("j", ++env.jobs), 1, 8));
    return env.fake.obs.jobs.back().key;
  }
  static bool AddRegistrableNode(Env&) { return true; }  // any name will do
  static std::vector<std::string> Effects(Env&) { return {}; }
  static Cause KeptCause(Cause given) { return given; }
  static constexpr bool kShowsStopsAtOnce = true;
  static constexpr bool kNamesOneAtATime = false;
  static bool StopAnswering(Env& env) {
    env.fake.observe_error = absl::UnavailableError("the fake does not answer");
    return true;
  }
};

struct FakeWorkloadTraits : FakeTraitsOf<testing::FakeWorkload*> {
  static constexpr const char* kName = "FakeWorkload";
  static backends::WorkloadManager& Manager(Env& env) { return Manager_(env); }
};

// SlurmBackend over FakeSlurm's recorded squeue/sinfo replies: one pool
// "p0" of the CLOUD nodes gpu[1-8]. A ready node is an idle node whose
// slurmd answers; a running job is RUNNING on an allocated node; a waiting
// one PENDING for Resources; a node to register is powered down and
// drained "tide: not provisioned". FakeSlurm applies drains and undrains to
// its replies as slurmctld does, so cordons show; a requeue or cancel does
// not change the replies (Slurm shows it later, after the job's epilog):
// it is checked as the command run.
//
// Slurm keeps a cordon's cause in the drain reason: "tide: not provisioned"
// is not-bought, "tide: releasing..." (release and drain) is release, any
// other "tide:" reason reads back as drain.
struct SlurmTraits {
  static constexpr const char* kName = "Slurm";
  struct Env {
    testing::FakeSlurm slurm;
    std::unique_ptr<backends::SlurmBackend> backend;
    std::vector<std::string> hosts;
    size_t next_host = 0;
    int64_t next_job = 100;
  };
  static std::unique_ptr<Env> Make() {
    auto config = config::ParseConfig(R"(
pools:
  - {name: p0, instance_type: {gpus: 8}, price_per_hour: 32, max_nodes: 8}
priority_classes:
  - {name: normal, value: 50}
live:
  slurm:
    pools: {p0: "gpu[1-8]"}
)",
                                      "contract.yaml");
    EXPECT_TRUE(config.ok()) << config.status();
    if (!config.ok()) return nullptr;
    auto options = backends::SlurmBackendOptionsFor(*config);
    EXPECT_TRUE(options.ok()) << options.status();
    if (!options.ok()) return nullptr;
    auto env = std::make_unique<Env>();
    env->hosts = options->pool_hosts.at(0);
    env->slurm.apply_node_commands = true;
    env->backend = std::make_unique<backends::SlurmBackend>(*options, &env->slurm);
    return env;
  }
  static backends::WorkloadManager& Manager(Env& env) { return *env.backend; }
  static std::optional<std::string> NextHost(Env& env) {
    if (env.next_host >= env.hosts.size()) return std::nullopt;
    return env.hosts[env.next_host++];
  }
  static std::optional<std::string> AddReadyNode(Env& env) {
    auto host = NextHost(env);
    if (host) env.slurm.view.nodes.push_back(testing::SlurmNode(*host, "idle", {"CLOUD"}));
    return host;
  }
  static std::optional<std::string> AddRunningJob(Env& env, const std::string& node) {
    for (auto& n : env.slurm.view.nodes) {
      if (n.name != node) continue;
      n.state = "allocated";
      n.gpus_used = 8;
      env.slurm.view.jobs.push_back(testing::SlurmJob(env.next_job++, "RUNNING", 8, {node}));
      return StrCat(env.slurm.view.jobs.back().id);
    }
    return std::nullopt;
  }
  static std::optional<std::string> AddWaitingJob(Env& env) {
    env.slurm.view.jobs.push_back(testing::SlurmJob(env.next_job++, "PENDING", 8));
    return StrCat(env.slurm.view.jobs.back().id);
  }
  static bool AddRegistrableNode(Env& env) {
    auto host = NextHost(env);
    if (!host) return false;
    env.slurm.view.nodes.push_back(
        testing::SlurmNode(*host, "idle", {"CLOUD", "POWERED_DOWN", "DRAIN"}, 0, "tide: not provisioned"));
    return true;
  }
  static std::vector<std::string> Effects(Env& env) { return env.slurm.Actions(); }
  static Cause KeptCause(Cause given) {
    if (given == Cause::kNotBought) return Cause::kNotBought;
    if (backends::IsReleaseCordon(given)) return Cause::kRelease;
    return Cause::kDrain;
  }
  static constexpr bool kShowsStopsAtOnce = false;
  static constexpr bool kNamesOneAtATime = false;
  static bool StopAnswering(Env& env) {
    env.slurm.query_error = absl::UnavailableError("slurm_load_jobs error: Unable to contact slurm controller");
    return true;
  }
};

// The Kubernetes backend over an in-memory stand-in for the API server
// (kube_fake_api_test.h): one pool "p0" of 8-GPU kwok-like nodes. A ready
// node is a Ready Node object with GPUs allocatable; a running job is a
// Job's pod bound to it and Running; a waiting one an unbound pod naming
// tide's scheduler. Node names are free, so any node can be registered. The
// stand-in applies bindings, evictions, deletions and node patches to its
// objects, so everything shows on the next Observe; its `changes` are the
// calls it answered 2xx (Events aside).
struct KubernetesTraits {
  static constexpr const char* kName = "Kubernetes";
  struct Env {
    backends::kube::testing::FakeApi api;
    ManualClock clock{FromUnixSeconds(1'800'000'000)};
    std::unique_ptr<backends::kube::KubernetesBackend> backend;
    int nodes = 0, jobs = 0;
  };
  static std::unique_ptr<Env> Make() {
    auto env = std::make_unique<Env>();
    backends::kube::KubernetesBackendOptions o;
    o.translate.pools = {backends::kube::ShapeOfPool(backends::kube::TideNames("tide.dev"), "p0", "on-demand")};
    env->backend = std::make_unique<backends::kube::KubernetesBackend>(o, &env->api, &env->api, &env->clock);
    return env;
  }
  static backends::WorkloadManager& Manager(Env& env) { return *env.backend; }
  static std::optional<std::string> AddReadyNode(Env& env) {
    backends::kube::Node n;
    n.meta.name = StrCat("p0-node-", ++env.nodes);
    n.meta.labels["tide.dev/pool"] = "p0";
    n.capacity.gpus = n.allocatable.gpus = 8;
    n.ready.status = "True";
    env.api.objects.nodes.push_back(n);
    return n.meta.name;
  }
  static backends::kube::Pod JobPod(Env& env) {
    backends::kube::Pod p;
    p.meta.namespace_name = "ml";
    p.meta.name = StrCat("job-", ++env.jobs);
    p.meta.uid = StrCat("uid-", env.jobs);
    p.meta.owners.push_back({"Job", p.meta.name, StrCat("job-uid-", env.jobs), true});
    p.scheduler_name = "tide";
    p.requests.gpus = 8;
    return p;
  }
  static std::optional<std::string> AddRunningJob(Env& env, const std::string& node) {
    backends::kube::Pod p = JobPod(env);
    p.node_name = node;
    p.phase = "Running";
    env.api.objects.pods.push_back(p);
    return StrCat("ml/", p.meta.name);
  }
  static std::optional<std::string> AddWaitingJob(Env& env) {
    env.api.objects.pods.push_back(JobPod(env));
    return StrCat("ml/", env.api.objects.pods.back().meta.name);
  }
  static bool AddRegistrableNode(Env&) { return true; }
  static std::vector<std::string> Effects(Env& env) { return env.api.changes; }
  static Cause KeptCause(Cause given) { return given; }
  static constexpr bool kShowsStopsAtOnce = true;
  static constexpr bool kNamesOneAtATime = false;
  static bool StopAnswering(Env& env) {
    env.api.down = true;
    return true;
  }
};

// The simulator's SimWorkload, over a sim::Simulator of one pool "p0" of
// three 8-GPU nodes (its minimum: the initial fleet, ready at t0 once Init
// has run) and an empty trace. Only those three can be ready nodes: more
// would need the simulated boot to run. A waiting job is submitted to the
// simulated cluster; a running one is submitted and placed there (what the
// simulator's scheduler does, without the name round trip Bind makes). The
// simulator keeps a cordon's cause as given, shows stops at once (the job
// is stopping), and names a node only when the cloud creates it.
struct SimTraits {
  static constexpr const char* kName = "Simulator";
  struct Env {
    model::ClusterSpec spec;
    model::ClusterSpec run_spec;
    testing::VectorTrace trace{{}, testing::kT0};
    std::unique_ptr<sim::Simulator> sim;
    int ready_used = 0;
    int jobs = 0;
  };
  static std::unique_ptr<Env> Make() {
    auto env = std::make_unique<Env>();
    env->spec = testing::Spec({testing::Pool("p0", 8, model::Tier::kOnDemand, 36, 3, 10, /*boot=*/120)});
    auto policy = autoscale::MakePolicy("reactive", {}, env->spec, std::nullopt);
    EXPECT_TRUE(policy.ok()) << policy.status();
    if (!policy.ok()) return nullptr;
    env->run_spec = policy->ApplyTo(env->spec);
    env->sim = std::make_unique<sim::Simulator>(&env->run_spec, *policy, sim::SimOptions{}, &env->trace);
    const Status s = env->sim->Init();
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) return nullptr;
    env->sim->workload()->set_now(testing::kT0);
    return env;
  }
  static backends::WorkloadManager& Manager(Env& env) { return *env.sim->workload(); }
  static std::optional<std::string> AddReadyNode(Env& env) {
    if (env.ready_used >= 3) return std::nullopt;
    return StrCat("p0-", ++env.ready_used);
  }
  // Submits a job of one 8-GPU worker; its key.
  static std::string Submit(Env& env) {
    model::JobSpec spec = testing::JobSpecOf(StrCat("c", ++env.jobs), 0, 8, 1, 3600);
    EXPECT_TRUE(env.sim->cluster()->Submit(&spec, testing::kT0, false, 0).ok());
    auto o = env.sim->workload()->Observe();
    return o.ok() && !o->jobs.empty() ? o->jobs.back().key : "";
  }
  static std::optional<std::string> AddRunningJob(Env& env, const std::string& node) {
    const model::NodeId id = env.sim->cloud()->NodeNamed(node);
    if (id == 0) return std::nullopt;
    const std::string key = Submit(env);
    sched::Placement p;
    p.job = std::stoll(key);
    model::NodeShare share;
    share.node = id;
    share.workers = 1;
    p.shares = {share};
    const Status s = env.sim->cluster()->Place(p, testing::kT0);
    EXPECT_TRUE(s.ok()) << s;
    return s.ok() ? std::optional<std::string>(key) : std::nullopt;
  }
  static std::optional<std::string> AddWaitingJob(Env& env) { return Submit(env); }
  static bool AddRegistrableNode(Env&) { return true; }  // any pool may grow
  static std::vector<std::string> Effects(Env&) { return {}; }
  static Cause KeptCause(Cause given) { return given; }
  static constexpr bool kShowsStopsAtOnce = true;
  static constexpr bool kNamesOneAtATime = true;
  static bool StopAnswering(Env&) { return false; }  // it always answers
};

#ifdef TIDE_CONTRACT_SELFTEST
// Broken managers: the fake behind a wrapper that gets something wrong.
class ForwardingWorkload : public backends::WorkloadManager {
 public:
  explicit ForwardingWorkload(testing::FakeWorkload* inner) : inner_(inner) {}
  const backends::Capabilities& capabilities() const override { return inner_->capabilities(); }
  Result<backends::Observation> Observe() override { return inner_->Observe(); }
  Status Cordon(const std::string& n, const backends::Reason& why) override { return inner_->Cordon(n, why); }
  Status Uncordon(const std::string& n) override { return inner_->Uncordon(n); }
  Status Evict(const std::string& j, Duration g, const backends::Reason& why) override {
    return inner_->Evict(j, g, why);
  }
  Status Checkpoint(const std::string& j) override { return inner_->Checkpoint(j); }
  Status Requeue(const std::string& j) override { return inner_->Requeue(j); }
  Status Cancel(const std::string& j, Duration g, const backends::Reason& why) override {
    return inner_->Cancel(j, g, why);
  }
  Status Bind(const std::string& j, const std::vector<backends::NodeWorkers>& w,
              const backends::Reason& why) override {
    return inner_->Bind(j, w, why);
  }
  Status Resize(const std::string& j, const backends::ResizeOrder& o, const backends::Reason& why) override {
    return inner_->Resize(j, o, why);
  }
  Result<std::string> RegisterNode(int pool, const std::vector<std::string>& taken) override {
    return inner_->RegisterNode(pool, taken);
  }
  Status RemoveNode(const std::string& n) override { return inner_->RemoveNode(n); }

 protected:
  testing::FakeWorkload* inner_;
};

// Says yes to everything: OK for unknown jobs and nodes, and for verbs it
// does not have.
class SaysYes final : public ForwardingWorkload {
 public:
  using ForwardingWorkload::ForwardingWorkload;
  Status Cordon(const std::string& n, const backends::Reason& why) override { return Yes(inner_->Cordon(n, why)); }
  Status Uncordon(const std::string& n) override { return Yes(inner_->Uncordon(n)); }
  Status Evict(const std::string& j, Duration g, const backends::Reason& why) override {
    return Yes(inner_->Evict(j, g, why));
  }
  Status Checkpoint(const std::string& j) override { return Yes(inner_->Checkpoint(j)); }
  Status Requeue(const std::string& j) override { return Yes(inner_->Requeue(j)); }
  Status Cancel(const std::string& j, Duration g, const backends::Reason& why) override {
    return Yes(inner_->Cancel(j, g, why));
  }
  Status Bind(const std::string& j, const std::vector<backends::NodeWorkers>& w,
              const backends::Reason& why) override {
    return Yes(inner_->Bind(j, w, why));
  }
  Status Resize(const std::string& j, const backends::ResizeOrder& o, const backends::Reason& why) override {
    return Yes(inner_->Resize(j, o, why));
  }
  Status RemoveNode(const std::string& n) override { return Yes(inner_->RemoveNode(n)); }

 private:
  static Status Yes(const Status&) { return OkStatus(); }
};

// Forgets what a cordon was for (reports anyone's cordon) and never undoes one.
class ForgetsCordons final : public ForwardingWorkload {
 public:
  using ForwardingWorkload::ForwardingWorkload;
  Status Cordon(const std::string& n, const backends::Reason& why) override {
    return inner_->Cordon(n, {Cause::kOther, why.text});
  }
  Status Uncordon(const std::string& n) override { return inner_->Node(n) ? OkStatus() : inner_->Uncordon(n); }
};

// Binds a gang's workers node by node, failing half way; names taken nodes;
// reports running jobs without their nodes.
class Sloppy final : public ForwardingWorkload {
 public:
  using ForwardingWorkload::ForwardingWorkload;
  Result<backends::Observation> Observe() override {
    auto o = inner_->Observe();
    if (o.ok()) {
      for (auto& j : o->jobs) j.nodes.clear();
    }
    return o;
  }
  Status Bind(const std::string& job, const std::vector<backends::NodeWorkers>& where,
              const backends::Reason& why) override {
    backends::ObservedJob* j = inner_->Job(job);
    if (j == nullptr) return absl::NotFoundError(job);
    for (const auto& w : where) {
      if (inner_->Node(w.node) == nullptr) return absl::NotFoundError(w.node);
      j->nodes.push_back(w.node);
      j->phase = backends::JobPhase::kStarting;
    }
    return OkStatus();
  }
  Result<std::string> RegisterNode(int pool, const std::vector<std::string>& taken) override {
    if (!taken.empty()) return taken.front();
    return inner_->RegisterNode(pool, taken);
  }
};

template <typename Broken, const char* name>
struct BrokenTraits : FakeTraitsOf<Broken> {
  static constexpr const char* kName = name;
  static backends::WorkloadManager& Manager(typename FakeTraitsOf<Broken>::Env& env) {
    return FakeTraitsOf<Broken>::Manager_(env);
  }
};

constexpr char kSaysYes[] = "BrokenSaysYes";
constexpr char kForgetsCordons[] = "BrokenForgetsCordons";
constexpr char kSloppy[] = "BrokenSloppy";
#endif  // TIDE_CONTRACT_SELFTEST

using WorkloadManagers = ::testing::Types<FakeWorkloadTraits, SlurmTraits, KubernetesTraits, SimTraits
#ifdef TIDE_CONTRACT_SELFTEST
                                          ,
                                          BrokenTraits<SaysYes, kSaysYes>,
                                          BrokenTraits<ForgetsCordons, kForgetsCordons>,
                                          BrokenTraits<Sloppy, kSloppy>
#endif
                                          >;

struct TraitsName {
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};

INSTANTIATE_TYPED_TEST_SUITE_P(Managers, WorkloadContractTest, WorkloadManagers, TraitsName);

}  // namespace
}  // namespace tide::contract
