// FakeWorkload: a WorkloadManager for tests, in tide's terms. It reports
// `obs`, records every verb ("cordon gpu1 release: idle", "evict 7 30s",
// "bind 7 gpu1:2", ...), can be told to fail the next verb or to refuse
// evictions (a disruption budget), and carries out what it is told on `obs`
// the way a manager would (a bound job runs on its nodes, an evicted one
// waits again, a cordoned node is cordoned). A job or node it does not have
// is NotFound, and a verb that fails changes nothing in `obs`
// (tests/contract/workload_contract.h checks it like every manager).
#ifndef TIDE_TESTUTIL_FAKE_WORKLOAD_H_
#define TIDE_TESTUTIL_FAKE_WORKLOAD_H_

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backends/workload.h"
#include "core/strings.h"

namespace tide::testing {

class FakeWorkload final : public backends::WorkloadManager {
 public:
  backends::Observation obs;
  backends::Capabilities caps;
  Status observe_error = OkStatus();
  Status next_error = OkStatus();    // the next verb fails with it
  bool refuse_evictions = false;     // Evict answers Refused
  std::vector<std::string> calls;    // the verbs, in order
  int next_name = 1;                 // RegisterNode hands out node-<pool>-<n>

  FakeWorkload() {
    caps.name = "fake";
    caps.schedules_itself = false;
    caps.bind = caps.cordon = caps.evict = caps.cancel = caps.resize = true;
    caps.job_attributes = {"queue"};
  }

  const backends::Capabilities& capabilities() const override { return caps; }
  Status Explain(const std::string& job, const std::string& why) override {
    if (!caps.explain) return WorkloadManager::Explain(job, why);
    return Call(StrCat("explain ", job, ": ", why));
  }
  Result<backends::Observation> Observe() override {
    if (!observe_error.ok()) return observe_error;
    return obs;
  }
  Status Cordon(const std::string& node, const backends::Reason& why) override {
    TIDE_RETURN_IF_ERROR(Call(StrCat("cordon ", node, " ", backends::CauseName(why.cause), ": ", why.text)));
    backends::ObservedNode* n = Node(node);
    if (n == nullptr) return absl::NotFoundError(StrCat("cordon: no node ", node));
    n->cordon = why.cause;
    if (n->Answering()) n->condition = n->busy ? backends::NodeCondition::kDraining : backends::NodeCondition::kCordoned;
    return OkStatus();
  }
  Status Uncordon(const std::string& node) override {
    TIDE_RETURN_IF_ERROR(Call(StrCat("uncordon ", node)));
    backends::ObservedNode* n = Node(node);
    if (n == nullptr) return absl::NotFoundError(StrCat("uncordon: no node ", node));
    n->cordon = backends::Cause::kNone;
    if (n->Answering()) n->condition = backends::NodeCondition::kReady;
    return OkStatus();
  }
  Status Evict(const std::string& job, Duration grace, const backends::Reason& why) override {
    TIDE_RETURN_IF_ERROR(Call(StrCat("evict ", job, " ", grace.count(), "s")));
    if (refuse_evictions) return backends::Refused(StrCat("evict ", job, ": the disruption budget allows none now"));
    return Requeued(job);
  }
  Status Checkpoint(const std::string& job) override {
    if (!caps.checkpoint) return absl::UnimplementedError("checkpoint");
    TIDE_RETURN_IF_ERROR(Call(StrCat("checkpoint ", job)));
    if (Job(job) == nullptr) return absl::NotFoundError(StrCat("checkpoint: no job ", job));
    return OkStatus();
  }
  Status Requeue(const std::string& job) override {
    if (!caps.requeue) return absl::UnimplementedError("requeue");
    TIDE_RETURN_IF_ERROR(Call(StrCat("requeue ", job)));
    return Requeued(job);
  }
  Status Cancel(const std::string& job, Duration grace, const backends::Reason& why) override {
    TIDE_RETURN_IF_ERROR(Call(StrCat("cancel ", job)));
    if (Job(job) == nullptr) return absl::NotFoundError(StrCat("cancel: no job ", job));
    std::erase_if(obs.jobs, [&](const auto& j) { return j.key == job; });
    return OkStatus();
  }
  Status Bind(const std::string& job, const std::vector<backends::NodeWorkers>& where,
              const backends::Reason& why) override {
    std::vector<std::string> w;
    for (const auto& x : where) w.push_back(StrCat(x.node, ":", x.workers));
    TIDE_RETURN_IF_ERROR(Call(StrCat("bind ", job, " ", StrJoin(w, ","))));
    backends::ObservedJob* j = Job(job);
    if (j == nullptr) return absl::NotFoundError(StrCat("bind: no job ", job));
    if (j->phase != backends::JobPhase::kWaiting) return absl::FailedPreconditionError(StrCat("bind: job ", job, " is not waiting"));
    // A gang is bound whole or not at all: check every placement first.
    int workers = 0;
    for (const auto& x : where) {
      if (Node(x.node) == nullptr) return absl::NotFoundError(StrCat("bind: no node ", x.node));
      workers += x.workers;
    }
    if (workers != j->workers) {
      return absl::InvalidArgumentError(StrCat("bind: job ", job, " has ", j->workers, " workers, not ", workers));
    }
    for (const auto& x : where) {
      backends::ObservedNode* n = Node(x.node);
      for (int i = 0; i < x.workers; ++i) j->nodes.push_back(x.node);
      n->gpus_used += x.workers * j->gpus_per_worker;
      n->busy = true;
    }
    j->phase = backends::JobPhase::kStarting;
    return OkStatus();
  }
  Status Resize(const std::string& job, const backends::ResizeOrder& order, const backends::Reason& why) override {
    if (!caps.resize) return absl::UnimplementedError("resize");
    TIDE_RETURN_IF_ERROR(Call(StrCat("resize ", job, " ", order.workers)));
    if (Job(job) == nullptr) return absl::NotFoundError(StrCat("resize: no job ", job));
    return OkStatus();
  }
  Result<std::string> RegisterNode(int pool, const std::vector<std::string>& taken) override {
    TIDE_RETURN_IF_ERROR(Call(StrCat("register ", pool)));
    std::string name;
    do {
      name = StrCat("node-", pool, "-", next_name++);
    } while (std::find(taken.begin(), taken.end(), name) != taken.end());
    return name;
  }
  Status RemoveNode(const std::string& node) override {
    TIDE_RETURN_IF_ERROR(Call(StrCat("remove ", node)));
    if (Node(node) == nullptr) return absl::NotFoundError(StrCat("remove: no node ", node));
    std::erase_if(obs.nodes, [&](const auto& n) { return n.name == node; });
    return OkStatus();
  }

