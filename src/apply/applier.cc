#include "apply/applier.h"

#include <algorithm>

#include "core/strings.h"

namespace tide::apply {

using autoscale::Action;
using autoscale::ActionKind;
using backends::Cause;

std::vector<std::string> View::NodesOf(const model::Job& job) const {
  std::vector<std::string> out;
  for (const auto& sh : job.alloc) {
    if (const model::Node* n = FindNode(sh.node)) out.push_back(n->name);
  }
  return out;
}

Cause CauseOf(const Action& a) {
  switch (a.kind) {
    case ActionKind::kScaleUp: return a.forecast ? Cause::kForecast : Cause::kScaleUp;
    case ActionKind::kRelease: return Cause::kRelease;
    case ActionKind::kDrain: return Cause::kDrain;
    case ActionKind::kPreempt: return Cause::kPreemption;
    case ActionKind::kReclaim: return Cause::kIdleReclaim;
    case ActionKind::kEvacuate: return Cause::kSpotInterruption;
    case ActionKind::kConsolidate: return Cause::kConsolidation;
    case ActionKind::kResize: return Cause::kResize;
    case ActionKind::kUnschedulable:
    case ActionKind::kAtMax:
    case ActionKind::kNote: return Cause::kNone;
  }
  return Cause::kNone;
}

// The jobs by the manager's keys ("default/g1", a Slurm job id), as people
// know them; an id the view does not know as itself.
std::string JobList(const View& view, const std::vector<model::JobId>& jobs) {
  std::vector<std::string> s;
  for (size_t i = 0; i < jobs.size() && i < 8; ++i) {
    const model::Job* j = view.FindJob(jobs[i]);
    s.push_back(j != nullptr ? view.JobKey(*j) : StrCat(jobs[i]));
  }
  if (jobs.size() > 8) s.push_back(StrCat("and ", jobs.size() - 8, " more"));
  return StrJoin(s, ",");
}

Applier::Applier(const model::ClusterSpec* spec, ApplyOptions options, backends::WorkloadManager* manager,
                 providers::CloudProvider* cloud, Journal* journal, Listener* listener)
    : spec_(spec), options_(options), manager_(manager), cloud_(cloud), journal_(journal), listener_(listener) {}

void Applier::Log(std::string_view line) {
  if (listener_ != nullptr) listener_->Log(line);
}

void Applier::Refuse(ApplyStats* stats, std::string_view what) {
  ++stats->refused;
  Log(StrCat("refused: ", what));
}

Status Applier::Fail(ApplyStats* stats, std::string_view what, const Status& s) {
  ++stats->errors;
  const std::string line = StrCat(what, ": ", Message(s));
  stats->problems.push_back(line);
  Log(StrCat("error: ", line));
  if (listener_ != nullptr) listener_->Failed(what, s);
  // An Internal error is a bug (the simulator's consistency checks): stop.
  return absl::IsInternal(s) ? s : OkStatus();
}

Status Applier::Apply(const autoscale::ScalingPlan& plan, const View& view, Timestamp now, ApplyStats* stats) {
  if (plan.actions.empty()) return OkStatus();  // most passes decide nothing
  releasing_.clear();
  named_.clear();
  for (const Action& a : plan.actions) {
    Outcome o;
    if (listener_ != nullptr) listener_->Before(a, now);
    Status s;
    switch (a.kind) {
      case ActionKind::kScaleUp:
        s = ScaleUp(a, view, now, stats, &o);
        break;
      case ActionKind::kRelease:
      case ActionKind::kDrain:
        s = Release(a, view, now, stats, &o);
        break;
      case ActionKind::kPreempt:
      case ActionKind::kReclaim:
      case ActionKind::kEvacuate:
      case ActionKind::kConsolidate:
        s = Stop(a, view, now, stats, &o);
        break;
      case ActionKind::kResize:
        s = Resize(a, view, now, stats, &o);
        break;
      case ActionKind::kUnschedulable:
      case ActionKind::kAtMax:
      case ActionKind::kNote:
        Report(a, view);
        break;
    }
    if (!s.ok()) return s;
    if (listener_ != nullptr) listener_->After(a, o, now);
  }
  return OkStatus();
}

Status Applier::ScaleUp(const Action& a, const View& view, Timestamp now, ApplyStats* stats, Outcome* o) {
  if (a.pool < 0 || a.pool >= static_cast<int>(spec_->pools.size())) {
    Refuse(stats, StrCat("scale-up of pool ", a.pool, ": no such pool"));
    ++o->refused;
    return OkStatus();
  }
  const model::NodePool& pool = spec_->pools[static_cast<size_t>(a.pool)];
  std::vector<std::string> taken;
  if (manager_->capabilities().fixed_node_names) {
    taken = view.TakenNames();
    taken.insert(taken.end(), named_.begin(), named_.end());
  }
  const backends::Reason why{CauseOf(a), a.reason};
  for (int i = 0; i < a.count; ++i) {
    Result<std::string> name = manager_->RegisterNode(a.pool, taken);
    if (!name.ok()) {
      Log(StrCat("pool ", pool.name, " has no free node left: bought ", o->created, " of ", a.count, " (",
                 Message(name.status()), ")"));
      break;
    }
    std::string key;
    if (journal_ != nullptr) {
      Result<std::string> begun = journal_->BeginCreate(*name, a.pool, a.reason, now);
      // Never buy what is not recorded first.
      if (!begun.ok()) return Fail(stats, StrCat("record the create of node ", *name), begun.status());
      key = std::move(*begun);
    }
    providers::CreateRequest req;
    req.pool = pool.name;
    req.node = *name;
    req.instance_type = pool.type.name;
    req.tier = pool.tier;
    req.region = pool.region;
    req.idempotency_key = key;
    req.boot_delay = pool.boot_delay.Expected();
    req.why = why;
    Result<providers::Instance> inst = cloud_->Create(req, now);
    if (!inst.ok()) {
      if (journal_ != nullptr) journal_->FailCreate(key, inst.status(), now);
      if (listener_ != nullptr) listener_->CreateFailed(a.pool, inst.status(), now);
      // The provider has no more now (a spot stock-out): the rest of the
      // action is not tried.
      return Fail(stats, StrCat("create node ", *name, " in pool ", pool.name), inst.status());
    }
    if (listener_ != nullptr) listener_->Created(a.pool, *name, key, now);
    if (journal_ != nullptr) {
      Status committed = journal_->CommitCreate(key, *inst, a.pool, now);
      if (!committed.ok()) {
        TIDE_RETURN_IF_ERROR(Fail(stats, StrCat("record instance ", inst->id, " of node ", *name), committed));
      }
    }
    ++stats->creates;
    ++o->created;
    if (journal_ != nullptr) {
      // The live log: one line per node bought.
      Log(StrCat("bought node ", *name, " (pool ", pool.name, ", ", model::TierName(pool.tier), ", instance ",
                 inst->id, ", key ", key, ") for jobs ", JobList(view, a.jobs), ": ", a.reason));
    }
    if (manager_->capabilities().fixed_node_names) named_.push_back(*name);
    taken.push_back(std::move(*name));
  }
  return OkStatus();
}

Status Applier::Release(const Action& a, const View& view, Timestamp now, ApplyStats* stats, Outcome* o) {
  const std::string_view kind = autoscale::ActionKindName(a.kind);
  for (model::NodeId id : a.nodes) {
    const model::Node* n = view.FindNode(id);
    if (n == nullptr) {
      Refuse(stats, StrCat(kind, " node ", id, ": no such node"));
      ++o->refused;
      continue;
    }
    const std::string instance = view.InstanceOf(*n);
    if (instance.empty()) {
      Refuse(stats, StrCat(kind, " node ", n->name, ": tide did not buy it (no instance on record)"));
      ++o->refused;
      continue;
    }
    if (a.kind == ActionKind::kRelease && !n->idle()) {
      Refuse(stats, StrCat(kind, " node ", n->name, ": it runs a job now"));
      ++o->refused;
      continue;
    }
    if (view.Releasing(*n)) continue;  // cordoned for release already; it goes once empty
    const Cause cause = CauseOf(a);
    Status s = manager_->Cordon(n->name, {cause, a.reason});
    // A node the manager has not seen yet (its machine is still booting)
    // takes no work anyway: it is given back without a cordon.
    if (absl::IsNotFound(s)) s = OkStatus();
    if (!s.ok()) {
      TIDE_RETURN_IF_ERROR(Fail(stats, StrCat("cordon node ", n->name), s));
      continue;
    }
    ++stats->cordons;
    o->done = true;
    releasing_.insert(id);
    if (journal_ != nullptr) journal_->MarkReleasing(n->name);
    const std::optional<bool> empty = view.EmptyNow(*n);
    if (empty.value_or(false)) {
      const bool booting = n->state == model::NodeState::kProvisioning;
      if (journal_ != nullptr && booting) Log(StrCat("releasing node ", n->name, " while it boots: ", a.reason));
      const std::string name = n->name;  // GiveBack may remove the node from the snapshot
      TIDE_RETURN_IF_ERROR(GiveBack(name, instance, n->pool, now, stats));
      continue;
    }
    if (journal_ != nullptr) Log(StrCat("draining node ", n->name, " to release it: ", a.reason));
  }
  return OkStatus();
}

Status Applier::GiveBack(const std::string& node, const std::string& instance, int pool, Timestamp now,
                         ApplyStats* stats) {
  std::string key;
  if (journal_ != nullptr) {
    Result<std::string> begun = journal_->BeginDelete(node, instance, pool, now);
    if (!begun.ok()) return Fail(stats, StrCat("record the delete of node ", node), begun.status());
    key = std::move(*begun);
  }
  Status removed = manager_->RemoveNode(node);
  if (!removed.ok()) {
    if (absl::IsInternal(removed)) return removed;
    Log(StrCat("note: removing node ", node, " from ", manager_->capabilities().name, " failed (", Message(removed),
               "); the instance is deleted anyway, the node stays cordoned"));
  }
  Status s = cloud_->Delete(instance, key, now);
  if (!s.ok()) return Fail(stats, StrCat("delete instance ", instance, " (node ", node, ")"), s);
  if (journal_ != nullptr) {
    Status done = journal_->FinishDelete(key, instance, now);
    if (!done.ok()) TIDE_RETURN_IF_ERROR(Fail(stats, StrCat("record the delete of instance ", instance), done));
  }
  ++stats->deletes;
  if (listener_ != nullptr) listener_->GaveBack(node, now);
  if (journal_ != nullptr) {
    Log(StrCat("released node ", node, " (instance ", instance, ", pool ",
               pool >= 0 && pool < static_cast<int>(spec_->pools.size()) ? spec_->pools[static_cast<size_t>(pool)].name
                                                                          : std::string("?"),
               ")"));
  }
  return OkStatus();
}

Status Applier::Stop(const Action& a, const View& view, Timestamp now, ApplyStats* stats, Outcome* o) {
  const std::string_view kind = autoscale::ActionKindName(a.kind);
  if (a.kind == ActionKind::kConsolidate) {
    // Moving jobs off a node pays only if the node is then given back: tide
    // must be releasing every node the action names.
    bool releasing = !a.nodes.empty();
    for (model::NodeId id : a.nodes) {
      const model::Node* n = view.FindNode(id);
      releasing = releasing && n != nullptr && (releasing_.contains(id) || view.Releasing(*n));
    }
    if (!releasing) {
      Refuse(stats, StrCat(kind, " jobs ", JobList(view, a.jobs), ": their node is not being released"));
      ++o->refused;
      return OkStatus();
    }
  }
  absl::flat_hash_set<model::NodeId> disrupted;  // each node counts once per action
  for (model::JobId id : a.jobs) {
    const model::Job* j = view.FindJob(id);
    if (j == nullptr) {
      Refuse(stats, StrCat(kind, " job ", id, ": no such job"));
      ++o->refused;
      continue;
    }
    if (j->state == model::JobState::kStopping) continue;  // told already; it is on its way out
    if (j->state != model::JobState::kRunning) {
      Refuse(stats, StrCat(kind, " job ", view.JobKey(*j), ": it is not running"));
      ++o->refused;
      continue;
    }
    // Protection guards against tide's choices. An evacuation is the
    // provider's: the node goes whatever tide does, and a checkpoint first
    // saves the work.
    if (j->spec.is_protected && a.kind != ActionKind::kEvacuate) {
      Refuse(stats, StrCat(kind, " job ", view.JobKey(*j), ": it is protected"));
      ++o->refused;
      continue;
    }
    // What the disruption budget counts: the nodes of the jobs tide chose
    // to stop (a provider's interruption is not tide's).
    int fresh = 0;
    if (a.kind != ActionKind::kEvacuate) {
      for (const auto& sh : j->alloc) fresh += disrupted.insert(sh.node).second ? 1 : 0;
    }
    bool stopped = false;
    TIDE_RETURN_IF_ERROR(StopOne(*j, a, view, now, stats, &stopped));
    if (!stopped) continue;
    ++o->stopped;
    if (fresh > 0 && listener_ != nullptr) listener_->Disrupted(fresh, now);
  }
  return OkStatus();
}

Status Applier::StopOne(const model::Job& job, const Action& a, const View& view, Timestamp now, ApplyStats* stats,
                        bool* stopped) {
  const backends::Capabilities& caps = manager_->capabilities();
  const std::string key = view.JobKey(job);
  const bool cancel = a.kind == ActionKind::kReclaim && a.cancel;
  const backends::Reason why{CauseOf(a), a.reason};
  Duration grace = options_.checkpoint_grace;
  if (a.kind == ActionKind::kEvacuate) {
    // Out before the provider takes the node.
    for (const auto& sh : job.alloc) {
      const model::Node* n = view.FindNode(sh.node);
      if (n != nullptr && n->interrupt_at != kInfiniteFuture) {
        grace = std::min(grace, std::max(Duration{0}, n->interrupt_at - now - options_.interruption_margin));
      }
    }
  }
  const std::string_view kind = autoscale::ActionKindName(a.kind);
  if (caps.checkpoint && journal_ != nullptr) {
    // Two steps: the signal now, the requeue (or cancel) once the grace is
    // over (FinishStops, on a later observation).
    PendingStop p;
    p.job = key;
    p.cause = why.cause;
    p.cancel = cancel;
    p.signalled = now;
    p.deadline = now + grace;
    p.gpus = job.Workers() * job.spec.gpus_per_worker;
    Result<bool> begun = journal_->BeginStop(&p, job.restarts, now);
    if (!begun.ok()) return Fail(stats, StrCat("record the stop of job ", key), begun.status());
    if (!*begun) return OkStatus();  // under way already
    Status s = manager_->Checkpoint(key);
    if (!s.ok()) {
      journal_->FailStop(p, s, now);
      return Fail(stats, StrCat("checkpoint signal to job ", key), s);
    }
    ++stats->checkpoints;
    *stopped = true;
    journal_->StopSignalled(p, a.reason, now);
    if (listener_ != nullptr) listener_->Stopped(job, key, why.cause, cancel, now);
    Log(StrCat("sent ", caps.checkpoint_signal.empty() ? std::string("the checkpoint signal") : caps.checkpoint_signal,
               " to job ", key, " on ", StrJoin(view.NodesOf(job), ","), " (", kind, "; ",
               cancel ? "cancel" : "requeue", " in ", grace.count(), " s): ", a.reason));
    return OkStatus();
  }
  if (cancel ? !caps.cancel : !caps.evict) {
    Refuse(stats, StrCat(kind, " job ", key, ": ", caps.name, " can neither ", cancel ? "cancel" : "evict",
                         " it nor send it a checkpoint signal"));
    return OkStatus();
  }
  Status s = cancel ? manager_->Cancel(key, grace, why) : manager_->Evict(key, grace, why);
  if (backends::IsRefused(s)) {
    Refuse(stats, StrCat(kind, " job ", key, ": ", caps.name, " refused the eviction (", Message(s),
                         "); asked again on a later pass"));
    return OkStatus();
  }
  if (!s.ok()) return Fail(stats, StrCat(cancel ? "cancel" : "evict", " job ", key), s);
  cancel ? ++stats->cancels : ++stats->evictions;
  *stopped = true;
  if (listener_ != nullptr) listener_->Stopped(job, key, why.cause, cancel, now);
  if (journal_ != nullptr) {
    Log(StrCat(cancel ? "cancelled" : "evicted", " job ", key, " on ", StrJoin(view.NodesOf(job), ","), " (", kind,
               "; grace ", grace.count(), " s): ", a.reason));
  }
  return OkStatus();
}

void Applier::FinishStops(const std::vector<PendingStop>& pending,
                          const std::function<const model::Job*(const std::string&)>& running,
                          const std::function<std::vector<std::string>(const model::Job&)>& nodes_of, Timestamp now,
                          ApplyStats* stats) {
  if (journal_ == nullptr) return;
  for (const PendingStop& p : pending) {
    const model::Job* job = running(p.job);
    if (job == nullptr) {
      journal_->FinishStop(p, "gone", 0, "the job left its nodes after the signal", now);
      if (listener_ != nullptr) listener_->StopFinished(p, "gone", now);
      Log(StrCat("job ", p.job, " ended after its checkpoint signal; nothing to requeue"));
      continue;
    }
    if (now < p.deadline) continue;
    if (job->spec.is_protected && p.cause != Cause::kSpotInterruption) {
      ++stats->refused;
      journal_->FinishStop(p, "refused", 0, "the job is protected", now);
      if (listener_ != nullptr) listener_->StopFinished(p, "refused", now);
      Log(StrCat("refused: job ", p.job, " is protected; it is not ", p.cancel ? "cancelled" : "requeued"));
      continue;
    }
    Status s = p.cancel ? manager_->Cancel(p.job, Duration{0}, {p.cause, "grace over"}) : manager_->Requeue(p.job);
    if (!s.ok()) {
      (void)Fail(stats, StrCat(p.cancel ? "cancel" : "requeue", " job ", p.job), s);
      continue;
    }
    p.cancel ? ++stats->cancels : ++stats->requeues;
    // The job was told to checkpoint at `signalled`: what it did after that
    // is lost (a job that never checkpoints loses more; tide cannot see it).
    const double lost = static_cast<double>(std::max<int64_t>(0, (now - p.signalled).count())) * p.gpus;
    journal_->FinishStop(p, p.cancel ? "cancelled" : "requeued", lost,
                         StrCat("after the checkpoint signal at ", FormatTimestamp(p.signalled)), now);
    if (listener_ != nullptr) listener_->StopFinished(p, p.cancel ? "cancelled" : "requeued", now);
    Log(StrCat(p.cancel ? "cancelled" : "requeued", " job ", p.job, " on ", StrJoin(nodes_of(*job), ","),
               " (grace over; lost work ", static_cast<int64_t>(lost), " GPU-seconds)"));
  }
}

Status Applier::Resize(const Action& a, const View& view, Timestamp now, ApplyStats* stats, Outcome* o) {
  const model::Job* j = a.jobs.empty() ? nullptr : view.FindJob(a.jobs[0]);
  if (j == nullptr || j->state != model::JobState::kRunning) {
    Refuse(stats, StrCat("resize job ", a.jobs.empty() ? 0 : a.jobs[0], ": it is not running"));
    ++o->refused;
    return OkStatus();
  }
  const backends::Capabilities& caps = manager_->capabilities();
  const std::string key = view.JobKey(*j);
  if (!caps.resize) {
    Log(StrCat("not carried out: resize job ", key, " to ", a.resize.workers, " workers (", caps.name,
               " cannot resize a running job in place)"));
    return OkStatus();
  }
  backends::ResizeOrder order;
  order.workers = a.resize.workers;
  order.global_batch = a.resize.global_batch;
  order.learning_rate = a.resize.learning_rate;
  for (const auto& [list, out] : {std::pair{&a.resize.add, &order.add}, {&a.resize.remove, &order.remove}}) {
    for (const auto& sh : *list) {
      const model::Node* n = view.FindNode(sh.node);
      if (n == nullptr) {
        Refuse(stats, StrCat("resize job ", key, ": no node ", sh.node));
        ++o->refused;
        return OkStatus();
      }
      out->push_back({n->name, sh.workers});
    }
  }
  Status s = manager_->Resize(key, order, {Cause::kResize, a.reason});
  if (!s.ok()) return Fail(stats, StrCat("resize job ", key), s);
  ++stats->resizes;
  o->done = true;
  return OkStatus();
}

void Applier::Report(const Action& a, const View& view) {
  if (!a.bottleneck || a.jobs.empty() || listener_ == nullptr) return;
  const model::Job* j = view.FindJob(a.jobs[0]);
  listener_->Bottleneck(a.jobs[0], j != nullptr ? view.JobKey(*j) : std::string());
}

Status Applier::Place(const sched::Placement& p, const View& view, Timestamp now, ApplyStats* stats) {
  const model::Job* j = view.FindJob(p.job);
  if (j == nullptr || j->state != model::JobState::kPending) {
    Refuse(stats, StrCat("bind job ", p.job, ": it is not waiting"));
    return OkStatus();
  }
  const std::string key = view.JobKey(*j);
  std::vector<backends::NodeWorkers> where;
  for (const auto& sh : p.shares) {
    const model::Node* n = view.FindNode(sh.node);
    if (n == nullptr) {
      Refuse(stats, StrCat("bind job ", key, ": no node ", sh.node));
      return OkStatus();
    }
    where.push_back({n->name, sh.workers});
  }
  const backends::Reason why{p.backfilled ? Cause::kBackfilled : Cause::kPlaced,
                             p.backfilled ? "placed ahead of its turn (backfill)" : "placed in queue order"};
  Status s = manager_->Bind(key, where, why);
  if (!s.ok()) return Fail(stats, StrCat("bind job ", key), s);
  ++stats->binds;
  std::vector<std::string> names;
  for (const auto& w : where) names.push_back(StrCat(w.node, ":", w.workers));
  Log(StrCat("bound job ", key, " to ", StrJoin(names, ","), p.backfilled ? " (backfilled)" : ""));
  (void)now;
  return OkStatus();
}

}  // namespace tide::apply
