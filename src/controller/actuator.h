// Actuator: the only part of tide that changes a live cluster. It carries
// out a ScalingPlan through the ClusterBackend (Slurm) and the
// CloudProvider, records every step in the Store before and after it is
// taken, and each loop moves nodes and jobs along their life cycles:
//
//   buy      store action (pending, idempotency key) -> provider Create ->
//            store instance (atomically with the action) -> slurmd joins,
//            drained "tide: not provisioned" -> tide undrains it
//   release  drain "tide: releasing ..." -> (next loop, fresh observation:
//            empty) power down in Slurm, provider Delete, ledger closed ->
//            once powered down, drained "tide: not provisioned" again
//   stop     checkpoint signal to the batch step -> after the grace,
//            requeue (or cancel); lost work recorded
//
// Every destructive step acts on a fresh observation and is refused for
// protected jobs and for nodes tide did not buy. See docs/live.md.
#ifndef TIDE_CONTROLLER_ACTUATOR_H_
#define TIDE_CONTROLLER_ACTUATOR_H_

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "autoscale/plan.h"
#include "backends/backend.h"
#include "config/config.h"
#include "controller/state_builder.h"
#include "controller/store.h"
#include "providers/provider.h"

namespace tide::controller {

// One line of the log: what tide did or would do, with job and node ids.
using LogFn = std::function<void(const std::string&)>;

struct ActStats {
  int creates = 0, deletes = 0, drains = 0, undrains = 0, signals = 0, requeues = 0, cancels = 0;
  int refused = 0;  // actions tide declined to take (protected job, stale state)
  int errors = 0;   // a backend or provider call that failed
  std::vector<std::string> problems;  // the last errors, for /status
};

class Actuator {
 public:
  Actuator(const config::Config& config, const std::vector<Slot>& slots, backends::ClusterBackend* backend,
           providers::CloudProvider* provider, Store* store, Memory* memory, LogFn log)
      : config_(config), slots_(slots), backend_(backend), provider_(provider), store_(store), memory_(memory),
        log_(std::move(log)) {}

  // Brings the store in line with the provider: creates that were in
  // flight when tide stopped are adopted if the provider has them and
  // abandoned if not; deletes in flight are finished; instances the
  // provider has and the store does not are adopted; live instances the
  // provider no longer has are closed as lost. Run on every loop, first.
  Status Reconcile(const std::vector<providers::Instance>& instances, Timestamp now, ActStats* stats);

  // The node and job life cycles (join, release, redrain, grace expiry),
  // on a fresh observation.
  void Advance(const backends::Observation& obs, const std::vector<providers::Instance>& instances,
               const Built& built, Timestamp now, ActStats* stats);

  // Fault injection for the crash-recovery test: "kill-after-create" makes
  // the process SIGKILL itself after a provider create returned and before
  // the store recorded the instance (the worst moment to die).
  void set_fault(std::string fault) { fault_ = std::move(fault); }

  // Carries out the plan's actions.
  void Apply(const autoscale::ScalingPlan& plan, const Built& built, const backends::Observation& obs, Timestamp now,
             ActStats* stats);

 private:
  void ScaleUp(const autoscale::Action& a, const Built& built, Timestamp now, ActStats* stats);
  void Release(const autoscale::Action& a, const Built& built, const backends::Observation& obs, Timestamp now,
               ActStats* stats);
  void Stop(const autoscale::Action& a, const Built& built, Timestamp now, ActStats* stats);
  // True when tide is releasing every node of `a` (its instance on record is
  // "releasing": the plan's kDrain of it went through).
  bool Releasing(const autoscale::Action& a, const Built& built);
  // Powers `slot`'s node down in Slurm and deletes its instance at the
  // provider, with the delete recorded first.
  void GiveBack(const Slot& slot, const std::string& instance, Timestamp now, ActStats* stats);
  // Requeues (or cancels) a job whose grace has ended.
  void FinishStop(const ActionRecord& rec, const backends::ObservedJob* job, Timestamp now, ActStats* stats);
  void Fail(ActStats* stats, const std::string& what, const Status& s);

  const config::Config& config_;
  const std::vector<Slot>& slots_;
  backends::ClusterBackend* backend_;
  providers::CloudProvider* provider_;
  Store* store_;
  Memory* memory_;
  LogFn log_;
  int64_t seq_ = 0;  // makes idempotency keys unique within a second
  std::set<size_t> taken_;
  std::string fault_;  // slots bought during the current Apply
};

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_ACTUATOR_H_
