#include "sim/sim_cluster.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "sim/sim_cloud.h"

namespace tide::sim {

using model::Job;
using model::JobState;
using model::Node;
using model::NodeState;

SimCluster::SimCluster(SimState* sim, Recorder* recorder, SimCloud* cloud, Duration start_tick, bool log_job_starts)
    : sim_(sim),
      recorder_(recorder),
      cloud_(cloud),
      start_tick_(start_tick),
      log_job_starts_(log_job_starts),
      metrics_(&runs_) {}

void SimCluster::RemoveJob(model::JobId id) {
  const size_t i = sim_->job_pos.At(id);
  auto& jobs = sim_->state.jobs;
  sim_->index.RemoveJob(i);
  sim_->job_pos.Erase(id);
  if (i + 1 != jobs.size()) {
    jobs[i] = std::move(jobs.back());
    sim_jobs_[i] = std::move(sim_jobs_.back());
    sim_->job_pos.Set(jobs[i].id, i);
  }
  jobs.pop_back();
  sim_jobs_.pop_back();
  metrics_.RunChanged(id);
}

const RunRecord* SimCluster::Runs::Find(model::JobId job) const {
  const int64_t pos = c_->sim_->job_pos.Find(job);
  if (pos < 0) return nullptr;
  const auto i = static_cast<size_t>(pos);
  return c_->sim_->state.jobs[i].state == JobState::kRunning ? &c_->sim_jobs_[i].run : nullptr;
}

void SimCluster::Runs::ForEachRun(absl::FunctionRef<void(model::JobId)> f) const {
  const auto& jobs = c_->sim_->state.jobs;
  for (size_t i = 0; i < c_->sim_jobs_.size(); ++i) {
    if (jobs[i].state == JobState::kRunning) f(jobs[i].id);
  }
}

void SimCluster::Progress::ProgressAt(const Job& job, Timestamp t, double* progress, double* saved) const {
  *progress = job.progress;
  *saved = job.saved;
  const auto& jobs = c_->sim_->state.jobs;
  const size_t pos = static_cast<size_t>(&job - jobs.data());
  if (job.state != JobState::kRunning || pos >= jobs.size()) return;
  const RunSegments& segs = c_->sim_jobs_[pos].run.segments;
  if (segs.empty()) return;
  // As RefreshJobs would have left them (the saved progress only grows).
  const JobRun& seg = segs.back();
  *progress = seg.ProgressAt(t);
  *saved = std::max(job.saved, seg.SavedAt(t));
}

void SimCluster::RefreshJobs(Timestamp now) {
  for (size_t i = 0; i < sim_->state.jobs.size(); ++i) {
    Job& j = sim_->state.jobs[i];
    if (j.state != JobState::kRunning) continue;
    const JobRun& seg = sim_jobs_[i].run.segments.back();  // a running job has one
    j.progress = seg.ProgressAt(now);
    j.saved = std::max(j.saved, seg.SavedAt(now));
  }
}

Status SimCluster::Submit(model::JobSpec* spec, Timestamp now, bool keep_arrivals, int forecast_days) {
  const model::ClusterSpec& cluster = *sim_->spec;
  Job job;
  job.id = next_job_id_++;
  job.spec = std::move(*spec);
  if (job.spec.priority_class < 0 || job.spec.priority_class >= static_cast<int>(cluster.priority_classes.size())) {
    return absl::InvalidArgumentError(StrCat("job ", job.spec.name, " has an unknown priority class"));
  }
  job.priority = cluster.priority_classes[static_cast<size_t>(job.spec.priority_class)].value;
  SimJob& sj = sim_jobs_.emplace_back();
  sj.work = WorkFor(job.spec.runtime, job.spec.phases, job.spec.checkpoint);
  ++sim_->result.jobs_total;
  if (keep_arrivals) {
    auto& arr = sim_->state.arrivals;
    arr.push_back({job.spec.submit, job.spec.gpus(), arr.empty() ? 0 : arr.back().before + arr.back().gpus});
    // Keep what the forecast looks back over, plus a day. `keep` only moves
    // on, so the leading run of arrivals older than it only grows: counted on
    // from where it was, not from the front each time.
    const Timestamp keep = now - Hours(24) * (forecast_days + 1);
    size_t& old = arrivals_expired_;
    while (old < arr.size() && arr[old].at < keep) ++old;
    if (old > 1024 && old * 2 > arr.size()) {  // amortised: each entry moves once on average
      arr.erase(arr.begin(), arr.begin() + static_cast<long>(old));
      old = 0;
    }
  }
  sim_->job_pos.Set(job.id, sim_->state.jobs.size());
  sim_->index.TouchJob(sim_->state.jobs.size());
  sim_->state.jobs.push_back(std::move(job));
  return OkStatus();
}

Status SimCluster::TakeMigGpus(const Job& job, Node& n, model::NodeShare* share, bool* reconfigure) {
  const int units_per_gpu = sim_->spec->pools[static_cast<size_t>(n.pool)].mig.units_per_gpu;
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
    share->gpu = static_cast<int16_t>(best);
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

void SimCluster::ReturnGpus(const Job& job, Node& n, const model::NodeShare& share) {
  if (n.slice_free.empty()) {
    n.free_gpus += share.workers * job.spec.gpus_per_worker;
    return;
  }
  const int units_per_gpu = sim_->spec->pools[static_cast<size_t>(n.pool)].mig.units_per_gpu;
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

Status SimCluster::Place(const sched::Placement& p, Timestamp now) {
  Job* job = sim_->FindJob(p.job);
  if (job == nullptr || job->state != JobState::kPending) {
    return absl::InternalError(StrCat("scheduler placed job ", p.job, ", which is not pending"));
  }
  int workers = 0;
  bool all_ready = true, reconfigure = false;
  Timestamp last_ready = now;
  std::vector<std::string> where;
  const bool logging = recorder_->logging() && log_job_starts_;
  std::vector<model::NodeShare> shares = p.shares;
  for (auto& sh : shares) {
    Node* n = sim_->FindNode(sh.node);
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
    cloud_->NodeUsed(n->id);
    if (n->state != NodeState::kReady) {
      all_ready = false;
      last_ready = std::max(last_ready, n->ready_at);
    }
    workers += sh.workers;
    if (logging) {
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
  if (p.backfilled) ++sim_->result.jobs_backfilled;
  if (logging) {
    const bool restart = job->restarts > 0;
    recorder_->Log(now, all_ready ? (restart ? "restart" : "start") : "allocate",
                   StrCat(job->spec.name, " (", workers, "x",
                          job->spec.slice_units > 0 ? job->spec.slice : StrCat(job->spec.gpus_per_worker, " GPUs"),
                          ") on ", StrJoin(where, ","), ": waited ", FormatDuration(now - job->spec.submit),
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
    Timestamp at = AlignUp(last_ready, sim_->t0, start_tick_);
    if (reconfigure) {
      Duration r{0};
      for (const auto& sh : job->alloc) {
        if (const Node* n = sim_->FindNode(sh.node)) r = std::max(r, sim_->spec->pools[static_cast<size_t>(n->pool)].mig.reconfigure);
      }
      at = std::max(at, now + r);
      if (all_ready) sim_->queue.Push(at, EventKind::kJobStart, job->id);
    }
    job->expected_end = at + job->spec.runtime;
  }
  return OkStatus();
}

double SimCluster::Rate(const Job& job, int workers) const {
  const int ref = job.spec.workers;
  if (workers == ref || ref <= 0) return 1.0;
  int useful = workers;
  if (job.spec.io_bound_workers > 0) useful = std::min(useful, job.spec.io_bound_workers);
  return std::pow(static_cast<double>(useful) / ref, sim_->world->elastic.scaling_exponent);
}

model::JobPhases SimCluster::PhasesFor(const Job& job, int workers) const {
  model::JobPhases p = job.spec.phases;
  // Past the workers its data pipeline can feed, each GPU waits on input.
  if (job.spec.io_bound_workers > 0 && workers > job.spec.io_bound_workers) {
    const double f = static_cast<double>(job.spec.io_bound_workers) / workers;
    p.train_util *= f;
    p.eval_util *= f;
  }
  return p;
}

void SimCluster::NewSegment(Job& job, Timestamp now, double progress0, Duration startup) {
  SimJob& sj = Sim(job.id);
  ++sj.epoch;
  sj.run.segments.emplace_back(now, progress0, sj.work, Rate(job, job.Workers()), startup, job.spec.checkpoint,
                               PhasesFor(job, job.Workers()));
  sj.run.answers = {};
  metrics_.RunChanged(job.id);
  job.state = JobState::kRunning;
  job.progress = progress0;
  job.expected_end = sj.run.segments.back().EndTime();
  sim_->queue.Push(job.expected_end, EventKind::kJobEnd, job.id, static_cast<int64_t>(sj.epoch));
}

void SimCluster::StartRun(Job& job, Timestamp now) {
  SimJob& sj = Sim(job.id);
  job.started = now;
  if (!job.alloc.empty()) {
    if (const Node* n = sim_->FindNode(job.alloc.front().node)) {
      cloud_->ledger().AddEgress(sim_->spec->EgressCost(job.spec, n->pool));
    }
  }
  sj.run.segments.clear();
  NewSegment(job, now, job.saved, StartupFor(job.spec));
  if (!sj.started_once) {
    sj.started_once = true;
    recorder_->Started(job, (now - job.spec.submit).count());
  }
}

void SimCluster::StartDue(model::JobId id, Timestamp now, bool* changed) {
  Job* j = sim_->FindJob(id);
  if (j != nullptr && j->state == JobState::kStarting && j->expected_end - j->spec.runtime <= now) {
    StartRun(*j, now);
    *changed = true;
  }
}

void SimCluster::MaybeStartAfterBoot(Timestamp now) {
  // The jobs still waiting for their nodes, in the order of state.jobs; the
  // list forgets those that started or went back to the queue since.
  std::vector<std::pair<size_t, model::JobId>> waiting;
  for (const model::JobId id : starting_) {
    const int64_t pos = sim_->job_pos.Find(id);
    if (pos >= 0 && sim_->state.jobs[static_cast<size_t>(pos)].state == JobState::kStarting) {
      waiting.emplace_back(static_cast<size_t>(pos), id);
    }
  }
  std::sort(waiting.begin(), waiting.end());
  waiting.erase(std::unique(waiting.begin(), waiting.end()), waiting.end());
  starting_.clear();
  for (const auto& [pos, id] : waiting) starting_.push_back(id);
  for (const auto& [pos, id] : waiting) {
    Job& j = sim_->state.jobs[pos];
    bool ready = true;
    for (const auto& sh : j.alloc) {
      const Node* n = sim_->FindNode(sh.node);
      ready = ready && n != nullptr && n->state == NodeState::kReady;
    }
    if (!ready) continue;
    sim_->TouchJob(j);
    const Timestamp at = AlignUp(now, sim_->t0, start_tick_);
    if (at == now) {
      StartRun(j, now);
    } else {
      j.expected_end = at + j.spec.runtime;
      sim_->queue.Push(at, EventKind::kJobStart, j.id);
    }
  }
}

// Adds the utilization-weighted and allocated GPU time of the job's current
// segments up to `now` to the figures.
void SimCluster::CloseSegments(const Job& job, Timestamp now) {
  const SimJob& sj = Sim(job.id);
  const double gpus = job.spec.slice_units > 0
                          ? static_cast<double>(job.Workers()) * job.spec.slice_units / 7.0
                          : static_cast<double>(job.Workers()) * job.spec.gpus_per_worker;
  for (size_t i = 0; i < sj.run.segments.size(); ++i) {
    const JobRun& seg = sj.run.segments[i];
    const Timestamp end = i + 1 < sj.run.segments.size() ? sj.run.segments[i + 1].start() : now;
    seg.ForEachPiece(seg.start(), end, [&](double util, int64_t seconds) {
      recorder_->AddUtilized(util * static_cast<double>(seconds) * gpus);
    });
  }
  recorder_->AddBusy(gpus * static_cast<double>((now - job.started).count()));
  Attribute(job, job.started, now);
}

void SimCluster::Attribute(const Job& job, Timestamp from, Timestamp to) {
  if (to <= from) return;
  const double hours = static_cast<double>((to - from).count()) / 3600.0;
  double cost = 0;
  for (const auto& sh : job.alloc) {
    const Node* n = sim_->FindNode(sh.node);
    if (n == nullptr) continue;
    const model::NodePool& pool = sim_->spec->pools[static_cast<size_t>(n->pool)];
    const double gpus = sh.units > 0 ? static_cast<double>(sh.units) / pool.mig.units_per_gpu
                                     : static_cast<double>(sh.workers) * job.spec.gpus_per_worker;
    cost += pool.price_per_hour * gpus / pool.type.gpus * hours;
  }
  recorder_->Charge(job.spec.priority_class, job.spec.team, cost);
}

void SimCluster::FreeAllocation(Job& job, Timestamp now) {
  for (const auto& sh : job.alloc) {
    Node* n = sim_->FindNode(sh.node);
    if (n == nullptr) continue;
    ReturnGpus(job, *n, sh);
    if (n->idle() && n->state == NodeState::kReady) n->idle_since = now;
  }
  const auto nodes = job.alloc;
  job.alloc.clear();
  for (const auto& sh : nodes) MaybeFinishDrain(sh.node, now);
}

void SimCluster::MaybeFinishDrain(model::NodeId id, Timestamp now) {
  Node* n = sim_->FindNode(id);
  if (n == nullptr || n->state != NodeState::kDraining || !n->idle()) return;
  on_drained_(id, now);
}

Status SimCluster::RunEnded(model::JobId id, uint64_t epoch, Timestamp now, bool* changed) {
  Job* j = sim_->FindJob(id);
  if (j == nullptr || j->state != JobState::kRunning || Sim(j->id).epoch != epoch) {
    return OkStatus();  // stale: the run changed since
  }
  *changed = true;
  return CompleteJob(id, now);
}

Status SimCluster::Exited(model::JobId id, uint64_t epoch, Timestamp now, bool* changed) {
  Job* j = sim_->FindJob(id);
  if (j == nullptr || j->state != JobState::kStopping || Sim(j->id).epoch != epoch) return OkStatus();
  *changed = true;
  return ExitJob(id, now);
}

Status SimCluster::CompleteJob(model::JobId id, Timestamp now) {
  Job* job = sim_->FindJob(id);
  if (job == nullptr || job->state != JobState::kRunning) {
    return absl::InternalError(StrCat("job ", id, " ended but was not running"));
  }
  CloseSegments(*job, now);
  recorder_->Completed(*job, (now - job->spec.submit).count(), now);
  FreeAllocation(*job, now);
  RemoveJob(id);
  return OkStatus();
}

Status SimCluster::Stop(model::JobId id, Timestamp now, std::string_view cause, bool cancel) {
  Job* found = sim_->FindJob(id);
  if (found == nullptr || found->state != JobState::kRunning) {
    return absl::FailedPreconditionError(StrCat("job ", id, " is not running"));
  }
  Job& job = *found;
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
  sim_->queue.Push(job.expected_end, EventKind::kJobExit, job.id, static_cast<int64_t>(sj.epoch));
  return OkStatus();
}

// A stopping job finished its checkpoint: it exits, nothing lost.
Status SimCluster::ExitJob(model::JobId id, Timestamp now) {
  Job* job = sim_->FindJob(id);
  SimJob& sj = Sim(id);
  Attribute(*job, job->started, now);  // the checkpoint it wrote on the way out
  job->saved = sj.stop_progress;
  if (sim_->observer != nullptr) sim_->observer->OnInterrupt(*job, sj.stop_cause, 0, now);
  FreeAllocation(*job, now);
  if (sj.stop_cancel) {
    ++sim_->result.jobs_cancelled;
    recorder_->Log(now, "cancelled",
                   StrCat(job->spec.name, " (", sj.stop_cause, ") after ", static_cast<int64_t>(job->saved),
                          "s of work"));
    RemoveJob(id);
    return OkStatus();
  }
  Requeue(*job, now);
  return OkStatus();
}

// The job's nodes are gone before it could checkpoint: it loses the work
// since its last completed checkpoint.
void SimCluster::KillJob(Job& job, Timestamp now, std::string_view cause) {
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
  sim_->result.lost_work_gpu_hours += lost * job.spec.GpuEquivalents() / 3600.0;
  sim_->result.max_lost_work_s = std::max(sim_->result.max_lost_work_s, lost);
  if (sim_->observer != nullptr) sim_->observer->OnInterrupt(job, cause, lost, now);
  ++sj.epoch;
  job.saved = saved;
  job.progress = saved;
  metrics_.RunChanged(job.id);
  FreeAllocation(job, now);
  Requeue(job, now);
}

void SimCluster::Requeue(Job& job, Timestamp now) {
  job.state = JobState::kPending;
  job.progress = job.saved;
  job.workers = 0;
  // Resizes belong to a run; the next run starts fresh.
  job.last_resize = kInfinitePast;
  job.workers_before_resize = 0;
  job.AddRestart();
  Sim(job.id).run.segments.clear();
  metrics_.RunChanged(job.id);
}

void SimCluster::NodeLost(model::NodeId id, Timestamp now) {
  std::vector<model::JobId> victims;
  for (const auto& j : sim_->state.jobs) {
    for (const auto& sh : j.alloc) {
      if (sh.node == id) victims.push_back(j.id);
    }
  }
  for (auto jid : victims) {
    Job* j = sim_->FindJob(jid);
    if (j == nullptr) continue;
    if (j->state == JobState::kRunning) ++sim_->result.spot_interruptions;  // killed without warning heeded
    if (j->state == JobState::kStarting) {
      FreeAllocation(*j, now);
      j->state = JobState::kPending;
      continue;
    }
    KillJob(*j, now, "spot");
  }
}

Status SimCluster::Resize(model::JobId id, const autoscale::ResizeInfo& r, Timestamp now) {
  Job* job = sim_->FindJob(id);
  if (job == nullptr || job->state != JobState::kRunning) {
    return absl::InternalError("plan resizes a job that is not running");
  }
  const SimJob& sj = Sim(job->id);
  const double progress = sj.run.segments.back().ProgressAt(now);
  // A job resized while still loading its data goes on loading after the pause.
  const Duration loading_left = std::max(Duration{0}, sj.run.segments.back().StartupEnd() - now);
  CloseSegments(*job, now);
  for (const auto& sh : r.remove) {
    Node* n = sim_->FindNode(sh.node);
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
  for (const auto& sh : r.add) {
    Node* n = sim_->FindNode(sh.node);
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
    cloud_->NodeUsed(n->id);
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
  if (workers != r.workers) return absl::InternalError("resize leaves a different worker count than planned");
  job->workers_before_resize = job->workers;
  job->workers = workers;
  job->started = now;
  job->last_resize = now;
  job->saved = progress;  // an elastic framework re-rendezvouses from its live state
  Sim(job->id).run.segments.clear();
  NewSegment(*job, now, progress, sim_->world->elastic.resize_pause + loading_left);
  for (const auto& sh : r.remove) MaybeFinishDrain(sh.node, now);
  ++sim_->result.resizes;
  return OkStatus();
}

}  // namespace tide::sim
