#include "controller/controller.h"

#include <algorithm>
#include <cctype>

#include "controller/explain.h"
#include "controller/exposition.h"
#include "controller/job_utilization.h"
#include "controller/reconcile.h"
#include "controller/live_cost.h"
#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::controller {

std::string ReasonClass(std::string_view reason) {
  std::string out;
  bool in_number = false;
  for (char c : reason) {
    if (c == ':' || c == '(' || c == ';') break;
    if (std::isdigit(static_cast<unsigned char>(c)) || (in_number && (c == '.' || c == ','))) {
      if (!in_number) out += 'N';
      in_number = true;
      continue;
    }
    // A unit right after a number ("30s", "5m", "2h") folds into it.
    if (in_number && (c == 's' || c == 'm' || c == 'h' || c == 'd') ) {
      in_number = false;
      continue;
    }
    in_number = false;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > 60) out.resize(60);
  return out.empty() ? "none" : out;
}

Controller::Controller(const config::Config& config, autoscale::Autoscaler autoscaler,
                       backends::WorkloadManager* manager, providers::CloudProvider* provider, Store* store,
                       metrics::PrometheusSource* prometheus, ControllerOptions options, LogFn log)
    : config_(config),
      autoscaler_(std::move(autoscaler)),
      scheduler_(config.policies.scheduler),
      manager_(manager),
      watched_(provider),
      provider_(&watched_),
      store_(store),
      prometheus_(prometheus),
      history_(metrics::UtilHistoryOptions{std::max(config.live.loop_interval * 3, Seconds(60)),
                                           config.live.loop_interval}),
      options_(options),
      log_(std::move(log)),
      journal_(&config_, store),
      listener_(&memory_, store, log_, options_.fault),
      applier_(&config_.cluster,
               apply::ApplyOptions{.checkpoint_grace = config.live.jobs.checkpoint_grace},
               manager, &watched_, &journal_, &listener_) {
  if (options_.may_act) journal_.set_may_act(options_.may_act);
}

namespace {

// The sources of faults, as tide_fault labels them.
constexpr char kManagerFault[] = "workload_manager";
constexpr char kProviderFault[] = "provider";
constexpr char kStoreFault[] = "store";

}  // namespace

void Controller::NoteStore(const Status& s) {
  store_written_ = true;
  if (!s.ok() && store_error_.ok()) store_error_ = s;
}

void Controller::UpdateFaults() {
  if (watched_.called()) {
    if (watched_.fault().ok()) {
      faults_.erase(kProviderFault);
    } else {
      faults_[kProviderFault] = StrCat("provider (", watched_.Name(), "): ", Message(watched_.fault()));
    }
  }
  if (store_written_) {
    if (store_error_.ok()) {
      faults_.erase(kStoreFault);
    } else {
      faults_[kStoreFault] = StrCat("state store: cannot write the state file: ", Message(store_error_),
                                    "; nothing is bought or given back until it can");
    }
  }
}

void Controller::LoopError(LoopReport* r, const std::string& source, const Status& s) {
  r->ok = false;
  r->error = StrCat(source, ": ", Message(s));
  ++errors_by_source_[source];
  log_(StrCat("error: ", r->error, "; no action this loop"));
}

void Controller::Observe(Timestamp now, LoopReport* r, backends::Observation* obs,
                         std::vector<providers::Instance>* instances,
                         std::vector<providers::Interruption>* interruptions) {
  r->ok = true;
  auto o = manager_->Observe();
  const std::string& name = manager_->capabilities().name;
  if (!o.ok()) {
    faults_[kManagerFault] = StrCat("workload manager (", name, ") cannot be read: ", Message(o.status()));
    return LoopError(r, name, o.status());
  }
  faults_.erase(kManagerFault);
  *obs = std::move(*o);
  auto list = provider_->List(now);
  if (!list.ok()) return LoopError(r, "provider", list.status());
  *instances = std::move(*list);
  auto notes = provider_->Interruptions(now);
  if (!notes.ok()) return LoopError(r, "provider", notes.status());
  *interruptions = std::move(*notes);
  MatchJoinedNodes(obs->nodes, instances, interruptions);
}

