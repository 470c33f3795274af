#include "sim/simulator.h"

#include <algorithm>

#include "core/strings.h"

namespace tide::sim {

namespace {

// The policy's choices about storage loading override the world's defaults.
SimOptions WithPolicy(SimOptions o, const autoscale::PolicyProfile& p) {
  if (p.autoscaler.storage.prefetch) o.world.storage.prefetch = *p.autoscaler.storage.prefetch;
  if (p.autoscaler.storage.stagger) o.world.storage.max_concurrent = *p.autoscaler.storage.stagger;
  return o;
}

}  // namespace

Simulator::Simulator(const model::ClusterSpec* spec, autoscale::PolicyProfile policy, SimOptions options,
                     trace::TraceReader* trace, SimObserver* observer)
    : policy_(std::move(policy)),
      options_(WithPolicy(std::move(options), policy_)),
      trace_(trace),
      sim_(spec, &policy_, &options_.world),
      recorder_(&sim_, options_.record_decisions, options_.progress),
      cloud_(&sim_, &recorder_, options_.world.storage, options_.seed),
      cluster_(&sim_, &recorder_, &cloud_, policy_.start_tick, options_.log_job_starts),
      workload_(&sim_, &cluster_, &cloud_),
      view_(&sim_),
      listener_(&sim_, &recorder_, policy_.autoscaler.budget.window),
      applier_(spec, apply::ApplyOptions{}, &workload_, &cloud_, /*journal=*/nullptr, &listener_),
      scheduler_(policy_.scheduler) {
  sim_.observer = observer;
  cloud_.set_cluster(&cluster_);
  // A node cordoned for release is given back the moment its last job
  // leaves: the simulated state is always current.
  cluster_.set_on_drained([this](model::NodeId id, Timestamp now) {
    const model::Node* n = sim_.PeekNode(id);
    if (n == nullptr) return;
    const std::string name = n->name;  // the node goes while it is given back
    Status s = applier_.GiveBack(name, name, n->pool, now, &stats_);
    if (!s.ok() && deferred_.ok()) deferred_ = s;
  });
}

Status Simulator::SyncIndex() {
  sim_.index.Sync(sim_.state);
  if (options_.check_index) {
    if (const std::string diff = sim_.index.Diff(sim_.state); !diff.empty()) {
      return absl::InternalError(StrCat("the simulator's state index differs from the state: ", diff));
    }
  }
  return OkStatus();
}

Status Simulator::Init() {
  if (initialized_) return OkStatus();
  initialized_ = true;
  const model::ClusterSpec* spec = sim_.spec;
  if (spec->pools.empty()) return absl::InvalidArgumentError("the cluster has no pools");
  if (spec->pools.size() > 64) return absl::InvalidArgumentError("at most 64 pools are supported");
  model::ClusterState& state = sim_.state;
  state.spec = spec;
  state.metrics = &cluster_.metrics();
  state.progress = cluster_.progress();
  state.index = &sim_.index;
  // Consolidation reads where jobs run from the index, which then keeps it.
  sim_.index.KeepPlacement(policy_.autoscaler.consolidation.enabled);
  state.pools.assign(spec->pools.size(), model::PoolStatus{});
  const auto& cons = policy_.autoscaler.consolidation;
  keep_arrivals_ = policy_.autoscaler.forecast.enabled || (cons.enabled && cons.headroom_window.count() > 0);
  TIDE_ASSIGN_OR_RETURN(autoscale::Autoscaler as, autoscale::Autoscaler::Make(policy_.autoscaler));
  autoscaler_.emplace(std::move(as));

  sim_.t0 = trace_->start();
  cloud_.Start(sim_.t0);
  TIDE_RETURN_IF_ERROR(ReadNextJob());
  tick_at_ = sim_.t0;
  sim_.queue.Push(sim_.t0, EventKind::kTick);
  return OkStatus();
}

Status Simulator::ReadNextJob() {
  // The next job is read into the spec the last one was moved out of.
  if (!next_job_) next_job_.emplace();
  TIDE_ASSIGN_OR_RETURN(const bool got, trace_->NextInto(&*next_job_));
  if (!got) {
    next_job_.reset();
    return OkStatus();
  }
  if (next_job_->submit < sim_.t0) {
    return absl::InvalidArgumentError(StrCat(trace_->Describe(), ": job ", next_job_->name, " is submitted at ",
                                             FormatTimestamp(next_job_->submit), ", before the trace start ",
                                             FormatTimestamp(sim_.t0), "; set simulation.start earlier"));
  }
  if (next_job_->submit < recorder_.last_arrival()) {
    return absl::InvalidArgumentError(
        StrCat(trace_->Describe(), ": job ", next_job_->name, " is out of submission order"));
  }
  sim_.queue.Push(next_job_->submit, EventKind::kArrival);
  return OkStatus();
}

Status Simulator::HandleEvent(const Event& e, bool* changed, bool* tick) {
  switch (e.kind) {
    case EventKind::kArrival:
      TIDE_RETURN_IF_ERROR(
          cluster_.Submit(&*next_job_, e.time, keep_arrivals_, policy_.autoscaler.forecast.days));
      recorder_.Arrived(e.time);
      *changed = true;
      return ReadNextJob();
    case EventKind::kNodeReady:
      cloud_.NodeReady(e.a, e.time, changed);
      return OkStatus();
    case EventKind::kNodeLoaded:
      cloud_.StorageLoaded(static_cast<uint64_t>(e.b), e.time, changed);
      return OkStatus();
    case EventKind::kJobEnd:
      return cluster_.RunEnded(e.a, static_cast<uint64_t>(e.b), e.time, changed);
    case EventKind::kJobExit:
      return cluster_.Exited(e.a, static_cast<uint64_t>(e.b), e.time, changed);
    case EventKind::kJobStart:
      cluster_.StartDue(e.a, e.time, changed);
      return OkStatus();
    case EventKind::kTick:
      if (e.time == tick_at_) {
        *tick = true;
        tick_at_ = kInfiniteFuture;
      }
      return OkStatus();
    case EventKind::kSpotNotice:
      cloud_.SpotNoticeDue(e.a, FromUnixSeconds(e.b), e.time, changed);
      return OkStatus();
    case EventKind::kSpotKill:
      cloud_.SpotKillDue(e.a, e.time, changed);
      return OkStatus();
    case EventKind::kSpotSupply:
      cloud_.SupplyChanged(e.time);
      *changed = true;
      return OkStatus();
  }
  return OkStatus();
}

Status Simulator::RunScheduler(Timestamp now) {
  // The scheduler reads no job's progress, and every transition computes it
  // from the job's segments; only an observer looks at it here.
  if (sim_.observer != nullptr) cluster_.RefreshJobs(now);
  TIDE_RETURN_IF_ERROR(SyncIndex());
  const sched::SchedulerOutput out = scheduler_.Schedule(sim_.state, now, &kept_capacity_);
  if (options_.check_index) {
    // The kept snapshot, caught up, must say what the nodes say; the pass left it so.
    if (model::IndexFor(sim_.state) != nullptr) kept_capacity_.Sync(*sim_.spec, sim_.index);
    if (const std::string diff = kept_capacity_.Diff(sim_.index); !diff.empty()) {
      return absl::InternalError(StrCat("the scheduler's kept capacity differs from the nodes: ", diff));
    }
  }
  // Tide is the simulated cluster's scheduler: its placements go straight to
  // the cluster, the code SimWorkload::Bind runs, without the round trip
  // through names.
  for (const auto& p : out.placements) TIDE_RETURN_IF_ERROR(cluster_.Place(p, now));
  if (!deferred_.ok()) return deferred_;
  if (sim_.observer != nullptr) sim_.observer->AfterSchedule(sim_.state, out, now);
  return OkStatus();
}

Status Simulator::RunAutoscaler(Timestamp now) {
  if (sim_.observer != nullptr) cluster_.RefreshJobs(now);  // the decision core asks progress; observers read the fields
  TIDE_RETURN_IF_ERROR(SyncIndex());
  TIDE_ASSIGN_OR_RETURN(autoscale::ScalingPlan plan, autoscaler_->RunOnce(sim_.state, now));
  ++sim_.result.autoscaler_runs;
  if (sim_.observer != nullptr) sim_.observer->OnPlan(sim_.state, plan, now);
  as_dirty_ = false;
  wakeup_ = plan.next_wakeup;
  listener_.Reset();
  workload_.set_now(now);
  stats_.problems.clear();
  TIDE_RETURN_IF_ERROR(applier_.Apply(plan, view_, now, &stats_));
  if (!deferred_.ok()) return deferred_;
  if (!listener_.refusal().empty()) {
    return absl::InternalError(StrCat("the plan at ", FormatTimestamp(now), " asked for what the state forbids: ",
                                      listener_.refusal()));
  }
  // Applying the plan changed what the next pass sees (room under a max, say).
  if (listener_.changed()) as_dirty_ = true;
  // GPUs a shrink gave back are for the jobs waiting now, as in a workload
  // manager that schedules when a job's allocation changes.
  if (listener_.freed() || (listener_.bought() && policy_.scheduler.place_on_provisioning)) {
    TIDE_RETURN_IF_ERROR(RunScheduler(now));
  }
  return OkStatus();
}

void Simulator::ScheduleTick(Timestamp now) {
  const Duration scan = policy_.autoscaler.scan_interval;
  Timestamp want = kInfiniteFuture;
  // every_tick keeps ticking while anything else is still to come.
  const bool tick_anyway = options_.every_tick && (!sim_.queue.empty() || wakeup_ != kInfiniteFuture);
  if (scan.count() > 0) {
    if (tick_anyway || as_dirty_) {
      want = AlignUp(now + Seconds(1), sim_.t0, scan);
    } else if (wakeup_ != kInfiniteFuture) {
      want = AlignUp(std::max(wakeup_, now + Seconds(1)), sim_.t0, scan);
    }
  } else if (wakeup_ != kInfiniteFuture && wakeup_ > now) {
    want = wakeup_;
  }
  if (want < tick_at_) {
    tick_at_ = want;
    sim_.queue.Push(want, EventKind::kTick);
  }
}

Result<SimOutput> Simulator::Run() {
  TIDE_RETURN_IF_ERROR(Init());
  if (options_.record_timeline) {
    recorder_.StartTimeline(options_.timeline_step, options_.timeline_max_buckets);
    recorder_.RecordTimeline(sim_.t0, cluster_.metrics(), cloud_.ledger().egress());
  }
  const bool event_driven = policy_.autoscaler.scan_interval.count() == 0;
  EventQueue& queue = sim_.queue;
  while (!queue.empty()) {
    const Timestamp now = queue.top().time;
    recorder_.HoldTimeline(now);
    bool changed = false, tick = false;
    while (!queue.empty() && queue.top().time == now) {
      const Event e = queue.Pop();
      ++sim_.result.events;
      TIDE_RETURN_IF_ERROR(HandleEvent(e, &changed, &tick));
    }
    if (!deferred_.ok()) return deferred_;
    if (changed) {
      TIDE_RETURN_IF_ERROR(RunScheduler(now));
      as_dirty_ = true;
      // A change at an instant on the loop's grid is seen by that instant's
      // tick, as in a loop that never skips one.
      const Duration scan = policy_.autoscaler.scan_interval;
      if (scan.count() > 0 && AlignUp(now, sim_.t0, scan) == now) tick = true;
    }
    if (tick || (event_driven && (as_dirty_ || now >= wakeup_))) TIDE_RETURN_IF_ERROR(RunAutoscaler(now));
    if (sim_.observer != nullptr) sim_.observer->AfterStep(sim_.state, now);
    recorder_.RecordTimeline(now, cluster_.metrics(), cloud_.ledger().egress());
    recorder_.UpdateProgress(now);
    // The workload is over: nothing left to submit, queue or run. What a
    // live loop would do next (release idle nodes, keep a schedule, look
    // ahead) no longer changes the figures, which end at the last job.
    if (!next_job_ && sim_.state.jobs.empty()) break;
    ScheduleTick(now);
  }
  SimOutput out;
  out.result = recorder_.Finish(cloud_.ledger(), cloud_.forecast_nodes_unused(),
                                options_.record_timeline ? &out.timeline : nullptr, &out.wait_quantiles);
  out.decisions = recorder_.TakeDecisions();
  return out;
}

}  // namespace tide::sim
