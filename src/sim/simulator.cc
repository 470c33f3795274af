#include "sim/simulator.h"

#include <algorithm>
#include <cmath>

#include "autoscale/scaleup/scale_up.h"
#include "core/strings.h"

namespace tide::sim {

using model::Job;
using model::JobState;
using model::Node;
using model::NodeState;

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
    : spec_(spec),
      policy_(std::move(policy)),
      options_(WithPolicy(std::move(options), policy_)),
      trace_(trace),
      observer_(observer),
      scheduler_(policy_.scheduler),
      provider_(options_.seed),
      spot_rng_(Rng(options_.seed).Fork("spot")),
      storage_(options_.world.storage),
      ledger_(spec),
      metrics_(&runs_) {}

// A node or job found here may be changed by the caller: the index reads it
// again at its next Sync.
Node* Simulator::FindNode(model::NodeId id) {
  const int64_t pos = node_index_.Find(id);
  if (pos < 0) return nullptr;
  index_.TouchNode(static_cast<size_t>(pos));
  return &state_.nodes[static_cast<size_t>(pos)];
}

Job* Simulator::FindJob(model::JobId id) {
  const int64_t pos = job_index_.Find(id);
  if (pos < 0) return nullptr;
  index_.TouchJob(static_cast<size_t>(pos));
  return &state_.jobs[static_cast<size_t>(pos)];
}

void Simulator::TouchJob(const Job& job) { index_.TouchJob(static_cast<size_t>(&job - state_.jobs.data())); }

Status Simulator::SyncIndex() {
  index_.Sync(state_);
  if (options_.check_index) {
    if (const std::string diff = index_.Diff(state_); !diff.empty()) {
      return absl::InternalError(StrCat("the simulator's state index differs from the state: ", diff));
    }
  }
  return OkStatus();
}

void Simulator::RemoveJob(model::JobId id) {
  const size_t i = job_index_.At(id);
  index_.RemoveJob(i);
  job_index_.Erase(id);
  if (i + 1 != state_.jobs.size()) {
    state_.jobs[i] = std::move(state_.jobs.back());
    sim_jobs_[i] = std::move(sim_jobs_.back());
    job_index_.Set(state_.jobs[i].id, i);
  }
  state_.jobs.pop_back();
  sim_jobs_.pop_back();
  metrics_.RunChanged(id);
}

const RunRecord* Simulator::Runs::Find(model::JobId job) const {
  const int64_t pos = sim_->job_index_.Find(job);
  if (pos < 0) return nullptr;
  const auto i = static_cast<size_t>(pos);
  return sim_->state_.jobs[i].state == JobState::kRunning ? &sim_->sim_jobs_[i].run : nullptr;
}

void Simulator::Runs::ForEachRun(absl::FunctionRef<void(model::JobId)> f) const {
  for (size_t i = 0; i < sim_->sim_jobs_.size(); ++i) {
    if (sim_->state_.jobs[i].state == JobState::kRunning) f(sim_->state_.jobs[i].id);
  }
}

// Nodes stay in id order (creation order), which the decision core's passes
// find already sorted.
void Simulator::RemoveNode(model::NodeId id) {
  const size_t i = node_index_.At(id);
  index_.RemoveNode(i);
  node_index_.Erase(id);
  state_.nodes.erase(state_.nodes.begin() + static_cast<std::ptrdiff_t>(i));
  for (size_t k = i; k < state_.nodes.size(); ++k) node_index_.Set(state_.nodes[k].id, k);
}

void Simulator::Log(Timestamp now, std::string_view kind, std::string_view text) {
  if (!options_.record_decisions) return;
  decisions_.push_back(StrCat(FormatTimestamp(now), " ", policy_.name, " ", kind, " ", text));
}

Status Simulator::Init() {
  if (spec_->pools.empty()) return absl::InvalidArgumentError("the cluster has no pools");
  if (spec_->pools.size() > 64) return absl::InvalidArgumentError("at most 64 pools are supported");
  state_.spec = spec_;
  state_.metrics = &metrics_;
  state_.progress = &progress_;
  state_.index = &index_;
  // Consolidation reads where jobs run from the index, which then keeps it.
  index_.KeepPlacement(policy_.autoscaler.consolidation.enabled);
  state_.pools.assign(spec_->pools.size(), model::PoolStatus{});
  pool_seq_.assign(spec_->pools.size(), 0);
  waits_by_class_.assign(spec_->priority_classes.size(), {});
  cost_by_class_.assign(spec_->priority_classes.size(), 0.0);
  jcts_by_class_.assign(spec_->priority_classes.size(), {});
  TIDE_ASSIGN_OR_RETURN(autoscale::Autoscaler as, autoscale::Autoscaler::Make(policy_.autoscaler));
  autoscaler_.emplace(std::move(as));

  t0_ = trace_->start();
  // Every pool starts at its minimum, already running and loaded.
  initializing_ = true;
  for (size_t p = 0; p < spec_->pools.size(); ++p) {
    for (int i = 0; i < spec_->pools[p].min_nodes; ++i) {
      CreateNode(static_cast<int>(p), t0_, false);
      Node& n = state_.nodes.back();  // CreateNode told the index
      n.state = NodeState::kReady;
      n.ready_at = t0_;
      n.idle_since = t0_;
      NodeJoined(n, t0_);  // spot hazards start now; no storage load for the initial fleet
    }
  }
  initializing_ = false;
  // The spot supply series, repeated over the run.
  const auto& supply = options_.world.spot.supply;
  if (!supply.empty()) {
    supply_period_ = supply.back().offset + Seconds(1);
    for (const auto& pt : supply) queue_.Push(t0_ + pt.offset, EventKind::kSpotSupply);
  }
  TIDE_RETURN_IF_ERROR(ReadNextJob());
  tick_at_ = t0_;
  queue_.Push(t0_, EventKind::kTick);
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
  if (next_job_->submit < t0_) {
    return absl::InvalidArgumentError(StrCat(trace_->Describe(), ": job ", next_job_->name, " is submitted at ",
                                             FormatTimestamp(next_job_->submit), ", before the trace start ",
                                             FormatTimestamp(t0_), "; set simulation.start earlier"));
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
      SimJob& sj = sim_jobs_.emplace_back();
      sj.work = WorkFor(job.spec.runtime, job.spec.phases, job.spec.checkpoint);
      last_arrival_ = e.time;
      ++result_.jobs_total;
      const auto& cons = policy_.autoscaler.consolidation;
      if (policy_.autoscaler.forecast.enabled || (cons.enabled && cons.headroom_window.count() > 0)) {
        auto& arr = state_.arrivals;
        arr.push_back({job.spec.submit, job.spec.gpus(), arr.empty() ? 0 : arr.back().before + arr.back().gpus});
        // Keep what the forecast looks back over, plus a day. `keep` only
        // moves on, so the leading run of arrivals older than it only grows:
        // counted on from where it was, not from the front each time.
        const Timestamp keep = e.time - Hours(24) * (policy_.autoscaler.forecast.days + 1);
        size_t& old = arrivals_expired_;
        while (old < arr.size() && arr[old].at < keep) ++old;
        if (old > 1024 && old * 2 > arr.size()) {  // amortised: each entry moves once on average
          arr.erase(arr.begin(), arr.begin() + static_cast<long>(old));
          old = 0;
        }
      }
      job_index_.Set(job.id, state_.jobs.size());
      index_.TouchJob(state_.jobs.size());
      state_.jobs.push_back(std::move(job));
      *changed = true;
      return ReadNextJob();
    }
    case EventKind::kNodeReady: {
      Node* n = FindNode(e.a);
      if (n == nullptr || n->state != NodeState::kProvisioning || joined_at_.contains(n->id)) return OkStatus();
      NodeJoined(*n, e.time);
      *changed = true;
      return OkStatus();
    }
    case EventKind::kNodeLoaded: {
      if (static_cast<uint64_t>(e.b) != storage_.epoch()) return OkStatus();
      for (model::NodeId id : storage_.Complete(e.time)) {
        loading_.erase(id);
        Node* n = FindNode(id);
        if (n != nullptr && joined_at_.contains(id)) {
          NodeUsable(*n, e.time);
          *changed = true;
        }
      }
      ScheduleStorage();
      return OkStatus();
    }
    case EventKind::kJobEnd: {
      Job* j = FindJob(e.a);
      if (j == nullptr || j->state != JobState::kRunning || Sim(j->id).epoch != static_cast<uint64_t>(e.b)) {
        return OkStatus();  // stale: the run changed since
      }
      *changed = true;
      return CompleteJob(e.a, e.time);
    }
    case EventKind::kJobExit: {
      Job* j = FindJob(e.a);
      if (j == nullptr || j->state != JobState::kStopping || Sim(j->id).epoch != static_cast<uint64_t>(e.b)) {
        return OkStatus();
      }
      *changed = true;
      return ExitJob(e.a, e.time);
    }
    case EventKind::kJobStart: {
      Job* j = FindJob(e.a);
      if (j != nullptr && j->state == JobState::kStarting && j->expected_end - j->spec.runtime <= e.time) {
        StartRun(*j, e.time);
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
    case EventKind::kSpotNotice:
      if (FindNode(e.a) != nullptr) {
        SpotNotice(e.a, e.time, FromUnixSeconds(e.b), "interruption notice");
        *changed = true;
      }
      return OkStatus();
    case EventKind::kSpotKill:
      if (FindNode(e.a) != nullptr) {
        SpotKill(e.a, e.time);
        *changed = true;
      }
      return OkStatus();
    case EventKind::kSpotSupply:
      SpotSupplyChanged(e.time);
      queue_.Push(e.time + supply_period_, EventKind::kSpotSupply);
      *changed = true;
      return OkStatus();
  }
  return OkStatus();
}

void Simulator::Progress::ProgressAt(const Job& job, Timestamp t, double* progress, double* saved) const {
  *progress = job.progress;
  *saved = job.saved;
  const auto& jobs = sim_->state_.jobs;
  const size_t pos = static_cast<size_t>(&job - jobs.data());
  if (job.state != JobState::kRunning || pos >= jobs.size()) return;
  const RunSegments& segs = sim_->sim_jobs_[pos].run.segments;
  if (segs.empty()) return;
  // As RefreshJobs would have left them (the saved progress only grows).
  const JobRun& seg = segs.back();
  *progress = seg.ProgressAt(t);
  *saved = std::max(job.saved, seg.SavedAt(t));
}

void Simulator::RefreshJobs(Timestamp now) {
  for (size_t i = 0; i < state_.jobs.size(); ++i) {
    Job& j = state_.jobs[i];
    if (j.state != JobState::kRunning) continue;
    const JobRun& seg = sim_jobs_[i].run.segments.back();  // a running job has one
    j.progress = seg.ProgressAt(now);
    j.saved = std::max(j.saved, seg.SavedAt(now));
  }
}

Status Simulator::RunScheduler(Timestamp now) {
  // The scheduler reads no job's progress, and every transition computes it
  // from the job's segments; only an observer looks at it here.
  if (observer_) RefreshJobs(now);
  TIDE_RETURN_IF_ERROR(SyncIndex());
  const sched::SchedulerOutput out = scheduler_.Schedule(state_, now, &kept_capacity_);
  if (options_.check_index) {
    // The kept snapshot, caught up, must say what the nodes say; the pass left it so.
    if (model::IndexFor(state_) != nullptr) kept_capacity_.Sync(*spec_, index_);
    if (const std::string diff = kept_capacity_.Diff(index_); !diff.empty()) {
      return absl::InternalError(StrCat("the scheduler's kept capacity differs from the nodes: ", diff));
    }
  }
  for (const auto& p : out.placements) TIDE_RETURN_IF_ERROR(ApplyPlacement(p, now));
  if (observer_) observer_->AfterSchedule(state_, out, now);
  return OkStatus();
}

Status Simulator::TakeMigGpus(const Job& job, Node& n, model::NodeShare* share, bool* reconfigure) {
  const int units_per_gpu = spec_->pools[n.pool].mig.units_per_gpu;
  const int gpus = static_cast<int>(n.slice_free.size());
  if (share->units > 0) {
    // A slice: the fullest sliced GPU in use with room, else a free sliced
    // GPU, else a free whole-layout GPU (reconfigured) -- the what-if's rule.
    int best = -1;
    for (int g = 0; g < gpus; ++g) {
      const int f = n.slice_free[g];
      if (n.sliced[g] && f >= share->units && f < units_per_gpu && (best < 0 || f < n.slice_free[best])) best = g;
    }
    for (int pass = 0; best < 0 && pass < 2; ++pass) {
      for (int g = 0; g < gpus && best < 0; ++g) {
        if (n.slice_free[g] == units_per_gpu && (n.sliced[g] != 0) == (pass == 0)) best = g;
      }
    }
    if (best < 0) return absl::InternalError(StrCat("no GPU slice left on ", n.name, " for job ", job.spec.name));
    if (n.slice_free[best] == units_per_gpu) {
      --n.free_gpus;
      if (!n.sliced[best]) *reconfigure = true;
    }
    n.sliced[best] = 1;
    n.slice_free[best] = static_cast<uint8_t>(n.slice_free[best] - share->units);
    share->gpu = best;
    return OkStatus();
  }
  // Whole GPUs: whole-layout ones first, then sliced ones (reconfigured).
  int need = share->workers * job.spec.gpus_per_worker;
  share->gpu_mask = 0;
  for (int pass = 0; pass < 2 && need > 0; ++pass) {
    for (int g = 0; g < gpus && need > 0; ++g) {
      if (n.slice_free[g] != units_per_gpu || (n.sliced[g] != 0) != (pass == 1)) continue;
      if (n.sliced[g]) *reconfigure = true;
      n.sliced[g] = 0;
      n.slice_free[g] = 0;
      share->gpu_mask |= uint64_t{1} << g;
      --need;
    }
  }
  if (need > 0) return absl::InternalError(StrCat("scheduler over-allocated node ", n.name, " for job ", job.spec.name));
  n.free_gpus -= share->workers * job.spec.gpus_per_worker;
  return OkStatus();
}

void Simulator::ReturnGpus(const Job& job, Node& n, const model::NodeShare& share) {
  if (n.slice_free.empty()) {
    n.free_gpus += share.workers * job.spec.gpus_per_worker;
    return;
  }
  const int units_per_gpu = spec_->pools[n.pool].mig.units_per_gpu;
  if (share.units > 0) {
    n.slice_free[share.gpu] = static_cast<uint8_t>(n.slice_free[share.gpu] + share.units);
    if (n.slice_free[share.gpu] == units_per_gpu) ++n.free_gpus;
    return;
  }
  for (int g = 0; g < static_cast<int>(n.slice_free.size()); ++g) {
    if (share.gpu_mask >> g & 1) n.slice_free[g] = static_cast<uint8_t>(units_per_gpu);
  }
  n.free_gpus += share.workers * job.spec.gpus_per_worker;
}

Status Simulator::ApplyPlacement(const sched::Placement& p, Timestamp now) {
  Job* job = FindJob(p.job);
  if (job == nullptr || job->state != JobState::kPending) {
    return absl::InternalError(StrCat("scheduler placed job ", p.job, ", which is not pending"));
  }
  int workers = 0;
  bool all_ready = true, reconfigure = false;
  Timestamp last_ready = now;
  std::vector<std::string> where;
  std::vector<model::NodeShare> shares = p.shares;
  for (auto& sh : shares) {
    Node* n = FindNode(sh.node);
    const bool slice_here = sh.units > 0 && n != nullptr && !n->slice_free.empty();
    if (!slice_here) sh.units = 0;  // a slice job on a GPU of a pool that does not slice takes it whole
    const int gpus = slice_here ? 0 : sh.workers * job->spec.gpus_per_worker;
    if (n == nullptr || n->free_gpus < gpus || n->state == NodeState::kDraining) {
      return absl::InternalError(StrCat("scheduler over-allocated node ", sh.node, " for job ", job->spec.name));
    }
    if (!n->slice_free.empty()) {
      TIDE_RETURN_IF_ERROR(TakeMigGpus(*job, *n, &sh, &reconfigure));
    } else {
      n->free_gpus -= gpus;
    }
    n->idle_since = kInfiniteFuture;
    forecast_nodes_.erase(n->id);
    if (n->state != NodeState::kReady) {
      all_ready = false;
      last_ready = std::max(last_ready, n->ready_at);
    }
    workers += sh.workers;
    if (options_.record_decisions && options_.log_job_starts) {
      where.push_back(sh.units > 0 ? StrCat(n->name, ":gpu", sh.gpu, ":", job->spec.slice) : StrCat(n->name, ":", sh.workers));
    }
  }
  if (workers < job->spec.MinWorkers() || workers > job->spec.MaxWorkers()) {
    return absl::InternalError(
        StrCat("scheduler placed ", workers, " workers of job ", job->spec.name, ", outside ",
               job->spec.MinWorkers(), "..", job->spec.MaxWorkers()));
  }
  job->alloc.assign(shares.begin(), shares.end());
  job->workers = workers;
  job->started = now;
  if (p.backfilled) ++result_.jobs_backfilled;
  if (options_.record_decisions && options_.log_job_starts) {
    const bool restart = job->restarts > 0;
    Log(now, all_ready ? (restart ? "restart" : "start") : "allocate",
        StrCat(job->spec.name, " (", workers, "x",
               job->spec.slice_units > 0 ? job->spec.slice : StrCat(job->spec.gpus_per_worker, " GPUs"), ") on ",
               StrJoin(where, ","), ": waited ", FormatDuration(now - job->spec.submit),
               p.backfilled ? ", backfilled" : "",
               restart ? StrCat(", resumes at ", static_cast<int64_t>(job->saved), "s of work") : "",
               all_ready ? "" : ", waits for its nodes to boot",
               reconfigure ? ", after its GPUs' slice layout is reconfigured" : ""));
  }
  if (all_ready && !reconfigure) {
    StartRun(*job, now);
  } else {
    job->state = JobState::kStarting;
    starting_.push_back(job->id);
    Timestamp at = AlignUp(last_ready, t0_, policy_.start_tick);
    if (reconfigure) {
      Duration r{0};
      for (const auto& sh : job->alloc) {
        if (const Node* n = FindNode(sh.node)) r = std::max(r, spec_->pools[n->pool].mig.reconfigure);
      }
      at = std::max(at, now + r);
      if (all_ready) queue_.Push(at, EventKind::kJobStart, job->id);
    }
    job->expected_end = at + job->spec.runtime;
  }
  return OkStatus();
}

double Simulator::Rate(const Job& job, int workers) const {
  const int ref = job.spec.workers;
  if (workers == ref || ref <= 0) return 1.0;
  int useful = workers;
  if (job.spec.io_bound_workers > 0) useful = std::min(useful, job.spec.io_bound_workers);
  return std::pow(static_cast<double>(useful) / ref, options_.world.elastic.scaling_exponent);
}

model::JobPhases Simulator::PhasesFor(const Job& job, int workers) const {
  model::JobPhases p = job.spec.phases;
  // Past the workers its data pipeline can feed, each GPU waits on input.
  if (job.spec.io_bound_workers > 0 && workers > job.spec.io_bound_workers) {
    const double f = static_cast<double>(job.spec.io_bound_workers) / workers;
    p.train_util *= f;
    p.eval_util *= f;
  }
  return p;
}

void Simulator::NewSegment(Job& job, Timestamp now, double progress0, Duration startup) {
  SimJob& sj = Sim(job.id);
  ++sj.epoch;
  sj.run.segments.emplace_back(now, progress0, sj.work, Rate(job, job.Workers()), startup, job.spec.checkpoint,
                               PhasesFor(job, job.Workers()));
  sj.run.answers = {};
  metrics_.RunChanged(job.id);
  job.state = JobState::kRunning;
  job.progress = progress0;
  job.expected_end = sj.run.segments.back().EndTime();
  queue_.Push(job.expected_end, EventKind::kJobEnd, job.id, static_cast<int64_t>(sj.epoch));
}

void Simulator::StartRun(Job& job, Timestamp now) {
  SimJob& sj = Sim(job.id);
  job.started = now;
  if (!job.alloc.empty()) {
    if (const Node* n = FindNode(job.alloc.front().node)) ledger_.AddEgress(spec_->EgressCost(job.spec, n->pool));
  }
  sj.run.segments.clear();
  NewSegment(job, now, job.saved, StartupFor(job.spec));
  if (!sj.started_once) {
    sj.started_once = true;
    const int64_t wait = (now - job.spec.submit).count();
    waits_.push_back(wait);
    waits_by_class_[job.spec.priority_class].push_back(wait);
    ++result_.jobs_started;
  }
}

void Simulator::MaybeStartAfterBoot(Timestamp now) {
  // The jobs still waiting for their nodes, in the order of state_.jobs; the
  // list forgets those that started or went back to the queue since.
  std::vector<std::pair<size_t, model::JobId>> waiting;
  for (const model::JobId id : starting_) {
    const int64_t pos = job_index_.Find(id);
    if (pos >= 0 && state_.jobs[static_cast<size_t>(pos)].state == JobState::kStarting) {
      waiting.emplace_back(static_cast<size_t>(pos), id);
    }
  }
  std::sort(waiting.begin(), waiting.end());
  waiting.erase(std::unique(waiting.begin(), waiting.end()), waiting.end());
  starting_.clear();
  for (const auto& [pos, id] : waiting) starting_.push_back(id);
  for (const auto& [pos, id] : waiting) {
    Job& j = state_.jobs[pos];
    bool ready = true;
    for (const auto& sh : j.alloc) {
      const Node* n = FindNode(sh.node);
      ready = ready && n != nullptr && n->state == NodeState::kReady;
    }
    if (!ready) continue;
    TouchJob(j);
    const Timestamp at = AlignUp(now, t0_, policy_.start_tick);
    if (at == now) {
      StartRun(j, now);
    } else {
      j.expected_end = at + j.spec.runtime;
      queue_.Push(at, EventKind::kJobStart, j.id);
    }
  }
}

// Adds the utilization-weighted and allocated GPU time of the job's current
// segments up to `now` to the figures.
void Simulator::CloseSegments(const Job& job, Timestamp now) {
  const SimJob& sj = Sim(job.id);
  const double gpus = job.spec.slice_units > 0
                          ? static_cast<double>(job.Workers()) * job.spec.slice_units / 7.0
                          : static_cast<double>(job.Workers()) * job.spec.gpus_per_worker;
  for (size_t i = 0; i < sj.run.segments.size(); ++i) {
    const JobRun& seg = sj.run.segments[i];
    const Timestamp end = i + 1 < sj.run.segments.size() ? sj.run.segments[i + 1].start() : now;
    seg.ForEachPiece(seg.start(), end, [&](double util, int64_t seconds) {
      util_gpu_seconds_ += util * static_cast<double>(seconds) * gpus;
    });
  }
  busy_gpu_seconds_ += gpus * static_cast<double>((now - job.started).count());
  Attribute(job, job.started, now);
}

void Simulator::Attribute(const Job& job, Timestamp from, Timestamp to) {
  if (to <= from) return;
  const double hours = static_cast<double>((to - from).count()) / 3600.0;
  double cost = 0;
  for (const auto& sh : job.alloc) {
    const Node* n = FindNode(sh.node);
    if (n == nullptr) continue;
    const model::NodePool& pool = spec_->pools[n->pool];
    const double gpus = sh.units > 0 ? static_cast<double>(sh.units) / pool.mig.units_per_gpu
                                     : static_cast<double>(sh.workers) * job.spec.gpus_per_worker;
    cost += pool.price_per_hour * gpus / pool.type.gpus * hours;
  }
  cost_by_class_[job.spec.priority_class] += cost;
  cost_by_team_[job.spec.team.empty() ? "(none)" : job.spec.team] += cost;
}

void Simulator::FreeAllocation(Job& job, Timestamp now) {
  for (const auto& sh : job.alloc) {
    Node* n = FindNode(sh.node);
    if (n == nullptr) continue;
    ReturnGpus(job, *n, sh);
    if (n->idle() && n->state == NodeState::kReady) n->idle_since = now;
  }
  const auto nodes = job.alloc;
  job.alloc.clear();
  for (const auto& sh : nodes) MaybeFinishDrain(sh.node, now);
}

Status Simulator::CompleteJob(model::JobId id, Timestamp now) {
  Job* job = FindJob(id);
  if (job == nullptr || job->state != JobState::kRunning) {
    return absl::InternalError(StrCat("job ", id, " ended but was not running"));
  }
  CloseSegments(*job, now);
  const int64_t jct = (now - job->spec.submit).count();
  jcts_.push_back(jct);
  jcts_by_class_[job->spec.priority_class].push_back(jct);
  ++result_.jobs_completed;
  last_completion_ = now;
  FreeAllocation(*job, now);
  RemoveJob(id);
  return OkStatus();
}

// Tells a running job to checkpoint and exit; it keeps its GPUs until then.
void Simulator::StopJob(Job& job, Timestamp now, std::string_view cause, bool cancel) {
  if (job.state != JobState::kRunning) return;
  SimJob& sj = Sim(job.id);
  const JobRun& seg = sj.run.segments.back();
  CloseSegments(job, now);
  sj.stop_progress = seg.ProgressAt(now);
  sj.stop_fallback = std::max(job.saved, seg.SavedAt(now));
  sj.stop_cancel = cancel;
  sj.stop_cause = std::string(cause);
  ++sj.epoch;
  job.state = JobState::kStopping;
  job.progress = sj.stop_progress;
  job.saved = sj.stop_fallback;
  job.started = now;  // the checkpoint's GPU time is counted from here
  job.expected_end = now + job.spec.checkpoint.cost;
  metrics_.RunChanged(job.id);
  queue_.Push(job.expected_end, EventKind::kJobExit, job.id, static_cast<int64_t>(sj.epoch));
}

// A stopping job finished its checkpoint: it exits, nothing lost.
Status Simulator::ExitJob(model::JobId id, Timestamp now) {
  Job* job = FindJob(id);
  SimJob& sj = Sim(id);
  Attribute(*job, job->started, now);  // the checkpoint it wrote on the way out
  job->saved = sj.stop_progress;
  if (observer_) observer_->OnInterrupt(*job, sj.stop_cause, 0, now);
  FreeAllocation(*job, now);
  if (sj.stop_cancel) {
    ++result_.jobs_cancelled;
    Log(now, "cancelled", StrCat(job->spec.name, " (", sj.stop_cause, ") after ", static_cast<int64_t>(job->saved),
                                 "s of work"));
    RemoveJob(id);
    return OkStatus();
  }
  Requeue(*job, now);
  return OkStatus();
}

// The job's nodes are gone before it could checkpoint: it loses the work
// since its last completed checkpoint.
void Simulator::KillJob(Job& job, Timestamp now, std::string_view cause) {
  SimJob& sj = Sim(job.id);
  double progress, saved;
  if (job.state == JobState::kStopping) {
    progress = sj.stop_progress;
    saved = sj.stop_fallback;
    Attribute(job, job.started, now);
  } else {
    const JobRun& seg = sj.run.segments.back();
    CloseSegments(job, now);
    progress = seg.ProgressAt(now);
    saved = std::max(job.saved, seg.SavedAt(now));
  }
  const double lost = std::max(0.0, progress - saved);
  result_.lost_work_gpu_hours += lost * job.spec.GpuEquivalents() / 3600.0;
  result_.max_lost_work_s = std::max(result_.max_lost_work_s, lost);
  if (observer_) observer_->OnInterrupt(job, cause, lost, now);
  ++sj.epoch;
  job.saved = saved;
  job.progress = saved;
  metrics_.RunChanged(job.id);
  FreeAllocation(job, now);
  Requeue(job, now);
}

void Simulator::Requeue(Job& job, Timestamp now) {
  job.state = JobState::kPending;
  job.progress = job.saved;
  job.workers = 0;
  // Resizes belong to a run; the next run starts fresh.
  job.last_resize = kInfinitePast;
  job.workers_before_resize = 0;
  ++job.restarts;
  Sim(job.id).run.segments.clear();
  metrics_.RunChanged(job.id);
}

void Simulator::CreateNode(int pool, Timestamp now, bool forecast) {
  const model::NodePool& p = spec_->pools[pool];
  Node n;
  n.id = next_node_id_++;
  n.name = StrCat(p.name, "-", ++pool_seq_[pool]);
  n.pool = pool;
  n.state = NodeState::kProvisioning;
  n.created = now;
  n.ready_at = now + provider_.BootDelay(p);
  n.gpus = n.free_gpus = p.type.gpus;
  if (p.mig.enabled()) {
    n.slice_free.assign(p.type.gpus, static_cast<uint8_t>(p.mig.units_per_gpu));
    n.sliced.assign(p.type.gpus, 1);  // a MIG pool's node comes up laid out for slices
  }
  queue_.Push(n.ready_at, EventKind::kNodeReady, n.id);
  bill_[n.id] = ledger_.Open(pool, now);
  if (forecast) {
    forecast_nodes_.insert(n.id);
    ++result_.forecast_nodes;
  }
  if (storage_.enabled() && options_.world.storage.prefetch && !initializing_) {
    loading_.insert(n.id);
    storage_.Start(n.id, now);
    ScheduleStorage();
  }
  node_index_.Set(n.id, state_.nodes.size());
  index_.TouchNode(state_.nodes.size());
  state_.nodes.push_back(std::move(n));
  ++result_.nodes_bought;
  ++live_nodes_;
  result_.peak_nodes = std::max(result_.peak_nodes, live_nodes_);
}

// The node has booted and joined. It is usable once its storage load is done.
void Simulator::NodeJoined(Node& n, Timestamp now) {
  joined_at_[n.id] = now;
  const model::NodePool& pool = spec_->pools[n.pool];
  if (pool.tier == model::Tier::kSpot && options_.world.spot.mean_time_to_interrupt.count() > 0) {
    const double mean = static_cast<double>(options_.world.spot.mean_time_to_interrupt.count());
    const Timestamp kill = now + Seconds(std::max<int64_t>(1, std::llround(spot_rng_.Exponential(mean))));
    queue_.Push(std::max(now, kill - options_.world.spot.notice), EventKind::kSpotNotice, n.id, ToUnixSeconds(kill));
    queue_.Push(kill, EventKind::kSpotKill, n.id);
  }
  if (!storage_.enabled() || initializing_) {
    NodeUsable(n, now);
    return;
  }
  if (!options_.world.storage.prefetch) {
    loading_.insert(n.id);
    storage_.Start(n.id, now);
    ScheduleStorage();
  } else if (!loading_.contains(n.id)) {
    NodeUsable(n, now);  // prefetched during boot
    return;
  }
  n.ready_at = std::max(now, storage_.NextCompletion());  // a rough expectation for planning
}

void Simulator::NodeUsable(Node& n, Timestamp now) {
  if (n.state != NodeState::kProvisioning) return;
  n.state = NodeState::kReady;
  if (joined_at_.contains(n.id) && now > joined_at_[n.id]) {
    result_.storage_wait_node_hours += static_cast<double>((now - joined_at_[n.id]).count()) / 3600.0;
  }
  n.ready_at = now;
  if (n.idle()) n.idle_since = now;
  MaybeStartAfterBoot(now);
}

void Simulator::ScheduleStorage() {
  const Timestamp next = storage_.NextCompletion();
  if (next != kInfiniteFuture) queue_.Push(next, EventKind::kNodeLoaded, 0, static_cast<int64_t>(storage_.epoch()));
}

void Simulator::TerminateNode(model::NodeId id, Timestamp now, bool interrupted) {
  ledger_.Close(bill_.at(id), now);
  bill_.erase(id);
  if (loading_.erase(id) > 0) {
    storage_.Cancel(id, now);
    ScheduleStorage();
  }
  if (joined_at_.erase(id) == 0 && !interrupted) ++result_.released_booting;
  if (forecast_nodes_.erase(id) > 0) ++result_.forecast_nodes_unused;
  RemoveNode(id);
  if (interrupted) {
    ++result_.spot_nodes_interrupted;
  } else {
    ++result_.nodes_released;
  }
  --live_nodes_;
}

Status Simulator::ReleaseNode(model::NodeId id, Timestamp now) {
  Node* n = FindNode(id);
  if (n == nullptr) return absl::InternalError(StrCat("plan releases unknown node ", id));
  if (!n->idle()) return absl::InternalError(StrCat("plan releases node ", n->name, ", which runs jobs"));
  TerminateNode(id, now, false);
  return OkStatus();
}

void Simulator::DrainNode(Node& n, Timestamp now) {
  n.state = NodeState::kDraining;
  MaybeFinishDrain(n.id, now);
}

void Simulator::MaybeFinishDrain(model::NodeId id, Timestamp now) {
  Node* n = FindNode(id);
  if (n == nullptr || n->state != NodeState::kDraining || !n->idle()) return;
  // A spot node drained on the provider's notice is an interruption, however early it empties.
  TerminateNode(id, now, n->interrupt_at != kInfiniteFuture);
}

void Simulator::RecordDisruption(Timestamp now) {
  auto& recent = state_.recent_disruptions;
  recent.push_back(now);
  ++result_.disruptions;
  // Keep what the disruption budget looks back over: every pass reads them all.
  const Timestamp horizon = now - std::max(policy_.autoscaler.budget.window, Seconds(1));
  recent.erase(recent.begin(), std::find_if(recent.begin(), recent.end(), [&](Timestamp t) { return t >= horizon; }));
}

// The provider will interrupt the node at `kill`. What to do about it is the
// policy's call (autoscale/spot/notice.h); the simulator only records it.
void Simulator::SpotNotice(model::NodeId id, Timestamp now, Timestamp kill, std::string_view why) {
  Node* n = FindNode(id);
  if (n == nullptr || n->interrupt_at != kInfiniteFuture) return;
  n->interrupt_at = kill;
  Log(now, "spot-notice", StrCat(n->name, ": ", why, "; interrupted at ", FormatTimestamp(kill)));
}

void Simulator::SpotKill(model::NodeId id, Timestamp now) {
  const Node* n = FindNode(id);
  if (n == nullptr) return;
  // Freeing the victims may remove other nodes (drained ones left empty),
  // which moves this one in memory: keep what is needed of it.
  const std::string name = n->name;
  std::vector<model::JobId> victims;
  for (const auto& j : state_.jobs) {
    for (const auto& sh : j.alloc) {
      if (sh.node == id) victims.push_back(j.id);
    }
  }
  for (auto jid : victims) {
    Job* j = FindJob(jid);
    if (j == nullptr) continue;
    if (j->state == JobState::kRunning) ++result_.spot_interruptions;  // killed without warning heeded
    if (j->state == JobState::kStarting) {
      FreeAllocation(*j, now);
      j->state = JobState::kPending;
      continue;
    }
    KillJob(*j, now, "spot");
  }
  Log(now, "spot-interruption", StrCat(name, ": interrupted by the provider"));
  if (FindNode(id) != nullptr) TerminateNode(id, now, true);
}

int Simulator::SpotSupply(Timestamp now) const {
  const auto& supply = options_.world.spot.supply;
  if (supply.empty()) return INT32_MAX;
  const Duration into = Seconds((now - t0_).count() % supply_period_.count());
  int available = supply.front().available;
  for (const auto& pt : supply) {
    if (pt.offset <= into) available = pt.available;
  }
  return static_cast<int>(std::floor(available * options_.world.spot.supply_scale));
}

// The supply moved: spot nodes beyond it get notice; a pool that could not
// create nodes may again.
void Simulator::SpotSupplyChanged(Timestamp now) {
  const int supply = SpotSupply(now);
  for (size_t p = 0; p < spec_->pools.size(); ++p) {
    if (spec_->pools[p].tier != model::Tier::kSpot) continue;
    std::vector<const Node*> nodes;
    for (const auto& n : state_.nodes) {
      if (n.pool == static_cast<int>(p) && n.interrupt_at == kInfiniteFuture) nodes.push_back(&n);
    }
    if (static_cast<int>(nodes.size()) < supply) state_.pools[p].unavailable_since = kInfiniteFuture;
    if (static_cast<int>(nodes.size()) <= supply) continue;
    // The provider takes back the newest nodes first.
    std::sort(nodes.begin(), nodes.end(), [](const Node* a, const Node* b) { return a->id > b->id; });
    std::vector<model::NodeId> doomed;
    for (size_t i = 0; i < nodes.size() - static_cast<size_t>(std::max(0, supply)); ++i) doomed.push_back(nodes[i]->id);
    for (auto id : doomed) {
      queue_.Push(now + options_.world.spot.notice, EventKind::kSpotKill, id);
      SpotNotice(id, now, now + options_.world.spot.notice, "spot supply fell");
    }
  }
}

Status Simulator::ApplyResize(const autoscale::Action& a, Timestamp now) {
  Job* job = a.jobs.empty() ? nullptr : FindJob(a.jobs[0]);
  if (job == nullptr || job->state != JobState::kRunning) {
    return absl::InternalError("plan resizes a job that is not running");
  }
  const SimJob& sj = Sim(job->id);
  const double progress = sj.run.segments.back().ProgressAt(now);
  // A job resized while still loading its data goes on loading after the pause.
  const Duration loading_left = std::max(Duration{0}, sj.run.segments.back().StartupEnd() - now);
  CloseSegments(*job, now);
  for (const auto& sh : a.resize.remove) {
    Node* n = FindNode(sh.node);
    auto it = std::find_if(job->alloc.begin(), job->alloc.end(), [&](const auto& x) { return x.node == sh.node; });
    if (n == nullptr || it == job->alloc.end() || it->workers < sh.workers) {
      return absl::InternalError(StrCat("resize removes workers job ", job->spec.name, " does not have"));
    }
    if (!n->slice_free.empty()) {
      // Give back the lowest GPUs of the share.
      model::NodeShare part{sh.node, sh.workers};
      int k = sh.workers * job->spec.gpus_per_worker;
      for (int g = 0; g < 64 && k > 0; ++g) {
        if (it->gpu_mask >> g & 1) {
          part.gpu_mask |= uint64_t{1} << g;
          it->gpu_mask &= ~(uint64_t{1} << g);
          --k;
        }
      }
      ReturnGpus(*job, *n, part);
    } else {
      n->free_gpus += sh.workers * job->spec.gpus_per_worker;
    }
    it->workers -= sh.workers;
    if (n->idle() && n->state == NodeState::kReady) n->idle_since = now;
  }
  job->alloc.erase(std::remove_if(job->alloc.begin(), job->alloc.end(), [](const auto& x) { return x.workers == 0; }),
                   job->alloc.end());
  for (const auto& sh : a.resize.add) {
    Node* n = FindNode(sh.node);
    const int gpus = sh.workers * job->spec.gpus_per_worker;
    if (n == nullptr || n->state != NodeState::kReady || n->free_gpus < gpus) {
      return absl::InternalError(StrCat("resize over-allocates node ", sh.node, " for job ", job->spec.name));
    }
    model::NodeShare added = sh;
    if (!n->slice_free.empty()) {
      bool reconfigure = false;  // a resize pauses the job anyway
      TIDE_RETURN_IF_ERROR(TakeMigGpus(*job, *n, &added, &reconfigure));
    } else {
      n->free_gpus -= gpus;
    }
    n->idle_since = kInfiniteFuture;
    forecast_nodes_.erase(n->id);
    auto it = std::find_if(job->alloc.begin(), job->alloc.end(), [&](const auto& x) { return x.node == sh.node; });
    if (it == job->alloc.end()) {
      job->alloc.push_back(added);
    } else {
      it->workers += added.workers;
      it->gpu_mask |= added.gpu_mask;
    }
  }
  int workers = 0;
  for (const auto& sh : job->alloc) workers += sh.workers;
  if (workers != a.resize.workers) return absl::InternalError("resize leaves a different worker count than planned");
  job->workers_before_resize = job->workers;
  job->workers = workers;
  job->started = now;
  job->last_resize = now;
  job->saved = progress;  // an elastic framework re-rendezvouses from its live state
  Sim(job->id).run.segments.clear();
  NewSegment(*job, now, progress, options_.world.elastic.resize_pause + loading_left);
  for (const auto& sh : a.resize.remove) MaybeFinishDrain(sh.node, now);
  ++result_.resizes;
  return OkStatus();
}

Status Simulator::RunAutoscaler(Timestamp now) {
  if (observer_) RefreshJobs(now);  // the decision core asks progress_; observers read the fields
  TIDE_RETURN_IF_ERROR(SyncIndex());
  TIDE_ASSIGN_OR_RETURN(autoscale::ScalingPlan plan, autoscaler_->RunOnce(state_, now));
  ++result_.autoscaler_runs;
  if (observer_) observer_->OnPlan(state_, plan, now);
  as_dirty_ = false;
  wakeup_ = plan.next_wakeup;
  bool changed = false, bought = false, freed = false;
  for (const auto& a : plan.actions) {
    switch (a.kind) {
      case autoscale::ActionKind::kScaleUp: {
        const auto& pool = spec_->pools[a.pool];
        int created = 0;
        // A spot supply trace caps the pool's live nodes (those without
        // notice): counted once, then with each node created here.
        const bool capped = pool.tier == model::Tier::kSpot && !options_.world.spot.supply.empty();
        const int supply = capped ? SpotSupply(now) : 0;
        int live = 0;
        if (capped) {
          for (const auto& n : state_.nodes) live += n.pool == a.pool && n.interrupt_at == kInfiniteFuture;
        }
        for (int i = 0; i < a.count; ++i) {
          if (capped && live >= supply) {
            ++result_.nodes_create_failed;
            auto& st = state_.pools[a.pool];
            if (st.unavailable_since == kInfiniteFuture) st.unavailable_since = now;
            st.last_failure = now;
            continue;
          }
          CreateNode(a.pool, now, a.forecast);
          ++created;
          ++live;
        }
        result_.spare_nodes += std::min(a.spares, created);
        Log(now, "scale-up",
            StrCat(pool.name, " +", a.count, ": ", a.reason,
                   created < a.count ? StrCat(" [the provider created ", created, ": no spot capacity]") : ""));
        bought = created > 0;
        changed = true;
        break;
      }
      case autoscale::ActionKind::kRelease: {
        std::vector<std::string> names;
        for (auto id : a.nodes) {
          if (const Node* n = FindNode(id)) names.push_back(n->name);
        }
        Log(now, "release",
            StrCat(spec_->pools[a.pool].name, " -", a.nodes.size(), " [", StrJoin(names, " "), "]: ", a.reason));
        for (auto id : a.nodes) TIDE_RETURN_IF_ERROR(ReleaseNode(id, now));
        changed = true;
        break;
      }
      case autoscale::ActionKind::kDrain: {
        std::vector<std::string> names;
        for (auto id : a.nodes) {
          if (const Node* n = FindNode(id)) names.push_back(n->name);
        }
        Log(now, "drain", StrCat("[", StrJoin(names, " "), "]: ", a.reason));
        for (auto id : a.nodes) {
          Node* n = FindNode(id);
          if (n == nullptr) return absl::InternalError(StrCat("plan drains unknown node ", id));
          DrainNode(*n, now);
        }
        changed = true;
        break;
      }
      case autoscale::ActionKind::kPreempt:
      case autoscale::ActionKind::kReclaim:
      case autoscale::ActionKind::kEvacuate:
      case autoscale::ActionKind::kConsolidate: {
        const bool preempt = a.kind == autoscale::ActionKind::kPreempt;
        const bool evacuate = a.kind == autoscale::ActionKind::kEvacuate;
        const bool consolidate = a.kind == autoscale::ActionKind::kConsolidate;
        Log(now, autoscale::ActionKindName(a.kind), a.reason);
        absl::flat_hash_set<model::NodeId> disrupted;  // each node counts once per action
        for (auto id : a.jobs) {
          Job* j = FindJob(id);
          if (j == nullptr || j->state != JobState::kRunning) {
            return absl::InternalError(StrCat("plan stops job ", id, ", which is not running"));
          }
          if (j->spec.is_protected && !evacuate) {
            return absl::InternalError(StrCat("plan stops protected job ", j->spec.name));
          }
          SimJob& sj = Sim(id);
          const bool cancel = a.kind == autoscale::ActionKind::kReclaim && (a.cancel || sj.reclaims >= 1);
          if (a.kind == autoscale::ActionKind::kReclaim) ++sj.reclaims;
          // tide chose these; a provider interruption is not tide's disruption.
          if (!evacuate) {
            for (const auto& sh : j->alloc) {
              if (disrupted.insert(sh.node).second) RecordDisruption(now);
            }
          }
          StopJob(*j, now, preempt ? "preempted" : evacuate ? "spot" : consolidate ? "consolidated" : "reclaimed",
                  cancel);
          if (preempt) {
            ++result_.preemptions;
          } else if (consolidate) {
            ++result_.consolidations;
          } else if (evacuate) {
            ++result_.spot_interruptions;
          } else {
            ++result_.reclaims;
          }
        }
        changed = true;
        break;
      }
      case autoscale::ActionKind::kResize:
        Log(now, "resize", a.reason);
        TIDE_RETURN_IF_ERROR(ApplyResize(a, now));
        changed = true;
        freed |= !a.resize.remove.empty();
        break;
      case autoscale::ActionKind::kUnschedulable:
      case autoscale::ActionKind::kAtMax:
      case autoscale::ActionKind::kNote: {
        if (a.bottleneck && !a.jobs.empty()) {
          if (Job* j = FindJob(a.jobs[0])) j->bottleneck = true;
          changed = true;
        }
        for (auto id : a.jobs) {
          if (a.kind == autoscale::ActionKind::kUnschedulable) unschedulable_.insert(id);
          // Said once per job and kind: a waiting job is reported on every pass.
          if (!noted_.insert({id, a.kind}).second) continue;
          if (a.kind == autoscale::ActionKind::kAtMax) {
            // One action names every job waiting for room in a set of pools.
            const Job* j = FindJob(id);
            Log(now, "at-max", j == nullptr ? a.reason : autoscale::AtMaxLine(j->spec, a.cause));
            continue;
          }
          Log(now, autoscale::ActionKindName(a.kind), a.reason);
        }
        if (a.jobs.empty()) Log(now, autoscale::ActionKindName(a.kind), a.reason);
        break;
      }
    }
  }
  // Applying the plan changed what the next pass sees (room under a max, say).
  if (changed) as_dirty_ = true;
  // GPUs a shrink gave back are for the jobs waiting now, as in a workload
  // manager that schedules when a job's allocation changes.
  if (freed || (bought && policy_.scheduler.place_on_provisioning)) TIDE_RETURN_IF_ERROR(RunScheduler(now));
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

void Simulator::RecordTimeline(Timestamp now) {
  if (!timeline_) return;
  const size_t classes = spec_->priority_classes.size();
  using namespace model;  // the ReportLevel positions
  levels_.assign(kNumReportLevels + classes, 0.0);
  double demand = 0, running = 0, util = 0, pending = 0;
  for (const Job& j : state_.jobs) {
    if (j.state == JobState::kPending) {
      demand += j.spec.GpuEquivalents();
      ++pending;
      if (j.spec.priority_class >= 0 && static_cast<size_t>(j.spec.priority_class) < classes) {
        levels_[kNumReportLevels + static_cast<size_t>(j.spec.priority_class)] += 1;
      }
      continue;
    }
    const double held = j.spec.slice_units > 0 ? static_cast<double>(j.Workers()) * j.spec.slice_units / 7.0
                                               : static_cast<double>(j.Workers()) * j.spec.gpus_per_worker;
    demand += held;
    running += held;
    if (const auto u = metrics_.UtilAt(j.id, now)) util += *u * held;
  }
  for (const Node& n : state_.nodes) {  // every node is billed from request to release
    const model::NodePool& pool = spec_->pools[n.pool];
    const auto tier = static_cast<size_t>(pool.tier);
    levels_[kCapacityGpus + tier] += n.gpus;
    levels_[kCostRate + tier] += pool.price_per_hour;
  }
  levels_[kDemandGpus] = demand;
  levels_[kRunningGpus] = running;
  levels_[kUtilGpus] = util;
  levels_[kPendingJobs] = pending;
  totals_ = {ledger_.egress(), static_cast<double>(result_.spot_interruptions), result_.lost_work_gpu_hours};
  timeline_->Set(now, totals_);
  timeline_at_ = now;
}

// Brings the timeline up to `now`: what was recorded last held until then.
void Simulator::HoldTimeline(Timestamp now) {
  if (!timeline_ || now <= timeline_at_) return;
  timeline_->Hold(timeline_at_, now, levels_);
  timeline_at_ = now;
}

void Simulator::UpdateProgress(Timestamp now) {
  if (options_.progress == nullptr) return;
  options_.progress->now.store(ToUnixSeconds(now), std::memory_order_relaxed);
  options_.progress->jobs_done.store(result_.jobs_completed + result_.jobs_cancelled, std::memory_order_relaxed);
  options_.progress->events.store(result_.events, std::memory_order_relaxed);
}

Result<SimOutput> Simulator::Run() {
  TIDE_RETURN_IF_ERROR(Init());
  if (options_.record_timeline) {
    std::vector<std::string> classes;
    for (const auto& c : spec_->priority_classes) classes.push_back(c.name);
    timeline_.emplace(model::ReportTimeline(t0_, options_.timeline_step, classes, options_.timeline_max_buckets));
    timeline_at_ = t0_;
    RecordTimeline(t0_);
  }
  const bool event_driven = policy_.autoscaler.scan_interval.count() == 0;
  while (!queue_.empty()) {
    const Timestamp now = queue_.top().time;
    HoldTimeline(now);
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
    if (observer_) observer_->AfterStep(state_, now);
    RecordTimeline(now);
    UpdateProgress(now);
    // The workload is over: nothing left to submit, queue or run. What a
    // live loop would do next (release idle nodes, keep a schedule, look
    // ahead) no longer changes the figures, which end at the last job.
    if (!next_job_ && state_.jobs.empty()) break;
    ScheduleTick(now);
  }
  SimOutput out;
  if (timeline_) {
    // The percentiles before Finish reorders the waits.
    out.wait_quantiles.emplace_back("all", model::Percentiles0To100(waits_));
    for (size_t c = 0; c < spec_->priority_classes.size(); ++c) {
      if (!waits_by_class_[c].empty()) {
        out.wait_quantiles.emplace_back(spec_->priority_classes[c].name, model::Percentiles0To100(waits_by_class_[c]));
      }
    }
  }
  out.result = Finish();
  if (timeline_) {
    HoldTimeline(out.result.horizon);
    out.timeline = timeline_->Finish(out.result.horizon);
  }
  UpdateProgress(out.result.horizon);
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
  r.gpu_util_mean = r.cost.gpu_hours_paid > 0 ? util_gpu_seconds_ / 3600.0 / r.cost.gpu_hours_paid : 0;
  r.wait_s = ComputePercentiles(&waits_);
  r.jct_s = ComputePercentiles(&jcts_);
  for (size_t c = 0; c < spec_->priority_classes.size(); ++c) {
    if (waits_by_class_[c].empty() && jcts_by_class_[c].empty()) continue;
    r.wait_by_priority.emplace_back(spec_->priority_classes[c].name, ComputePercentiles(&waits_by_class_[c]));
    r.jct_by_priority.emplace_back(spec_->priority_classes[c].name, ComputePercentiles(&jcts_by_class_[c]));
  }
  r.jobs_unstarted = r.jobs_total - r.jobs_started;
  double attributed = 0;
  for (size_t c = 0; c < spec_->priority_classes.size(); ++c) {
    if (cost_by_class_[c] > 0) r.cost_by_priority.emplace_back(spec_->priority_classes[c].name, cost_by_class_[c]);
    attributed += cost_by_class_[c];
  }
  for (const auto& [team, cost] : cost_by_team_) r.cost_by_team.emplace_back(team, cost);
  r.cost_idle = std::max(0.0, r.cost.total - r.cost.egress - attributed);
  r.forecast_nodes_unused += static_cast<int64_t>(forecast_nodes_.size());  // never ran anything
  r.jobs_unschedulable = static_cast<int64_t>(unschedulable_.size());
  return r;
}

}  // namespace tide::sim