void Controller::FeedMetrics(const backends::Observation& obs, const Built& built, Timestamp now) {
  if (prometheus_ == nullptr) return;
  auto samples = prometheus_->Query();
  if (!samples.ok()) {
    ++errors_by_source_["prometheus"];
    log_(StrCat("warning: prometheus: ", Message(samples.status()),
                "; utilization unknown this loop (never read as idle)"));
    return;
  }
  for (const auto& [key, util] : JobUtilization(obs, *samples)) {
    auto known = built.job_of_key.find(key);
    if (known != built.job_of_key.end()) history_.Record(known->second, util, now);  // else not in tide's pools
  }
}

void Controller::CountInterruptions(const backends::Observation& obs, Timestamp now) {
  std::set<std::string> present;
  for (const auto& j : obs.jobs) {
    present.insert(j.key);
    auto it = memory_.runs.find(j.key);
    if (it != memory_.runs.end() && j.restarts > it->second.restarts) {
      if (memory_.requeued_by_tide.erase(j.key) == 0 && !options_.dry_run) {
        // Requeued by something other than tide (a node failure, a
        // reclaimed node): its whole run since the start is lost.
        const auto& run = it->second;
        const double lost =
            static_cast<double>(std::max<int64_t>(0, (run.last_seen - run.start).count())) * run.gpus;
        (void)store_->AddJobEvent({j.key, "interrupted", now, lost, "restarted without a checkpoint signal from tide"});
        log_(StrCat("job ", j.key, " was interrupted outside tide (restart ", j.restarts, "); lost work ",
                    static_cast<int64_t>(lost), " GPU-seconds"));
      }
      memory_.runs.erase(it);
    }
    if (j.phase == backends::JobPhase::kRunning) {
      auto& run = memory_.runs[j.key];
      run.restarts = j.restarts;
      run.start = j.start;
      run.last_seen = now;
      run.gpus = j.gpus();
    }
  }
  for (auto it = memory_.runs.begin(); it != memory_.runs.end();) {
    if (!present.count(it->first) && now - it->second.last_seen > Hours(1)) {
      if (auto id = memory_.job_ids.find(it->first); id != memory_.job_ids.end()) {
        history_.Forget(id->second);
        memory_.job_ids.erase(id);
      }
      memory_.reclaims.erase(it->first);
      memory_.bottlenecks.erase(it->first);
      it = memory_.runs.erase(it);
    } else {
      ++it;
    }
  }
}

void Controller::LogPlan(const autoscale::ScalingPlan& plan, const Built& built, Timestamp now) {
  std::set<std::string> lines;
  std::vector<DecisionRecord> records;
  for (const auto& a : plan.actions) {
    std::string what = StrCat(autoscale::ActionKindName(a.kind));
    if (a.pool >= 0) what += StrCat(" pool=", config_.cluster.pools[a.pool].name);
    if (a.count > 0) what += StrCat(" count=", a.count);
    if (!a.nodes.empty()) {
      std::vector<std::string> names;
      for (auto id : a.nodes) {
        auto it = built.nodes.find(id);
        names.push_back(it == built.nodes.end() ? StrCat(id) : it->second->name);
      }
      what += StrCat(" nodes=", StrJoin(names, ","));
    }
    if (!a.jobs.empty()) {
      std::vector<std::string> ids;
      for (size_t i = 0; i < a.jobs.size() && i < 10; ++i) {
        auto it = built.jobs.find(a.jobs[i]);
        ids.push_back(it == built.jobs.end() ? StrCat(a.jobs[i]) : it->second->key);
      }
      if (a.jobs.size() > 10) ids.push_back("...");
      what += StrCat(" jobs=", StrJoin(ids, ","));
    }
    std::string line = StrCat(options_.dry_run ? "[dry-run] " : "", "plan: ", what, ": ", a.reason);
    if (!last_plan_lines_.count(line)) {
      log_(line);
      records.push_back({0, now, std::string(autoscale::ActionKindName(a.kind)), a.reason, what, options_.dry_run});
    }
    lines.insert(std::move(line));
    ++decisions_[{std::string(autoscale::ActionKindName(a.kind)), ReasonClass(a.reason)}];
  }
  if (plan.actions.empty() && options_.dry_run) log_("[dry-run] plan: nothing to do");
  last_plan_lines_ = std::move(lines);
  if (!options_.dry_run && !records.empty()) {
    Status s = store_->AppendDecisions(records);
    NoteStore(s);
    if (!s.ok()) log_(StrCat("error: store: ", Message(s)));
  }
}

