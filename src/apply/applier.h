// Applier: the one way a plan is carried out. The simulator and the live
// controller both hand it the plans of the same decision core, and it turns
// each action into verbs of the workload manager (backends/workload.h) and
// the cloud (providers/provider.h), checking each kind's preconditions once:
//
//   scale-up     a name for each node (RegisterNode), the journal's record,
//                then the provider's create; the first refusal ends the
//                action (the rest are not tried)
//   release      only an empty node tide bought: cordoned, then given back
//                (RemoveNode, the provider's delete) as soon as the
//                manager's view shows it empty
//   drain        cordoned; given back once its work is gone
//   preempt, reclaim, evacuate, consolidate
//                only running jobs; never a protected one, but evacuation
//                (the provider takes the node whatever tide does); a
//                consolidation only off nodes tide is giving back. Where
//                the manager has a checkpoint signal (Slurm), tide signals
//                and finishes the stop (requeue or cancel) after the grace;
//                elsewhere it asks the manager to evict (or cancel) with the
//                grace. A refusal (a disruption budget) is counted and the
//                decision core asks again later.
//   resize       carried out where the manager can resize a running job,
//                reported as not carried out elsewhere
//   reports      nothing to do; a bottleneck note marks its job
//
// The rules and their reasons: docs/design/applier.md.
#ifndef TIDE_APPLY_APPLIER_H_
#define TIDE_APPLY_APPLIER_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "apply/journal.h"
#include "autoscale/plan.h"
#include "backends/workload.h"
#include "core/status.h"
#include "core/time.h"
#include "model/cluster.h"
#include "providers/provider.h"
#include "sched/scheduler.h"

namespace tide::apply {

// How the applier finds the plan's jobs and nodes as they are now, and what
// the driver knows of them beyond the snapshot.
class View {
 public:
  virtual ~View() = default;
  // The job or node with this id now; nullptr once it is gone.
  virtual const model::Job* FindJob(model::JobId id) const = 0;
  virtual const model::Node* FindNode(model::NodeId id) const = 0;
  // The workload manager's key of a job.
  virtual std::string JobKey(const model::Job& job) const = 0;
  // The names the workload manager knows `job`'s nodes by (for the log).
  virtual std::vector<std::string> NodesOf(const model::Job& job) const;
  // The cloud instance tide holds for a node; "" when it holds none (a node
  // tide did not buy, which it never gives back).
  virtual std::string InstanceOf(const model::Node& node) const = 0;
  // Tide cordoned the node to give it back before this plan.
  virtual bool Releasing(const model::Node& node) const = 0;
  // Whether the node runs nothing, as far as the manager's view now shows;
  // nullopt when only a fresh observation can tell (work may have landed
  // since the snapshot).
  virtual std::optional<bool> EmptyNow(const model::Node& node) const = 0;
  // Node names tide holds a machine for (never handed out again).
  virtual std::vector<std::string> TakenNames() const = 0;
};

// What a carried-out action came to, for the driver's records.
struct Outcome {
  int created = 0;   // scale-up: nodes created
  int stopped = 0;   // stops: jobs told to stop
  int refused = 0;   // things the applier or the manager declined
  bool done = false;  // the action's main step went through (resize, drain, release)
};

// Hooks for the driver: its log, its figures and what it remembers between
// plans. Every method has a default that does nothing.
class Listener {
 public:
  virtual ~Listener() = default;
  // Around each action, in plan order.
  virtual void Before(const autoscale::Action& a, Timestamp now) {}
  virtual void After(const autoscale::Action& a, const Outcome& o, Timestamp now) {}
  // A line for the log: what was done, declined or failed, naming the job
  // or node.
  virtual void Log(std::string_view line) {}
  // A step failed (a verb or the journal): `what` names it.
  virtual void Failed(std::string_view what, const Status& s) {}
  // A provider create failed for `pool`.
  virtual void CreateFailed(int pool, const Status& s, Timestamp now) {}
  // A node was created for `pool` (the live controller's crash test kills
  // itself here, before the journal records it).
  virtual void Created(int pool, const std::string& node, const std::string& key, Timestamp now) {}
  // Tide stopped jobs on `nodes` nodes (a disruption, for the budget).
  virtual void Disrupted(int nodes, Timestamp now) {}
  // A job (`key`: the manager's) was told to stop.
  virtual void Stopped(const model::Job& job, const std::string& key, backends::Cause cause, bool cancel,
                       Timestamp now) {}
  // A stop begun with a checkpoint signal ended: `outcome` as in
  // Journal::FinishStop.
  virtual void StopFinished(const PendingStop& stop, std::string_view outcome, Timestamp now) {}
  // A node was given back to the provider.
  virtual void GaveBack(const std::string& node, Timestamp now) {}
  // A report marked its job (`key`: the manager's) as input- or
  // communication-bound.
  virtual void Bottleneck(model::JobId job, const std::string& key) {}
};

struct ApplyOptions {
  // How long a stopped job has to checkpoint and exit.
  Duration checkpoint_grace = Seconds(60);
  // An evacuated job must be gone this long before its node is interrupted.
  Duration interruption_margin = Seconds(5);
};

// Counts of what was done, for the metrics and /status.
struct ApplyStats {
  int creates = 0, deletes = 0, cordons = 0, uncordons = 0, checkpoints = 0, evictions = 0, requeues = 0,
      cancels = 0, binds = 0, resizes = 0;
  int refused = 0;  // declined by the applier's rules or refused by the manager
  int errors = 0;   // a verb, a provider call or the journal failed
  std::vector<std::string> problems;  // the errors, for /status
};

class Applier {
 public:
  // Borrowed, and must outlive the applier: `spec`, `manager`, `cloud`;
  // `journal` and `listener` may be null.
  Applier(const model::ClusterSpec* spec, ApplyOptions options, backends::WorkloadManager* manager,
          providers::CloudProvider* cloud, Journal* journal, Listener* listener);

