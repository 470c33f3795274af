// The WorkloadManager contract (backends/workload.h) as typed tests, run
// over every implementation by workload_contract_test.cc. An implementation
// enters through one traits struct that builds it in the situations the
// tests need, each in its own way:
//
//   struct MyTraits {
//     static constexpr const char* kName = "...";  // the tests' names
//     // The manager and the world it manages (recorded replies, a
//     // simulator), built fresh for each test.
//     using Env = ...;
//     static std::unique_ptr<Env> Make();
//     static backends::WorkloadManager& Manager(Env& env);
//
//     // Situations, each in tide pool 0, with 8-GPU nodes. Each returns
//     // the node name or job key, or nullopt when this implementation
//     // cannot be put in that situation (a test that needs it is skipped,
//     // saying so). They change the world, not what the manager last
//     // observed: the tests call Observe after them, as the controller does.
//     //   a node that answers, runs nothing and is not cordoned
//     static std::optional<std::string> AddReadyNode(Env& env);
//     //   a job of one 8-GPU worker running on `node` (one from AddReadyNode)
//     static std::optional<std::string> AddRunningJob(Env& env, const std::string& node);
//     //   a job of one 8-GPU worker waiting for capacity, on no node
//     static std::optional<std::string> AddWaitingJob(Env& env);
//     //   a node of pool 0 that RegisterNode may name (a Slurm CLOUD node
//     //   no machine answers for); false if it cannot be set up
//     static bool AddRegistrableNode(Env& env);
//
//     // What the manager was made to do that an observation need not show
//     // yet (the commands it ran), oldest first; empty if it shows all of
//     // it in Observe. A verb that fails must leave both unchanged.
//     static std::vector<std::string> Effects(Env& env);
//     // The cause a later Observe reports for a cordon tide gave for
//     // `given`: what the manager keeps of it.
//     static backends::Cause KeptCause(backends::Cause given);
//     // Evict, Cancel and Requeue show on the next Observe (the job is no
//     // longer running). False for recorded replies, which change only
//     // when the test changes them: the verb is then checked in Effects.
//     static constexpr bool kShowsStopsAtOnce = ...;
//     // RegisterNode can name a node only once the one it named before
//     // exists (the simulator: a node is named when the cloud creates it),
//     // and answers FailedPrecondition rather than a taken name.
//     static constexpr bool kNamesOneAtATime = ...;
//     // Makes the manager stop answering (Observe must then return
//     // Unavailable); false if that cannot be set up.
//     static bool StopAnswering(Env& env);
//   };
//
// The typed tests are in WorkloadContractTest, instantiated with
//   INSTANTIATE_TYPED_TEST_SUITE_P(Name, WorkloadContractTest, Types);
//
// What the contract asks and the tests check: capabilities() names the
// manager; Observe reports tide's terms (a running job lists its nodes, a
// waiting one none) and Unavailable when the manager does not answer; a
// verb the capabilities lack is Unimplemented and one they claim is not; a
// cordon shows with the cause the manager keeps, and Uncordon undoes it; an
// unknown job key or node name is InvalidArgument or NotFound, never OK;
// stops of a running job take effect; Bind starts a waiting job on its
// nodes, whole or not at all; RegisterNode never names a taken node, and a
// fixed list runs out with ResourceExhausted. A verb that fails has done
// nothing: the observation and the manager's effects are as before.
#ifndef TIDE_TESTS_CONTRACT_WORKLOAD_CONTRACT_H_
#define TIDE_TESTS_CONTRACT_WORKLOAD_CONTRACT_H_

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/workload.h"
#include "core/strings.h"
#include "gtest/gtest.h"