LoopReport Controller::RunLoop(Timestamp now) {
  LoopReport r;
  r.at = now;
  ++loops_;
  watched_.Reset();
  store_written_ = false;
  store_error_ = OkStatus();
  backends::Observation obs;
  std::vector<providers::Instance> instances;
  std::vector<providers::Interruption> interruptions;
  Observe(now, &r, &obs, &instances, &interruptions);
  if (!r.ok) {
    Publish(r, nullptr, now);
    return r;
  }
  std::vector<apply::PendingStop> pending;
  if (!options_.dry_run) {
    // A write first, before anything is done: a state file that cannot be
    // written stops the loop here, as a failed observation does, since
    // nothing may be bought or given back that cannot be journaled.
    Status s = store_->SetValue("controller.loop", FormatTimestamp(now));
    NoteStore(s);
    if (s.ok()) s = Reconcile(config_, obs, instances, store_, provider_, now, &r.acted, log_);
    if (s.ok()) {
      // Instances adopted without a record of buying them are left be
      // until their node joins.
      auto live = store_->Instances(/*include_deleted=*/false);
      if (live.ok()) {
        memory_.held = HeldNodes(obs, *live);
      } else {
        s = live.status();
      }
    }
    if (s.ok()) {
      // Jobs told to checkpoint, from the store: they are stopping, and
      // their stop is finished once the grace is over.
      auto stops = journal_.PendingStops();
      if (stops.ok()) {
        pending = std::move(*stops);
      } else {
        s = stops.status();
      }
    }
    if (!s.ok()) {
      NoteStore(s);
      LoopError(&r, "store", s);
      Publish(r, nullptr, now);
      return r;
    }
    memory_.stopping.clear();
    for (const auto& p : pending) memory_.stopping.emplace(p.job, p.signalled);
  }
  CountInterruptions(obs, now);
  std::set<std::string> noticed;
  for (const auto& i : interruptions) noticed.insert(i.node);
  listener_.set_noticed(std::move(noticed));
  Built built = BuildSnapshot(config_, obs, instances, interruptions, &memory_,
                              prometheus_ != nullptr ? &history_ : nullptr, now);
  FeedMetrics(obs, built, now);
  for (const auto& s : built.skipped) {
    if (skipped_logged_.insert(s).second) log_(StrCat("note: ", s));
  }
  if (skipped_logged_.size() > 10000) skipped_logged_.clear();
  for (const auto& j : built.state.jobs) {
    if (j.state != model::JobState::kPending) continue;
    ++r.pending_jobs;
    r.pending_gpus += j.spec.gpus();
  }
  const bool acting = !options_.dry_run && !paused_;
  if (acting) Advance(config_, obs, built, manager_, &applier_, store_, pending, now, &r.acted, log_);
  // Drop disruptions older than a day (the budget looks back less).
  std::erase_if(memory_.disruptions, [&](Timestamp t) { return now - t > Hours(24); });
  built.state.recent_disruptions = memory_.disruptions;

  if (!manager_->capabilities().schedules_itself) Place(&built, now, &r);
  auto plan = autoscaler_.RunOnce(built.state, now);
  if (!plan.ok()) {
    LoopError(&r, "decision", plan.status());
    Publish(r, &built, now);
    return r;
  }
  r.plan = std::move(*plan);
  LogPlan(r.plan, built, now);
  if (acting) {
    LiveView view(&built, store_);
    Status s = applier_.Apply(r.plan, view, now, &r.acted);
    if (!s.ok()) LoopError(&r, "apply", s);
    if (manager_->capabilities().explain) Explain(built, r.plan, now);
  }
  // A step the store would not record was not taken (the applier journals
  // first); the store's refusal is its fault.
  if (Status w = journal_.TakeWriteError(); !w.ok()) NoteStore(w);
  for (auto [name, n] : {std::pair{"create", r.acted.creates}, {"delete", r.acted.deletes},
                         {"cordon", r.acted.cordons}, {"uncordon", r.acted.uncordons},
                         {"checkpoint", r.acted.checkpoints}, {"evict", r.acted.evictions},
                         {"requeue", r.acted.requeues}, {"cancel", r.acted.cancels}, {"bind", r.acted.binds},
                         {"resize", r.acted.resizes}, {"refused", r.acted.refused}, {"error", r.acted.errors}}) {
    if (n > 0) acted_[name] += n;
  }
  last_ok_ = now;
  if (!options_.dry_run) RecordHistory(built, instances, now);
  Publish(r, &built, now);
  return r;
}