  backends::ObservedNode* Node(const std::string& name) {
    for (auto& n : obs.nodes) {
      if (n.name == name) return &n;
    }
    return nullptr;
  }
  backends::ObservedJob* Job(const std::string& key) {
    for (auto& j : obs.jobs) {
      if (j.key == key) return &j;
    }
    return nullptr;
  }

 private:
  Status Call(std::string c) {
    calls.push_back(std::move(c));
    if (!next_error.ok()) return std::exchange(next_error, OkStatus());
    return OkStatus();
  }
  Status Requeued(const std::string& job) {
    backends::ObservedJob* j = Job(job);
    if (j == nullptr) return absl::NotFoundError(StrCat("no job ", job));
    for (const auto& name : j->nodes) {
      if (backends::ObservedNode* n = Node(name)) n->gpus_used = std::max(0, n->gpus_used - j->gpus_per_worker);
    }
    j->nodes.clear();
    j->phase = backends::JobPhase::kWaiting;
    ++j->restarts;
    return OkStatus();
  }
};

// A node of `pool` in tide's terms.
inline backends::ObservedNode FakeNode(std::string name, int pool,
                                       backends::NodeCondition c = backends::NodeCondition::kReady, int gpus = 8) {
  backends::ObservedNode n;
  n.name = std::move(name);
  n.pool = pool;
  n.condition = c;
  n.gpus = gpus;
  return n;
}

// A gang of `workers` x `gpus` GPUs, waiting.
inline backends::ObservedJob FakeJob(std::string key, int workers, int gpus) {
  backends::ObservedJob j;
  j.key = std::move(key);
  j.name = j.key;
  j.phase = backends::JobPhase::kWaiting;
  j.workers = workers;
  j.gpus_per_worker = gpus;
  j.submit = FromUnixSeconds(1'800'000'000);
  return j;
}

}  // namespace tide::testing

#endif  // TIDE_TESTUTIL_FAKE_WORKLOAD_H_