  // Carries out `plan`, decided at `now`, in order. Returns an error only
  // for a bug: Internal from a verb (the simulator's consistency checks).
  // Everything else is counted in `stats` and logged.
  Status Apply(const autoscale::ScalingPlan& plan, const View& view, Timestamp now, ApplyStats* stats);

  // Starts a job the scheduler placed, through the manager's Bind (for
  // managers that do not schedule by themselves).
  Status Place(const sched::Placement& p, const View& view, Timestamp now, ApplyStats* stats);

  // Gives the machine behind `node` back: journal, the manager's
  // RemoveNode, the provider's delete. For a node cordoned for release that
  // emptied (the simulator as it happens, the controller on a fresh
  // observation).
  Status GiveBack(const std::string& node, const std::string& instance, int pool, Timestamp now,
                  ApplyStats* stats);

  // Finishes the stops begun with a checkpoint signal whose grace is over
  // (requeue or cancel), and forgets those whose job left by itself.
  // `running`: the manager's key -> the job, for jobs still running.
  void FinishStops(const std::vector<PendingStop>& pending,
                   const std::function<const model::Job*(const std::string&)>& running,
                   const std::function<std::vector<std::string>(const model::Job&)>& nodes_of, Timestamp now,
                   ApplyStats* stats);

  const backends::Capabilities& capabilities() const { return manager_->capabilities(); }

 private:
  Status ScaleUp(const autoscale::Action& a, const View& view, Timestamp now, ApplyStats* stats, Outcome* o);
  Status Release(const autoscale::Action& a, const View& view, Timestamp now, ApplyStats* stats, Outcome* o);
  Status Stop(const autoscale::Action& a, const View& view, Timestamp now, ApplyStats* stats, Outcome* o);
  Status StopOne(const model::Job& job, const autoscale::Action& a, const View& view, Timestamp now,
                 ApplyStats* stats, bool* stopped);
  Status Resize(const autoscale::Action& a, const View& view, Timestamp now, ApplyStats* stats, Outcome* o);
  void Report(const autoscale::Action& a, const View& view);
  // Counts and logs a declined step.
  void Refuse(ApplyStats* stats, std::string_view what);
  // Counts and logs a failed step; Internal is returned to stop the plan.
  Status Fail(ApplyStats* stats, std::string_view what, const Status& s);
  void Log(std::string_view line);

  const model::ClusterSpec* spec_;
  ApplyOptions options_;
  backends::WorkloadManager* manager_;
  providers::CloudProvider* cloud_;
  Journal* journal_;
  Listener* listener_;
  // Nodes cordoned for release during the current plan.
  absl::flat_hash_set<model::NodeId> releasing_;
  // Names handed to nodes bought during the current plan.
  std::vector<std::string> named_;
};

// The cause a plan action's stop or cordon is recorded with.
backends::Cause CauseOf(const autoscale::Action& a);

// "1,2,3" for at most eight jobs, then "and N more".
std::string JobList(const std::vector<model::JobId>& jobs);

}  // namespace tide::apply

#endif  // TIDE_APPLY_APPLIER_H_