void Controller::Explain(const Built& built, const autoscale::ScalingPlan& plan, Timestamp now) {
  std::map<std::string, std::string> said;
  for (auto& [id, why] : WhyWaiting(config_.cluster, built.state, plan, now)) {
    auto j = built.jobs.find(id);
    if (j == built.jobs.end()) continue;
    const std::string& key = j->second->key;
    auto before = explained_.find(key);
    if (before != explained_.end() && before->second == why) {
      said[key] = std::move(why);
      continue;
    }
    // Said only when it changes: a waiting job is explained once, not on
    // every loop. A failure is said again next loop.
    Status s = manager_->Explain(key, why);
    if (s.ok()) {
      said[key] = std::move(why);
    } else if (!absl::IsNotFound(s)) {
      log_(StrCat("error: explain job ", key, ": ", Message(s)));
    }
  }
  explained_ = std::move(said);
}

void Controller::Place(Built* built, Timestamp now, LoopReport* r) {
  const sched::SchedulerOutput out = scheduler_.Schedule(built->state, now);
  if (out.placements.empty()) return;
  std::map<model::JobId, size_t> jobs;
  std::map<model::NodeId, size_t> nodes;
  for (size_t i = 0; i < built->state.jobs.size(); ++i) jobs[built->state.jobs[i].id] = i;
  for (size_t i = 0; i < built->state.nodes.size(); ++i) nodes[built->state.nodes[i].id] = i;
  const bool acting = !options_.dry_run && !paused_;
  int workers_bound = 0;
  for (const auto& p : out.placements) {
    if (acting) {
      // Each worker is a binding, a round trip to the manager: past the
      // loop's share, the rest wait, pending, for the next loop (which a
      // watch event starts at once), so that a loop stays short and a
      // scale-up is never held behind thousands of bindings.
      if (workers_bound >= kMaxWorkersBoundPerLoop) break;
      for (const auto& sh : p.shares) workers_bound += sh.workers;
      LiveView view(built, store_);
      const int binds = r->acted.binds;
      Status s = applier_.Place(p, view, now, &r->acted);
      if (!s.ok() || r->acted.binds == binds) continue;  // not bound: it stays waiting
    } else {
      auto it = built->jobs.find(p.job);
      std::vector<std::string> where;
      for (const auto& sh : p.shares) {
        auto n = nodes.find(sh.node);
        where.push_back(StrCat(n == nodes.end() ? StrCat(sh.node) : built->state.nodes[n->second].name, ":",
                               sh.workers));
      }
      log_(StrCat(options_.dry_run ? "[dry-run] " : "", "would bind job ",
                  it == built->jobs.end() ? StrCat(p.job) : it->second->key, " to ", StrJoin(where, ","),
                  p.backfilled ? " (backfilled)" : ""));
    }
    // The snapshot the plan is made on sees the job starting on its nodes.
    model::Job& job = built->state.jobs[jobs.at(p.job)];
    job.state = model::JobState::kStarting;
    job.alloc.assign(p.shares.begin(), p.shares.end());
    job.started = now;
    int workers = 0;
    for (const auto& sh : p.shares) {
      workers += sh.workers;
      model::Node& n = built->state.nodes[nodes.at(sh.node)];
      n.free_gpus = std::max(0, n.free_gpus - sh.workers * job.spec.gpus_per_worker);
      n.idle_since = kInfiniteFuture;
    }
    job.workers = workers;
    job.expected_end = now + job.spec.runtime;
    ++r->placed;
  }
}

