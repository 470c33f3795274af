#include "sim/simulator.h"
#include "core/strings.h"

#include <algorithm>


namespace tide::sim {

using model::Job;
using model::JobState;
using model::Node;
using model::NodeState;

Simulator::Simulator(const model::ClusterSpec* spec, autoscale::PolicyProfile policy, SimOptions options,
                     trace::TraceReader* trace, SimObserver* observer)
    : spec_(spec),
      policy_(std::move(policy)),
      options_(options),
      trace_(trace),
      observer_(observer),
      scheduler_(policy_.scheduler),
      provider_(options.seed),
      ledger_(spec) {}

Node* Simulator::FindNode(model::NodeId id) {
  auto it = node_index_.find(id);
  return it == node_index_.end() ? nullptr : &state_.nodes[it->second];
}

Job* Simulator::FindJob(model::JobId id) {
  auto it = job_index_.find(id);
  return it == job_index_.end() ? nullptr : &state_.jobs[it->second];
}

void Simulator::RemoveJob(model::JobId id) {
  const size_t i = job_index_.at(id);
  job_index_.erase(id);
  if (i + 1 != state_.jobs.size()) {
    state_.jobs[i] = std::move(state_.jobs.back());
    job_index_[state_.jobs[i].id] = i;
  }
  state_.jobs.pop_back();
}

void Simulator::RemoveNode(model::NodeId id) {
  const size_t i = node_index_.at(id);
  node_index_.erase(id);
  if (i + 1 != state_.nodes.size()) {
    state_.nodes[i] = std::move(state_.nodes.back());
    node_index_[state_.nodes[i].id] = i;
  }
  state_.nodes.pop_back();
}

void Simulator::Log(Timestamp now, std::string_view kind, std::string_view text) {
  if (!options_.record_decisions) return;
  decisions_.push_back(StrCat(FormatTimestamp(now), " ", policy_.name, " ", kind, " ", text));
}

Status Simulator::Init() {
  if (spec_->pools.empty()) return absl::InvalidArgumentError("the cluster has no pools");
  if (spec_->pools.size() > 64) return absl::InvalidArgumentError("at most 64 pools are supported");
  state_.spec = spec_;
  pool_seq_.assign(spec_->pools.size(), 0);
  waits_by_class_.assign(spec_->priority_classes.size(), {});
  jcts_by_class_.assign(spec_->priority_classes.size(), {});
  TIDE_ASSIGN_OR_RETURN(autoscale::Autoscaler as, autoscale::Autoscaler::Make(policy_.autoscaler));
  autoscaler_.emplace(std::move(as));

  t0_ = trace_->start();
  // Every pool starts at its minimum, already running.
  for (size_t p = 0; p < spec_->pools.size(); ++p) {
    for (int i = 0; i < spec_->pools[p].min_nodes; ++i) {
      CreateNode(static_cast<int>(p), t0_);
      Node& n = state_.nodes.back();
      n.state = NodeState::kReady;
      n.ready_at = t0_;
      n.idle_since = t0_;
    }
  }
  // The boot events CreateNode queued for these are stale; NodeReady ignores ready nodes.
  TIDE_RETURN_IF_ERROR(ReadNextJob());
  tick_at_ = t0_;
  queue_.Push(t0_, EventKind::kTick);
  return OkStatus();
}

Status Simulator::ReadNextJob() {
  TIDE_ASSIGN_OR_RETURN(next_job_, trace_->Next());
  if (!next_job_) return OkStatus();
  if (next_job_->submit < t0_) {
    return absl::InvalidArgumentError(StrCat(trace_->Describe(), ": job ", next_job_->name, " is submitted at ",
                                                   FormatTimestamp(next_job_->submit),
                                                   ", before the trace start ", FormatTimestamp(t0_),
                                                   "; set simulation.start earlier"));
  }
  if (next_job_->submit < last_arrival_) {
    return absl::InvalidArgumentError(
        StrCat(trace_->Describe(), ": job ", next_job_->name, " is out of submission order"));
  }
  queue_.Push(next_job_->submit, EventKind::kArrival);
  return OkStatus();
}

Status Simulator::HandleEvent(const Event& e, bool* changed, bool* tick) {
  switch (e.kind) {
    case EventKind::kArrival: {
      Job job;
      job.id = next_job_id_++;
      job.spec = std::move(*next_job_);
      if (job.spec.priority_class < 0 || job.spec.priority_class >= static_cast<int>(spec_->priority_classes.size())) {
        return absl::InvalidArgumentError(StrCat("job ", job.spec.name, " has an unknown priority class"));
      }
      job.priority = spec_->priority_classes[job.spec.priority_class].value;
      last_arrival_ = e.time;
      ++result_.jobs_total;
      job_index_[job.id] = state_.jobs.size();
      state_.jobs.push_back(std::move(job));
      *changed = true;
      return ReadNextJob();
    }
    case EventKind::kNodeReady: {
      Node* n = FindNode(e.a);
      if (n == nullptr || n->state != NodeState::kProvisioning) return OkStatus();  // released, or started ready
      n->state = NodeState::kReady;
      n->ready_at = e.time;
      if (n->idle()) n->idle_since = e.time;
      *changed = true;
      MaybeStartAfterBoot(e.time);
      return OkStatus();
    }
    case EventKind::kJobEnd:
      *changed = true;
      return CompleteJob(e.a, e.time);
    case EventKind::kJobStart: {
      Job* j = FindJob(e.a);
      if (j != nullptr && j->state == JobState::kStarting) {
        StartRunning(*j, e.time);
        *changed = true;
      }
      return OkStatus();
    }
    case EventKind::kTick:
      if (e.time == tick_at_) {
        *tick = true;
        tick_at_ = kInfiniteFuture;
      }
      return OkStatus();
  }
  return OkStatus();
}

Status Simulator::RunScheduler(Timestamp now) {
  const sched::SchedulerOutput out = scheduler_.Schedule(state_, now);
  for (const auto& p : out.placements) TIDE_RETURN_IF_ERROR(ApplyPlacement(p, now));
  if (observer_) observer_->AfterSchedule(state_, out, now);
  return OkStatus();
}

Status Simulator::ApplyPlacement(const sched::Placement& p, Timestamp now) {
  Job* job = FindJob(p.job);
  if (job == nullptr || job->state != JobState::kPending) {
    return absl::InternalError(StrCat("scheduler placed job ", p.job, ", which is not pending"));
  }
  int workers = 0;
  bool all_ready = true;
  Timestamp last_ready = now;
  std::vector<std::string> where;
  for (const auto& sh : p.shares) {
    Node* n = FindNode(sh.node);
    const int gpus = sh.workers * job->spec.gpus_per_worker;
    if (n == nullptr || n->free_gpus < gpus) {
      return absl::InternalError(StrCat("scheduler over-allocated node ", sh.node, " for job ", job->spec.name));
    }
    n->free_gpus -= gpus;
    n->idle_since = kInfiniteFuture;
    if (n->state != NodeState::kReady) {
      all_ready = false;
      last_ready = std::max(last_ready, n->ready_at);
    }
    workers += sh.workers;
    if (options_.record_decisions && options_.log_job_starts) where.push_back(StrCat(n->name, ":", sh.workers));
  }
  if (workers != job->spec.workers) {
    return absl::InternalError(StrCat("scheduler placed ", workers, " of ", job->spec.workers,
                                            " workers of job ", job->spec.name));
  }
  job->alloc = p.shares;
  job->started = now;
  if (p.backfilled) ++result_.jobs_backfilled;
  if (options_.record_decisions && options_.log_job_starts) {
    Log(now, all_ready ? "start" : "allocate",
        StrCat(job->spec.name, " (", job->spec.workers, "x", job->spec.gpus_per_worker, " GPUs) on ",
                     StrJoin(where, ","), ": waited ", FormatDuration(now - job->spec.submit),
                     p.backfilled ? ", backfilled" : "", all_ready ? "" : ", waits for its nodes to boot"));
  }
  if (all_ready) {
    StartRunning(*job, now);
  } else {
    job->state = JobState::kStarting;
    job->expected_end = AlignUp(last_ready, t0_, policy_.start_tick) + job->spec.runtime;
  }
  return OkStatus();
}

void Simulator::StartRunning(Job& job, Timestamp now) {
  job.state = JobState::kRunning;
  job.started = now;
  job.expected_end = now + job.spec.runtime;
  queue_.Push(job.expected_end, EventKind::kJobEnd, job.id);
  const int64_t wait = (now - job.spec.submit).count();
  waits_.push_back(wait);
  waits_by_class_[job.spec.priority_class].push_back(wait);
  ++result_.jobs_started;
}

void Simulator::MaybeStartAfterBoot(Timestamp now) {
  for (auto& j : state_.jobs) {
    if (j.state != JobState::kStarting) continue;
    bool ready = true;
    for (const auto& sh : j.alloc) {
      const Node* n = FindNode(sh.node);
      ready = ready && n != nullptr && n->state == NodeState::kReady;
    }
    if (!ready) continue;
    const Timestamp at = AlignUp(now, t0_, policy_.start_tick);
    if (at == now) {
      StartRunning(j, now);
    } else {
      j.expected_end = at + j.spec.runtime;
      queue_.Push(at, EventKind::kJobStart, j.id);
    }
  }
}

Status Simulator::CompleteJob(model::JobId id, Timestamp now) {
  Job* job = FindJob(id);
  if (job == nullptr || job->state != JobState::kRunning) {
    return absl::InternalError(StrCat("job ", id, " ended but was not running"));
  }
  for (const auto& sh : job->alloc) {
    Node* n = FindNode(sh.node);
    if (n == nullptr) return absl::InternalError(StrCat("job ", job->spec.name, " ran on a vanished node"));
    n->free_gpus += sh.workers * job->spec.gpus_per_worker;
    if (n->idle() && n->state == NodeState::kReady) n->idle_since = now;
  }
  busy_gpu_seconds_ += int64_t{job->spec.gpus()} * (now - job->started).count();
  const int64_t jct = (now - job->spec.submit).count();
  jcts_.push_back(jct);
  jcts_by_class_[job->spec.priority_class].push_back(jct);
  ++result_.jobs_completed;
  last_completion_ = now;
  RemoveJob(id);
  return OkStatus();
}

void Simulator::CreateNode(int pool, Timestamp now) {
  const model::NodePool& p = spec_->pools[pool];
  Node n;
  n.id = next_node_id_++;
  n.name = StrCat(p.name, "-", ++pool_seq_[pool]);
  n.pool = pool;
  n.state = NodeState::kProvisioning;
  n.created = now;
  n.ready_at = now + provider_.BootDelay(p);
  n.gpus = n.free_gpus = p.type.gpus;
  queue_.Push(n.ready_at, EventKind::kNodeReady, n.id);
  bill_[n.id] = ledger_.Open(pool, now);
  node_index_[n.id] = state_.nodes.size();
  state_.nodes.push_back(std::move(n));
  ++result_.nodes_bought;
  ++live_nodes_;
  result_.peak_nodes = std::max(result_.peak_nodes, live_nodes_);
}

Status Simulator::ReleaseNode(model::NodeId id, Timestamp now) {
  Node* n = FindNode(id);
  if (n == nullptr) return absl::InternalError(StrCat("plan releases unknown node ", id));
  if (!n->idle()) {
    return absl::InternalError(StrCat("plan releases node ", n->name, ", which runs jobs"));
  }
  ledger_.Close(bill_.at(id), now);
  bill_.erase(id);
  RemoveNode(id);
  ++result_.nodes_released;
  --live_nodes_;
  return OkStatus();
}

Status Simulator::RunAutoscaler(Timestamp now) {
  TIDE_ASSIGN_OR_RETURN(autoscale::ScalingPlan plan, autoscaler_->RunOnce(state_, now));
  ++result_.autoscaler_runs;
  if (observer_) observer_->OnPlan(state_, plan, now);
  as_dirty_ = false;
  wakeup_ = plan.next_wakeup;
  bool bought = false, released = false;
  for (const auto& a : plan.actions) {
    switch (a.kind) {
      case autoscale::ActionKind::kScaleUp: {
        const auto& pool = spec_->pools[a.pool];
        Log(now, "scale-up", StrCat(pool.name, " +", a.count, ": ", a.reason));
        for (int i = 0; i < a.count; ++i) CreateNode(a.pool, now);
        bought = true;
        break;
      }
      case autoscale::ActionKind::kRelease: {
        std::vector<std::string> names;
        for (auto id : a.nodes) {
          if (const Node* n = FindNode(id)) names.push_back(n->name);
        }
        Log(now, "release",
            StrCat(spec_->pools[a.pool].name, " -", a.nodes.size(), " [", StrJoin(names, " "), "]: ",
                         a.reason));
        for (auto id : a.nodes) TIDE_RETURN_IF_ERROR(ReleaseNode(id, now));
        released = true;
        break;
      }
      case autoscale::ActionKind::kUnschedulable:
      case autoscale::ActionKind::kAtMax: {
        for (auto id : a.jobs) {
          if (a.kind == autoscale::ActionKind::kUnschedulable) unschedulable_.insert(id);
          auto [it, fresh] = noted_.try_emplace(id, a.kind);
          if (!fresh && it->second == a.kind) continue;  // said already
          it->second = a.kind;
          Log(now, autoscale::ActionKindName(a.kind), a.reason);
        }
        break;
      }
    }
  }
  // Applying the plan changed what the next pass sees (room under a max, say).
  if (bought || released) as_dirty_ = true;
  if (bought && policy_.scheduler.place_on_provisioning) TIDE_RETURN_IF_ERROR(RunScheduler(now));
  return OkStatus();
}

void Simulator::ScheduleTick(Timestamp now) {
  const Duration scan = policy_.autoscaler.scan_interval;
  Timestamp want = kInfiniteFuture;
  // every_tick keeps ticking while anything else is still to come.
  const bool tick_anyway = options_.every_tick && (!queue_.empty() || wakeup_ != kInfiniteFuture);
  if (scan.count() > 0) {
    if (tick_anyway || as_dirty_) {
      want = AlignUp(now + Seconds(1), t0_, scan);
    } else if (wakeup_ != kInfiniteFuture) {
      want = AlignUp(std::max(wakeup_, now + Seconds(1)), t0_, scan);
    }
  } else if (wakeup_ != kInfiniteFuture && wakeup_ > now) {
    want = wakeup_;
  }
  if (want < tick_at_) {
    tick_at_ = want;
    queue_.Push(want, EventKind::kTick);
  }
}

Result<SimOutput> Simulator::Run() {
  TIDE_RETURN_IF_ERROR(Init());
  const bool event_driven = policy_.autoscaler.scan_interval.count() == 0;
  while (!queue_.empty()) {
    const Timestamp now = queue_.top().time;
    bool changed = false, tick = false;
    while (!queue_.empty() && queue_.top().time == now) {
      const Event e = queue_.Pop();
      ++result_.events;
      TIDE_RETURN_IF_ERROR(HandleEvent(e, &changed, &tick));
    }
    if (changed) {
      TIDE_RETURN_IF_ERROR(RunScheduler(now));
      as_dirty_ = true;
      // A change at an instant on the loop's grid is seen by that instant's
      // tick, as in a loop that never skips one.
      const Duration scan = policy_.autoscaler.scan_interval;
      if (scan.count() > 0 && AlignUp(now, t0_, scan) == now) tick = true;
    }
    if (tick || (event_driven && (as_dirty_ || now >= wakeup_))) TIDE_RETURN_IF_ERROR(RunAutoscaler(now));
    ScheduleTick(now);
    if (observer_) observer_->AfterStep(state_, now);
  }
  SimOutput out;
  out.result = Finish();
  out.decisions = std::move(decisions_);
  return out;
}

PolicyResult Simulator::Finish() {
  PolicyResult& r = result_;
  r.name = policy_.name;
  r.kind = policy_.kind;
  r.description = policy_.description;
  r.start = t0_;
  r.horizon = std::max({t0_, last_arrival_, last_completion_});
  r.cost = ledger_.Summarize(t0_, r.horizon);
  r.gpu_hours_busy = static_cast<double>(busy_gpu_seconds_) / 3600.0;
  r.utilization = r.cost.gpu_hours_paid > 0 ? r.gpu_hours_busy / r.cost.gpu_hours_paid : 0;
  r.wait_s = ComputePercentiles(&waits_);
  r.jct_s = ComputePercentiles(&jcts_);
  for (size_t c = 0; c < spec_->priority_classes.size(); ++c) {
    if (waits_by_class_[c].empty() && jcts_by_class_[c].empty()) continue;
    r.wait_by_priority.emplace_back(spec_->priority_classes[c].name, ComputePercentiles(&waits_by_class_[c]));
    r.jct_by_priority.emplace_back(spec_->priority_classes[c].name, ComputePercentiles(&jcts_by_class_[c]));
  }
  r.jobs_unstarted = r.jobs_total - r.jobs_started;
  r.jobs_unschedulable = static_cast<int64_t>(unschedulable_.size());
  return r;
}

}  // namespace tide::sim