namespace tide::contract {

// Everything an observation says, one line per node and job, for comparing
// two observations and showing how they differ.
inline std::string Describe(const backends::Observation& o) {
  std::string s;
  for (const auto& n : o.nodes) {
    StrAppend(&s, "node ", n.name, " pool=", n.pool, " ", backends::NodeConditionName(n.condition),
              " cordon=", backends::CauseName(n.cordon), " '", n.cordon_text, "' gpus=", n.gpus, "/", n.gpus_used,
              n.busy ? " busy" : "", " id=", n.provider_id, "\n");
  }
  for (const auto& j : o.jobs) {
    StrAppend(&s, "job ", j.key, " '", j.name, "' ", backends::JobPhaseName(j.phase), " ", j.workers, "x",
              j.gpus_per_worker, j.slice, " on [", StrJoin(j.nodes, ","), "] restarts=", j.restarts,
              " start=", ToUnixSeconds(j.start), "\n");
  }
  return s;
}

inline const backends::ObservedNode* FindNode(const backends::Observation& o, const std::string& name) {
  for (const auto& n : o.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

inline const backends::ObservedJob* FindJob(const backends::Observation& o, const std::string& key) {
  for (const auto& j : o.jobs) {
    if (j.key == key) return &j;
  }
  return nullptr;
}

// Names and keys no implementation has: one shaped like the manager's own
// (a number, a generated node name) and one that is not.
inline const std::vector<std::string>& UnknownJobKeys() {
  static const std::vector<std::string> keys = {"987654", "no-such-job"};
  return keys;
}
inline const std::vector<std::string>& UnknownNodeNames() {
  static const std::vector<std::string> names = {"p0-987", "no-such-node"};
  return names;
}

inline bool IsUnknownError(const Status& s) { return absl::IsNotFound(s) || absl::IsInvalidArgument(s); }

// One verb, named, with the capability that claims it, run on a target
// the test chose.
struct Verb {
  std::string name;
  bool (*claimed)(const backends::Capabilities&);
  std::function<Status(backends::WorkloadManager&, const std::string& target)> run;
};

// The verbs that take a job key (Bind puts the job's one worker on `node`;
// Resize adds a worker there).
inline std::vector<Verb> JobVerbs(const std::string& node) {
  using backends::Capabilities;
  using backends::WorkloadManager;
  const backends::Reason why{backends::Cause::kPreemption, "contract test"};
  return {
      {"Evict", [](const Capabilities& c) { return c.evict; },
       [why](WorkloadManager& m, const std::string& j) { return m.Evict(j, Seconds(30), why); }},
      {"Checkpoint", [](const Capabilities& c) { return c.checkpoint; },
       [](WorkloadManager& m, const std::string& j) { return m.Checkpoint(j); }},
      {"Requeue", [](const Capabilities& c) { return c.requeue; },
       [](WorkloadManager& m, const std::string& j) { return m.Requeue(j); }},
      {"Cancel", [](const Capabilities& c) { return c.cancel; },
       [why](WorkloadManager& m, const std::string& j) { return m.Cancel(j, Seconds(30), why); }},
      {"Bind", [](const Capabilities& c) { return c.bind; },
       [node](WorkloadManager& m, const std::string& j) {
         return m.Bind(j, {{node, 1}}, {backends::Cause::kPlaced, "contract test"});
       }},
      {"Resize", [](const Capabilities& c) { return c.resize; },
       [node](WorkloadManager& m, const std::string& j) {
         backends::ResizeOrder order;
         order.workers = 2;
         order.add = {{node, 1}};
         return m.Resize(j, order, {backends::Cause::kResize, "contract test"});
       }},
  };
}

// The verbs that take a node name (Bind: of `job` onto it).
inline std::vector<Verb> NodeVerbs(const std::string& job) {
  using backends::Capabilities;
  using backends::WorkloadManager;
  return {
      {"Cordon", [](const Capabilities& c) { return c.cordon; },
       [](WorkloadManager& m, const std::string& n) {
         return m.Cordon(n, {backends::Cause::kRelease, "contract test"});
       }},
      {"Uncordon", [](const Capabilities& c) { return c.cordon; },
       [](WorkloadManager& m, const std::string& n) { return m.Uncordon(n); }},
      {"RemoveNode", [](const Capabilities&) { return true; },
       [](WorkloadManager& m, const std::string& n) { return m.RemoveNode(n); }},
      {"Bind", [](const Capabilities& c) { return c.bind; },
       [job](WorkloadManager& m, const std::string& n) {
         return m.Bind(job, {{n, 1}}, {backends::Cause::kPlaced, "contract test"});
       }},
  };
}

template <typename Traits>
class WorkloadContractTest : public ::testing::Test {
 protected:
  using Env = typename Traits::Env;

  // The usual world: `ready` answers and runs nothing, `running` runs on
  // `busy`, `waiting` waits; `spare` is another ready node.
  struct Scene {
    std::string ready, busy, spare, running, waiting;
  };

  void SetUp() override { Fresh(); }
  void Fresh() {
    env_ = Traits::Make();
    ASSERT_NE(env_, nullptr);
  }
  backends::WorkloadManager& manager() { return Traits::Manager(*env_); }
  const backends::Capabilities& caps() { return manager().capabilities(); }

  // Builds the usual world in a fresh Env and observes it. False, with
  // `skipped_` saying why, if the implementation cannot be put in it.
  bool Build(Scene* s) {
    Fresh();
    auto ready = Traits::AddReadyNode(*env_);
    auto busy = Traits::AddReadyNode(*env_);
    auto spare = Traits::AddReadyNode(*env_);
    if (!ready || !busy || !spare) return Skip("cannot set up three ready nodes");
    auto running = Traits::AddRunningJob(*env_, *busy);
    if (!running) return Skip("cannot set up a running job");
    auto waiting = Traits::AddWaitingJob(*env_);
    if (!waiting) return Skip("cannot set up a waiting job");
    *s = Scene{*ready, *busy, *spare, *running, *waiting};
    (void)MustObserve();
    return true;
  }
  bool Skip(std::string why) {
    skipped_ = std::move(why);
    return false;
  }

  backends::Observation MustObserve() {
    auto o = manager().Observe();
    EXPECT_TRUE(o.ok()) << o.status();
    return o.ok() ? *o : backends::Observation{};
  }

  // What the world looks like to the manager and what it was made to do:
  // a verb that fails must leave this as it was.
  std::string Snapshot() {
    std::string s = Describe(MustObserve());
    for (const auto& e : Traits::Effects(*env_)) StrAppend(&s, "effect ", e, "\n");
    return s;
  }

  std::unique_ptr<Env> env_;
  std::string skipped_;
};

TYPED_TEST_SUITE_P(WorkloadContractTest);

// capabilities() names the manager, for logs and metrics.
TYPED_TEST_P(WorkloadContractTest, CapabilitiesHaveAName) {
  EXPECT_FALSE(this->caps().name.empty());
  // A manager that does not place its jobs needs tide to: it must bind.
  if (!this->caps().schedules_itself) {
    EXPECT_TRUE(this->caps().bind) << "no one would place its jobs";
  }
}

// Observe reports nodes and jobs in tide's terms: a running job lists its
// nodes, a waiting one none.
TYPED_TEST_P(WorkloadContractTest, ObserveReportsNodesAndJobsInTideTerms) {
  typename TestFixture::Scene s;
  if (!this->Build(&s)) GTEST_SKIP() << this->skipped_;
  const backends::Observation o = this->MustObserve();
  SCOPED_TRACE(Describe(o));

  const backends::ObservedNode* r = FindNode(o, s.ready);
  ASSERT_NE(r, nullptr) << s.ready;
  EXPECT_EQ(r->condition, backends::NodeCondition::kReady);
  EXPECT_EQ(r->cordon, backends::Cause::kNone);
  EXPECT_EQ(r->pool, 0);
  EXPECT_TRUE(r->gpus == 8 || r->gpus == 0) << r->gpus;
  EXPECT_EQ(r->gpus_used, 0);
  EXPECT_FALSE(r->busy);

  const backends::ObservedNode* b = FindNode(o, s.busy);
  ASSERT_NE(b, nullptr) << s.busy;
  EXPECT_TRUE(b->Answering());
  EXPECT_EQ(b->cordon, backends::Cause::kNone);
  EXPECT_TRUE(b->busy || b->gpus_used > 0) << "a job runs on " << s.busy;

  const backends::ObservedJob* j = FindJob(o, s.running);
  ASSERT_NE(j, nullptr) << s.running;
  EXPECT_EQ(j->phase, backends::JobPhase::kRunning);
  EXPECT_EQ(j->nodes, std::vector<std::string>{s.busy});
  EXPECT_EQ(j->gpus(), 8);

  const backends::ObservedJob* w = FindJob(o, s.waiting);
  ASSERT_NE(w, nullptr) << s.waiting;
  EXPECT_EQ(w->phase, backends::JobPhase::kWaiting);
  EXPECT_TRUE(w->nodes.empty());
  EXPECT_EQ(w->gpus(), 8);

  // Keys and names are the manager's ids: one per job and per node.
  std::vector<std::string> keys;
  for (const auto& x : o.jobs) keys.push_back(x.key);
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(std::adjacent_find(keys.begin(), keys.end()), keys.end()) << "a job key twice";
  std::vector<std::string> names;
  for (const auto& x : o.nodes) names.push_back(x.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "a node name twice";
}

// Observe says Unavailable when the manager does not answer.
TYPED_TEST_P(WorkloadContractTest, ObserveIsUnavailableWhenTheManagerDoesNotAnswer) {
  if (!TypeParam::StopAnswering(*this->env_)) GTEST_SKIP() << "cannot make it stop answering";
  auto o = this->manager().Observe();
  EXPECT_TRUE(absl::IsUnavailable(o.status())) << o.status();
}

// A verb the capabilities lack is Unimplemented and does nothing; one they
// claim is not Unimplemented. Each verb on a fresh world: a claimed one acts.
TYPED_TEST_P(WorkloadContractTest, VerbsFollowTheCapabilities) {
  typename TestFixture::Scene s;
  if (!this->Build(&s)) GTEST_SKIP() << this->skipped_;
  for (const auto& verb : JobVerbs(s.ready)) {
    ASSERT_TRUE(this->Build(&s));
    const std::string target = verb.name == "Bind" ? s.waiting : s.running;
    const std::string before = this->Snapshot();
    const Status st = verb.run(this->manager(), target);
    if (verb.claimed(this->caps())) {
      EXPECT_FALSE(absl::IsUnimplemented(st)) << verb.name << " is claimed: " << st;
    } else {
      EXPECT_TRUE(absl::IsUnimplemented(st)) << verb.name << " is not claimed: " << st;
      EXPECT_EQ(this->Snapshot(), before) << verb.name << " is not claimed, yet it acted";
    }
  }
  for (const auto& verb : NodeVerbs(s.waiting)) {
    ASSERT_TRUE(this->Build(&s));
    const std::string before = this->Snapshot();
    const Status st = verb.run(this->manager(), s.ready);
    if (verb.claimed(this->caps())) {
      EXPECT_FALSE(absl::IsUnimplemented(st)) << verb.name << " is claimed: " << st;
    } else {
      EXPECT_TRUE(absl::IsUnimplemented(st)) << verb.name << " is not claimed: " << st;
      EXPECT_EQ(this->Snapshot(), before) << verb.name << " is not claimed, yet it acted";
    }
  }
}

// A cordon shows on the next Observe, with the cause tide gave as far as
// the manager keeps causes (TypeParam::KeptCause); Uncordon undoes it.
TYPED_TEST_P(WorkloadContractTest, CordonShowsAndUncordonUndoesIt) {
  if (!this->caps().cordon) GTEST_SKIP() << "no cordon";
  for (const backends::Cause cause : {backends::Cause::kRelease, backends::Cause::kDrain,
                                      backends::Cause::kNotBought, backends::Cause::kSpotInterruption}) {
    SCOPED_TRACE(backends::CauseName(cause));
    typename TestFixture::Scene s;
    if (!this->Build(&s)) GTEST_SKIP() << this->skipped_;
    ASSERT_TRUE(this->manager().Cordon(s.ready, {cause, "contract test"}).ok());
    backends::Observation o = this->MustObserve();
    const backends::ObservedNode* n = FindNode(o, s.ready);
    ASSERT_NE(n, nullptr) << Describe(o);
    EXPECT_TRUE(n->Cordoned()) << Describe(o);
    EXPECT_EQ(n->condition, backends::NodeCondition::kCordoned) << "it runs nothing: " << Describe(o);
    EXPECT_NE(n->cordon, backends::Cause::kNone);
    EXPECT_EQ(backends::CauseName(n->cordon), backends::CauseName(TypeParam::KeptCause(cause)));

    ASSERT_TRUE(this->manager().Uncordon(s.ready).ok());
    o = this->MustObserve();
    n = FindNode(o, s.ready);
    ASSERT_NE(n, nullptr) << Describe(o);
    EXPECT_EQ(n->condition, backends::NodeCondition::kReady) << Describe(o);
    EXPECT_EQ(n->cordon, backends::Cause::kNone) << Describe(o);
  }
}

// A cordoned node that still runs work is draining, and its work goes on.
TYPED_TEST_P(WorkloadContractTest, CordonOfABusyNodeDrainsIt) {
  if (!this->caps().cordon) GTEST_SKIP() << "no cordon";
  typename TestFixture::Scene s;
  if (!this->Build(&s)) GTEST_SKIP() << this->skipped_;
  ASSERT_TRUE(this->manager().Cordon(s.busy, {backends::Cause::kDrain, "contract test"}).ok());
  const backends::Observation o = this->MustObserve();
  SCOPED_TRACE(Describe(o));
  const backends::ObservedNode* n = FindNode(o, s.busy);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->condition, backends::NodeCondition::kDraining);
  const backends::ObservedJob* j = FindJob(o, s.running);
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->phase, backends::JobPhase::kRunning);
  EXPECT_EQ(j->nodes, std::vector<std::string>{s.busy});
}

// A node name the manager does not have is InvalidArgument or NotFound,
// never OK, and nothing is done.
TYPED_TEST_P(WorkloadContractTest, UnknownNodesAreErrorsAndNothingIsDone) {
  typename TestFixture::Scene s;
  if (!this->Build(&s)) GTEST_SKIP() << this->skipped_;
  for (const auto& verb : NodeVerbs(s.waiting)) {
    if (!verb.claimed(this->caps())) continue;
    for (const auto& name : UnknownNodeNames()) {
      const std::string before = this->Snapshot();
      const Status st = verb.run(this->manager(), name);
      EXPECT_TRUE(IsUnknownError(st)) << verb.name << " " << name << ": " << st;
      EXPECT_EQ(this->Snapshot(), before) << verb.name << " " << name << " acted";
    }
  }
}

// A job key the manager does not have is InvalidArgument or NotFound, never
// OK, and nothing is done.
TYPED_TEST_P(WorkloadContractTest, UnknownJobsAreErrorsAndNothingIsDone) {
  typename TestFixture::Scene s;
  if (!this->Build(&s)) GTEST_SKIP() << this->skipped_;
  for (const auto& verb : JobVerbs(s.ready)) {
    if (!verb.claimed(this->caps())) continue;
    for (const auto& key : UnknownJobKeys()) {
      const std::string before = this->Snapshot();
      const Status st = verb.run(this->manager(), key);
      EXPECT_TRUE(IsUnknownError(st)) << verb.name << " " << key << ": " << st;
      EXPECT_EQ(this->Snapshot(), before) << verb.name << " " << key << " acted";
    }
  }
}

// Evict, Cancel and Requeue of a running job succeed where the manager has
// them, and the job stops running: on the next Observe where the manager
// shows that at once, else the manager was told (its effects grew).
TYPED_TEST_P(WorkloadContractTest, StopsOfARunningJob) {
  int tried = 0;
  for (const auto& verb : JobVerbs("")) {
    if (verb.name != "Evict" && verb.name != "Cancel" && verb.name != "Requeue") continue;
    if (!verb.claimed(this->caps())) continue;
    SCOPED_TRACE(verb.name);
    typename TestFixture::Scene s;
    if (!this->Build(&s)) GTEST_SKIP() << this->skipped_;
    const size_t effects = TypeParam::Effects(*this->env_).size();
    ASSERT_TRUE(verb.run(this->manager(), s.running).ok());
    ++tried;
    if (TypeParam::kShowsStopsAtOnce) {
      const backends::Observation o = this->MustObserve();
      const backends::ObservedJob* j = FindJob(o, s.running);
      EXPECT_TRUE(j == nullptr || j->phase != backends::JobPhase::kRunning) << Describe(o);
    } else {
      EXPECT_GT(TypeParam::Effects(*this->env_).size(), effects) << "the manager was not told";
    }
  }
  if (tried == 0) GTEST_SKIP() << "no evict, cancel or requeue";
}

// Bind of a waiting job onto a ready node starts it there.
TYPED_TEST_P(WorkloadContractTest, BindPutsAWaitingJobOnItsNodes) {
  if (!this->caps().bind) GTEST_SKIP() << "no bind";
  typename TestFixture::Scene s;
  if (!this->Build(&s)) GTEST_SKIP() << this->skipped_;
  ASSERT_TRUE(this->manager().Bind(s.waiting, {{s.ready, 1}}, {backends::Cause::kPlaced, "contract test"}).ok());
  const backends::Observation o = this->MustObserve();
  SCOPED_TRACE(Describe(o));
  const backends::ObservedJob* j = FindJob(o, s.waiting);
  ASSERT_NE(j, nullptr);
  EXPECT_TRUE(backends::HoldsNodes(j->phase)) << backends::JobPhaseName(j->phase);
  EXPECT_EQ(j->nodes, std::vector<std::string>{s.ready});
  const backends::ObservedNode* n = FindNode(o, s.ready);
  ASSERT_NE(n, nullptr);
  EXPECT_TRUE(n->busy || n->gpus_used == 8);
}

// A gang is bound whole or not at all: a Bind that fails (a node the
// manager does not have, more workers than the job has, a job that is not
// waiting) leaves everything as it was.
TYPED_TEST_P(WorkloadContractTest, BindThatFailsBindsNothing) {
  if (!this->caps().bind) GTEST_SKIP() << "no bind";
  typename TestFixture::Scene s;
  if (!this->Build(&s)) GTEST_SKIP() << this->skipped_;
  struct Case {
    std::string name;
    std::string job;
    std::vector<backends::NodeWorkers> where;
  };
  const std::vector<Case> cases = {
      {"GangWithAnUnknownNode", s.waiting, {{s.ready, 1}, {UnknownNodeNames()[0], 1}}},
      {"MoreWorkersThanTheJobHas", s.waiting, {{s.ready, 1}, {s.spare, 1}}},
      {"ARunningJob", s.running, {{s.ready, 1}}},
  };
  for (const auto& c : cases) {
    ASSERT_TRUE(this->Build(&s));  // afresh: a failed case may have acted
    const std::string before = this->Snapshot();
    const Status st = this->manager().Bind(c.job, c.where, {backends::Cause::kPlaced, "contract test"});
    EXPECT_FALSE(st.ok()) << c.name;
    EXPECT_EQ(this->Snapshot(), before) << c.name << " acted: " << st;
  }
}

// RegisterNode names a node that is not taken, and another one for the
// same plan once the first is taken too.
TYPED_TEST_P(WorkloadContractTest, RegisterNodeNamesANodeNotTaken) {
  typename TestFixture::Scene s;
  if (!this->Build(&s)) GTEST_SKIP() << this->skipped_;
  if (!TypeParam::AddRegistrableNode(*this->env_)) GTEST_SKIP() << "cannot set up a node to register";
  if (!TypeParam::AddRegistrableNode(*this->env_)) GTEST_SKIP() << "cannot set up a node to register";
  const backends::Observation o = this->MustObserve();
  std::vector<std::string> taken;
  for (const auto& n : o.nodes) {
    if (n.Answering()) taken.push_back(n.name);
  }
  ASSERT_GE(taken.size(), 3u);
  auto name = this->manager().RegisterNode(0, taken);
  ASSERT_TRUE(name.ok()) << name.status();
  EXPECT_FALSE(name->empty());
  EXPECT_EQ(std::count(taken.begin(), taken.end(), *name), 0) << *name << " is taken";
  taken.push_back(*name);
  auto second = this->manager().RegisterNode(0, taken);
  if (TypeParam::kNamesOneAtATime && !second.ok()) {
    // It can name the next node only once the first exists: it says so
    // rather than hand out a taken name.
    EXPECT_TRUE(absl::IsFailedPrecondition(second.status())) << second.status();
    return;
  }
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->empty());
  EXPECT_EQ(std::count(taken.begin(), taken.end(), *second), 0) << *second << " is taken";
}

// A fixed list of names runs out with ResourceExhausted, having named each
// node it could once.
TYPED_TEST_P(WorkloadContractTest, FixedNodeNamesRunOut) {
  if (!this->caps().fixed_node_names) GTEST_SKIP() << "names are not from a fixed list";
  for (int i = 0; i < 3; ++i) {
    if (!TypeParam::AddRegistrableNode(*this->env_)) GTEST_SKIP() << "cannot set up a node to register";
  }
  (void)this->MustObserve();
  std::vector<std::string> taken;
  for (int i = 0; i < 1000; ++i) {
    auto name = this->manager().RegisterNode(0, taken);
    if (!name.ok()) {
      EXPECT_TRUE(absl::IsResourceExhausted(name.status())) << name.status();
      EXPECT_EQ(i, 3) << "three nodes could be registered";
      return;
    }
    EXPECT_EQ(std::count(taken.begin(), taken.end(), *name), 0) << *name << " is taken";
    taken.push_back(*name);
  }
  ADD_FAILURE() << "a fixed list of names never ran out";
}

REGISTER_TYPED_TEST_SUITE_P(WorkloadContractTest, CapabilitiesHaveAName, ObserveReportsNodesAndJobsInTideTerms,
                            ObserveIsUnavailableWhenTheManagerDoesNotAnswer, VerbsFollowTheCapabilities,
                            CordonShowsAndUncordonUndoesIt, CordonOfABusyNodeDrainsIt,
                            UnknownNodesAreErrorsAndNothingIsDone, UnknownJobsAreErrorsAndNothingIsDone,
                            StopsOfARunningJob, BindPutsAWaitingJobOnItsNodes, BindThatFailsBindsNothing,
                            RegisterNodeNamesANodeNotTaken, FixedNodeNamesRunOut);

}  // namespace tide::contract

#endif  // TIDE_TESTS_CONTRACT_WORKLOAD_CONTRACT_H_