void Controller::RecordHistory(const Built& built, const std::vector<providers::Instance>& instances, Timestamp now) {
  SampleRecord sample = SampleOf(config_, built, instances, now);
  std::set<std::pair<std::string, int64_t>> running;
  std::vector<JobStartRecord> fresh;
  for (auto& s : JobStartsOf(config_, built)) {
    std::pair<std::string, int64_t> key{s.job, ToUnixSeconds(s.submit)};
    if (!starts_recorded_.count(key)) fresh.push_back(std::move(s));
    running.insert(key);
  }
  Status st = OkStatus();
  auto lost = store_->LostGpuSeconds();
  auto spot = store_->Counter("spot_interruptions");
  if (!lost.ok()) {
    st = lost.status();
  } else if (!spot.ok()) {
    st = spot.status();
  } else {
    sample.lost_work_gpu_hours = *lost / 3600.0;
    sample.spot_interruptions = *spot;
    st = store_->RecordSample(sample, fresh, now - options_.history);
  }
  NoteStore(st);
  if (!st.ok()) {
    // The loop's work is done; only the status page misses this sample
    // (the job starts are offered again next loop).
    ++errors_by_source_["store"];
    log_(StrCat("error: store: ", Message(st), "; this loop is missing from the status page"));
    return;
  }
  starts_recorded_ = std::move(running);
}

void Controller::Publish(const LoopReport& r, const Built* built, Timestamp now) {
  UpdateFaults();
  Exposition m;
  m.Gauge("tide_up", "1 while tide's controller runs.", {}, 1);
  for (const char* source : {kManagerFault, kProviderFault, kStoreFault}) {
    m.Gauge("tide_fault", "1 while a fault of the source is current (docs/live.md, \"Faults\"); /healthz says what.",
            {{"source", source}}, faults_.count(source) > 0 ? 1 : 0);
  }
  m.Counter("tide_loops_total", "Control loops run.", {}, static_cast<double>(loops_));
  for (const auto& [source, n] : errors_by_source_) {
    m.Counter("tide_loop_errors_total", "Loops or steps that failed, by what failed (the workload manager by its backend's name, provider, prometheus, store, decision, apply).",
              {{"source", source}}, static_cast<double>(n));
  }
  if (last_ok_ != kInfinitePast) {
    m.Gauge("tide_last_successful_loop_timestamp_seconds", "When the last loop that decided ran (unix time).", {},
            static_cast<double>(ToUnixSeconds(last_ok_)));
  }
  m.Gauge("tide_dry_run", "1 if tide decides without acting.", {}, options_.dry_run ? 1 : 0);
  m.Gauge("tide_paused", "1 while acting is paused through the API.", {}, paused_ ? 1 : 0);
  nlohmann::json pools = nlohmann::json::array();
  nlohmann::json nodes = nlohmann::json::array();
  if (built != nullptr) {
    std::vector<std::array<int, 3>> by_state(config_.cluster.pools.size());
    for (const auto& n : built->state.nodes) {
      const int k = n.state == model::NodeState::kProvisioning ? 0 : n.state == model::NodeState::kReady ? 1 : 2;
      ++by_state[n.pool][k];
      nodes.push_back({{"name", n.name},
                       {"pool", config_.cluster.pools[n.pool].name},
                       {"state", model::NodeStateName(n.state)},
                       {"gpus", n.gpus},
                       {"free_gpus", n.free_gpus},
                       {"idle_since", n.idle_since == kInfiniteFuture ? "" : FormatTimestamp(n.idle_since)},
                       {"interrupt_at", n.interrupt_at == kInfiniteFuture ? "" : FormatTimestamp(n.interrupt_at)}});
    }
    static constexpr const char* kStates[] = {"provisioning", "ready", "draining"};
    for (size_t p = 0; p < config_.cluster.pools.size(); ++p) {
      const auto& pool = config_.cluster.pools[p];
      for (int k = 0; k < 3; ++k) {
        m.Gauge("tide_nodes", "Nodes tide holds, by pool and state.",
                {{"pool", pool.name}, {"tier", std::string(model::TierName(pool.tier))}, {"state", kStates[k]}},
                by_state[p][k]);
      }
      if (manager_->capabilities().fixed_node_names) {
        m.Gauge("tide_pool_free_slots", "Nodes of the pool's fixed name list that tide may still buy under.",
                {{"pool", pool.name}}, built->free_names[p]);
      }
      pools.push_back({{"name", pool.name},
                       {"tier", model::TierName(pool.tier)},
                       {"min_nodes", pool.min_nodes},
                       {"max_nodes", pool.max_nodes},
                       {"provisioning", by_state[p][0]},
                       {"ready", by_state[p][1]},
                       {"draining", by_state[p][2]},
                       {"free_slots", built->free_names[p]}});
    }
    m.Gauge("tide_pending_jobs", "Jobs waiting for GPUs on tide's pools.", {}, r.pending_jobs);
    m.Gauge("tide_pending_gpus", "GPUs asked for by pending jobs.", {}, r.pending_gpus);
  }
  for (const auto& [key, n] : decisions_) {
    m.Counter("tide_decisions_total", "Plan actions decided, by kind and reason class.",
              {{"kind", key.first}, {"reason", key.second}}, static_cast<double>(n));
  }
  for (const auto& [name, n] : acted_) {
    m.Counter("tide_actions_total", "Steps carried out on the workload manager or the provider (refused and failed ones too).",
              {{"action", name}}, static_cast<double>(n));
  }
  nlohmann::json cost_json = nlohmann::json::object();
  double lost = 0;
  int64_t spot = 0;
  if (!options_.dry_run) {
    if (auto cost = LiveCost(store_, now); cost.ok()) {
      for (auto [tier, v] : {std::pair{"reserved", cost->reserved}, {"on-demand", cost->on_demand}, {"spot", cost->spot}}) {
        m.Counter("tide_cost_total", StrCat("Cost of the nodes tide bought, in ", config_.cluster.currency, ", by tier."),
                  {{"tier", tier}, {"currency", config_.cluster.currency}}, v);
        cost_json[tier] = v;
      }
      cost_json["total"] = cost->total();
      cost_json["currency"] = config_.cluster.currency;
    }
    if (auto v = store_->LostGpuSeconds(); v.ok()) lost = *v;
    if (auto v = store_->Counter("spot_interruptions"); v.ok()) spot = *v;
  }
  m.Counter("tide_spot_interruptions_total", "Spot instances the provider interrupted.", {}, static_cast<double>(spot));
  m.Counter("tide_lost_work_gpu_seconds_total",
            "GPU-seconds of work lost to interruptions (after the checkpoint signal, or a whole run without one).", {},
            lost);

  nlohmann::json st;
  st["time"] = FormatTimestamp(now);
  st["config"] = config_.source;
  st["dry_run"] = options_.dry_run;
  st["paused"] = paused_.load();
  st["loops"] = loops_;
  st["last_loop"] = {{"at", FormatTimestamp(r.at)}, {"ok", r.ok}, {"error", r.error}};
  st["last_successful_loop"] = last_ok_ == kInfinitePast ? "" : FormatTimestamp(last_ok_);
  // A failed loop shows the last view it had, marked as such.
  if (built != nullptr) {
    last_pools_ = pools.dump();
    last_nodes_ = nodes.dump();
  } else if (!last_pools_.empty()) {
    pools = nlohmann::json::parse(last_pools_);
    nodes = nlohmann::json::parse(last_nodes_);
    st["view_from"] = last_ok_ == kInfinitePast ? "" : FormatTimestamp(last_ok_);
  }
  st["pools"] = pools;
  st["nodes"] = nodes;
  st["pending_jobs"] = r.pending_jobs;
  st["pending_gpus"] = r.pending_gpus;
  nlohmann::json plan = nlohmann::json::array();
  for (const auto& a : r.plan.actions) {
    plan.push_back({{"kind", autoscale::ActionKindName(a.kind)},
                    {"pool", a.pool >= 0 ? config_.cluster.pools[a.pool].name : ""},
                    {"count", a.count},
                    {"jobs", a.jobs},
                    {"reason", a.reason}});
  }
  st["plan"] = plan;
  st["cost"] = cost_json;
  st["lost_work_gpu_seconds"] = lost;
  st["spot_interruptions"] = spot;
  nlohmann::json recent = nlohmann::json::array();
  if (!options_.dry_run) {
    if (auto acts = store_->RecentActions(20); acts.ok()) {
      for (const auto& a : *acts) {
        recent.push_back({{"key", a.key}, {"kind", a.kind}, {"node", a.node}, {"job", a.job}, {"state", a.state},
                          {"at", FormatTimestamp(a.updated)}, {"detail", a.detail}});
      }
    }
  }
  st["recent_actions"] = recent;
  nlohmann::json faults = nlohmann::json::array();
  for (const auto& [source, line] : faults_) faults.push_back(line);
  st["faults"] = faults;

  std::lock_guard<std::mutex> lock(mu_);
  if (!r.ok) {
    recent_errors_.push_back(StrCat(FormatTimestamp(now), " ", r.error));
  }
  for (const auto& p : r.acted.problems) recent_errors_.push_back(StrCat(FormatTimestamp(now), " ", p));
  while (recent_errors_.size() > 20) recent_errors_.pop_front();
  st["errors"] = nlohmann::json(std::vector<std::string>(recent_errors_.begin(), recent_errors_.end()));
  last_error_ = r.ok ? "" : r.error;
  published_faults_ = faults_;
  if (r.ok) published_ok_ = now;
  metrics_text_ = m.Text();
  status_json_ = st.dump(2) + "\n";
}

std::string Controller::MetricsText() const {
  std::lock_guard<std::mutex> lock(mu_);
  return metrics_text_;
}

std::string Controller::StatusJson() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_json_;
}

bool Controller::Healthy(Timestamp now, std::string* why) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> lines;
  for (const auto& [source, line] : published_faults_) lines.push_back(line);
  // A loop error that is no fault (a decision that failed) still shows once
  // the loop has gone stale.
  const std::string last_error = lines.empty() ? last_error_ : std::string();
  const Duration limit = std::max(config_.live.loop_interval * 3, Seconds(10));
  if (published_ok_ == kInfinitePast) {
    if (lines.empty()) {
      lines.push_back(last_error.empty() ? "no loop has completed yet" : StrCat("no loop has completed: ", last_error));
    }
  } else if (now - published_ok_ > limit) {
    lines.push_back(StrCat("the last successful loop was ", (now - published_ok_).count(), " s ago",
                           last_error.empty() ? "" : StrCat(" (last error: ", last_error, ")")));
  }
  if (lines.empty()) return true;
  *why = StrJoin(lines, "\n");
  return false;
}

}  // namespace tide::controller
