#include "controller/actuator.h"

#include <signal.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "core/strings.h"

namespace tide::controller {
namespace {

const backends::ObservedNode* FindNode(const backends::Observation& obs, const std::string& name) {
  for (const auto& n : obs.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

const backends::ObservedJob* FindJob(const backends::Observation& obs, int64_t id) {
  for (const auto& j : obs.jobs) {
    if (j.id == id) return &j;
  }
  return nullptr;
}

bool RunsSomething(const backends::Observation& obs, const std::string& node) {
  const auto* n = FindNode(obs, node);
  if (n == nullptr || n->gpus_used > 0 || n->state == "allocated" || n->state == "mixed" ||
      n->state == "completing" || n->Has("COMPLETING")) {
    return true;
  }
  for (const auto& j : obs.jobs) {
    if (j.state != "RUNNING" && j.state != "CONFIGURING" && j.state != "COMPLETING" && j.state != "SUSPENDED") {
      continue;  // pending, or finished (squeue lists finished jobs for MinJobAge)
    }
    if (std::find(j.nodes.begin(), j.nodes.end(), node) != j.nodes.end()) return true;
  }
  return false;
}

// The Slurm job id of a job key this actuator stored (StrCat of the id); 0
// (no job) for any other key.
int64_t SlurmJobId(const std::string& key) {
  int64_t id = 0;
  const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
  return ec == std::errc() && end == key.data() + key.size() ? id : 0;
}

bool Running(const backends::ObservedJob* j) {
  return j != nullptr && (j->state == "RUNNING" || j->state == "CONFIGURING" || j->state == "SUSPENDED");
}

// A Slurm reason is one line; keep it short enough to read in sinfo.
std::string ShortReason(std::string_view prefix, std::string_view why) {
  std::string r = StrCat(prefix, why.empty() ? "" : ": ", why);
  for (char& c : r) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  if (r.size() > 120) r = r.substr(0, 117) + "...";
  return r;
}

// The detail of a stop action: "<requeue|cancel> <deadline> <signalled> <gpus>".
struct StopDetail {
  bool cancel = false;
  Timestamp deadline{};
  Timestamp signalled{};
  int gpus = 0;
};
std::string Encode(const StopDetail& d) {
  return StrCat(d.cancel ? "cancel" : "requeue", " ", ToUnixSeconds(d.deadline), " ", ToUnixSeconds(d.signalled), " ",
                d.gpus);
}
StopDetail Decode(const std::string& s) {
  StopDetail d;
  auto parts = Split(s, ' ', /*skip_empty=*/true);
  if (parts.size() >= 4) {
    d.cancel = parts[0] == "cancel";
    d.deadline = FromUnixSeconds(std::atoll(std::string(parts[1]).c_str()));
    d.signalled = FromUnixSeconds(std::atoll(std::string(parts[2]).c_str()));
    d.gpus = std::atoi(std::string(parts[3]).c_str());
  }
  return d;
}

std::string JobList(const std::vector<model::JobId>& jobs) {
  std::vector<std::string> s;
  for (size_t i = 0; i < jobs.size() && i < 8; ++i) s.push_back(StrCat(jobs[i]));
  if (jobs.size() > 8) s.push_back(StrCat("and ", jobs.size() - 8, " more"));
  return StrJoin(s, ",");
}

}  // namespace

void Actuator::Fail(ActStats* stats, const std::string& what, const Status& s) {
  ++stats->errors;
  const std::string line = StrCat(what, ": ", Message(s));
  stats->problems.push_back(line);
  log_(StrCat("error: ", line));
}

Status Actuator::Reconcile(const std::vector<providers::Instance>& instances, Timestamp now, ActStats* stats) {
  std::map<std::string, const providers::Instance*> by_key, by_id;
  for (const auto& i : instances) {
    if (!i.idempotency_key.empty()) by_key[i.idempotency_key] = &i;
    by_id[i.id] = &i;
  }
  TIDE_ASSIGN_OR_RETURN(auto pending, store_->PendingActions());
  for (const auto& a : pending) {
    if (a.kind == "create") {
      auto it = by_key.find(a.key);
      if (it != by_key.end()) {
        const auto& inst = *it->second;
        const int pool = config_.cluster.PoolIndex(a.pool);
        InstanceRecord r;
        r.id = inst.id;
        r.node = inst.node;
        r.pool = a.pool;
        if (pool >= 0) {
          r.tier = config_.cluster.pools[pool].tier;
          r.price_per_hour = config_.cluster.pools[pool].price_per_hour;
        }
        r.idempotency_key = a.key;
        r.created = inst.created.time_since_epoch().count() > 0 ? inst.created : a.created;
        r.state = "booting";
        TIDE_RETURN_IF_ERROR(store_->CommitCreate(a.key, r, now));
        log_(StrCat("recovered: the create of node ", a.node, " (key ", a.key, ") reached the provider as instance ",
                    inst.id, "; recorded"));
      } else {
        TIDE_RETURN_IF_ERROR(store_->FinishAction(a.key, "abandoned", "the provider has no instance with this key", now));
        log_(StrCat("recovered: the create of node ", a.node, " (key ", a.key,
                    ") never reached the provider; abandoned, nothing was bought"));
      }
    } else if (a.kind == "delete") {
      const std::string id = a.detail;
      Status s = provider_->Delete(id, a.key, now);
      if (!s.ok()) {
        Fail(stats, StrCat("delete of instance ", id, " (node ", a.node, ")"), s);
        continue;
      }
      TIDE_RETURN_IF_ERROR(store_->MarkInstanceDeleted(id, now, "deleted"));
      TIDE_RETURN_IF_ERROR(store_->FinishAction(a.key, "done", id, now));
      log_(StrCat("recovered: finished the delete of instance ", id, " (node ", a.node, ")"));
    }
  }
  TIDE_ASSIGN_OR_RETURN(auto records, store_->Instances(/*include_deleted=*/false));
  std::map<std::string, const InstanceRecord*> known;
  for (const auto& r : records) known[r.id] = &r;
  for (const auto& i : instances) {
    if (known.count(i.id)) continue;
    int pool = config_.cluster.PoolIndex(i.pool);
    if (pool < 0) {
      for (const auto& s : slots_) {
        if (s.node == i.node) pool = s.pool;
      }
    }
    InstanceRecord r;
    r.id = i.id;
    r.node = i.node;
    r.pool = pool >= 0 ? config_.cluster.pools[pool].name : i.pool;
    if (pool >= 0) {
      r.tier = config_.cluster.pools[pool].tier;
      r.price_per_hour = config_.cluster.pools[pool].price_per_hour;
    }
    r.idempotency_key = i.idempotency_key;
    r.created = i.created.time_since_epoch().count() > 0 ? i.created : now;
    r.state = "booting";
    TIDE_RETURN_IF_ERROR(store_->PutInstance(r));
    log_(StrCat("adopted instance ", i.id, " (node ", i.node, "): the provider has it and the store did not"));
  }
  for (const auto& r : records) {
    if (by_id.count(r.id)) continue;
    TIDE_RETURN_IF_ERROR(store_->MarkInstanceDeleted(r.id, now, "lost"));
    if (r.tier == model::Tier::kSpot) TIDE_RETURN_IF_ERROR(store_->AddCounter("spot_interruptions", 1));
    log_(StrCat("instance ", r.id, " (node ", r.node, ", pool ", r.pool, ") is gone at the provider",
                r.tier == model::Tier::kSpot ? " (spot interrupted)" : "", "; its cost is closed at now"));
  }
  return OkStatus();
}

void Actuator::Advance(const backends::Observation& obs, const std::vector<providers::Instance>& instances,
                       const Built& built, Timestamp now, ActStats* stats) {
  std::map<std::string, const providers::Instance*> inst_of;
  for (const auto& i : instances) inst_of[i.node] = &i;
  for (const auto& slot : slots_) {
    const auto* on = FindNode(obs, slot.node);
    if (on == nullptr) continue;
    auto it = inst_of.find(slot.node);
    const providers::Instance* inst = it == inst_of.end() ? nullptr : it->second;
    if (inst != nullptr && on->Responding() && AwaitsOpening(*on)) {
      // Joined: open it for jobs.
      Status s = backend_->Undrain(slot.node);
      if (!s.ok()) {
        Fail(stats, StrCat("undrain node ", slot.node), s);
        continue;
      }
      ++stats->undrains;
      auto rec = store_->InstanceByNode(slot.node);
      if (rec.ok() && rec->has_value()) {
        InstanceRecord r = **rec;
        r.state = "ready";
        (void)store_->PutInstance(r);
        log_(StrCat("node ", slot.node, " (pool ", config_.cluster.pools[slot.pool].name, ", instance ", r.id,
                    ") joined ", (now - r.created).count(), " s after it was bought; open for jobs"));
      }
      continue;
    }
    if (inst != nullptr && on->Drained() && on->reason.rfind(kReasonReleasing, 0) == 0 && on->Responding() &&
        !RunsSomething(obs, slot.node)) {
      // Drained by tide and empty on this fresh observation: give it back.
      GiveBack(slot, inst->id, now, stats);
      continue;
    }
    if (inst == nullptr && !on->Responding() && !on->Drained() && !RunsSomething(obs, slot.node)) {
      // No instance behind it: keep Slurm from resuming it for a job by
      // itself (a drained node is never allocated).
      Status s = backend_->Drain(slot.node, std::string(kReasonNotProvisioned));
      if (!s.ok()) {
        Fail(stats, StrCat("drain unprovisioned node ", slot.node), s);
      } else {
        ++stats->drains;
      }
    }
  }

  // Jobs told to checkpoint: requeue once their grace is over.
  auto pending = store_->PendingActions();
  if (!pending.ok()) {
    Fail(stats, "read in-flight actions", pending.status());
    return;
  }
  for (const auto& a : *pending) {
    if (a.kind != "signal") continue;
    const int64_t job_id = SlurmJobId(a.job);
    memory_->stopping.emplace(job_id, a.created);
    const auto* job = FindJob(obs, job_id);
    const StopDetail d = Decode(a.detail);
    if (!Running(job)) {
      (void)store_->FinishAction(a.key, "done", "the job left its nodes after the signal", now);
      memory_->stopping.erase(job_id);
      log_(StrCat("job ", a.job, " ended after its checkpoint signal; nothing to requeue"));
      continue;
    }
    if (now >= d.deadline) FinishStop(a, job, now, stats);
  }
}

void Actuator::FinishStop(const ActionRecord& rec, const backends::ObservedJob* job, Timestamp now, ActStats* stats) {
  const StopDetail d = Decode(rec.detail);
  if (IsProtected(config_, *job)) {
    ++stats->refused;
    (void)store_->FinishAction(rec.key, "abandoned", "the job is protected", now);
    memory_->stopping.erase(job->id);
    log_(StrCat("refused: job ", job->id, " is protected; it is not requeued"));
    return;
  }
  Status s = d.cancel ? backend_->Cancel(job->id) : backend_->Requeue(job->id);
  if (!s.ok()) {
    Fail(stats, StrCat(d.cancel ? "cancel" : "requeue", " job ", job->id), s);
    return;
  }
  d.cancel ? ++stats->cancels : ++stats->requeues;
  // The job was told to checkpoint at `signalled`: what it did after that
  // is lost (a job that never checkpoints loses more; tide cannot see it).
  const double lost = static_cast<double>(std::max<int64_t>(0, (now - d.signalled).count())) * d.gpus;
  (void)store_->AddJobEvent({StrCat(job->id), d.cancel ? "cancelled" : "requeued", now, lost,
                             StrCat("after the checkpoint signal at ", FormatTimestamp(d.signalled))});
  (void)store_->FinishAction(rec.key, "done", rec.detail, now);
  memory_->stopping.erase(job->id);
  memory_->requeued_by_tide.insert(job->id);
  for (size_t i = 0; i < job->nodes.size(); ++i) memory_->disruptions.push_back(now);
  log_(StrCat(d.cancel ? "cancelled" : "requeued", " job ", job->id, " on ", StrJoin(job->nodes, ","),
              " (grace over; lost work ", static_cast<int64_t>(lost), " GPU-seconds)"));
}

void Actuator::Apply(const autoscale::ScalingPlan& plan, const Built& built, const backends::Observation& obs,
                     Timestamp now, ActStats* stats) {
  taken_.clear();
  for (const auto& a : plan.actions) {
    switch (a.kind) {
      case autoscale::ActionKind::kScaleUp:
        ScaleUp(a, built, now, stats);
        break;
      case autoscale::ActionKind::kRelease:
      case autoscale::ActionKind::kDrain:
        Release(a, built, obs, now, stats);
        break;
      case autoscale::ActionKind::kPreempt:
      case autoscale::ActionKind::kReclaim:
      case autoscale::ActionKind::kEvacuate:
        Stop(a, built, now, stats);
        break;
      case autoscale::ActionKind::kConsolidate:
        // Moving jobs off a node pays only if the node is then given back:
        // the plan's kDrain of it must have been carried out.
        if (Releasing(a, built)) {
          Stop(a, built, now, stats);
        } else {
          ++stats->refused;
          log_(StrCat("refused: consolidate jobs ", JobList(a.jobs), ": their node is not being released"));
        }
        break;
      case autoscale::ActionKind::kResize:
        log_(StrCat("not carried out: resize job ", a.jobs.empty() ? 0 : a.jobs[0], " to ", a.resize.workers,
                    " workers (Slurm cannot resize a running job in place)"));
        break;
      default:
        break;  // reports only; the controller logs them
    }
  }
}

void Actuator::ScaleUp(const autoscale::Action& a, const Built& built, Timestamp now, ActStats* stats) {
  if (a.pool < 0 || a.pool >= static_cast<int>(built.free_slots.size())) return;
  const auto& pool = config_.cluster.pools[a.pool];
  int bought = 0;
  for (size_t k : built.free_slots[a.pool]) {
    if (bought >= a.count) break;
    if (!taken_.insert(k).second) continue;
    const Slot& slot = slots_[k];
    const std::string key = StrCat("create-", slot.node, "-", ToUnixSeconds(now), "-", ++seq_);
    Status begun = store_->BeginAction({key, "create", slot.node, "", pool.name, "pending", now, now, a.reason});
    if (!begun.ok()) {
      Fail(stats, StrCat("record the create of node ", slot.node), begun);
      return;  // never buy what is not recorded first
    }
    providers::CreateRequest req;
    req.pool = pool.name;
    req.node = slot.node;
    req.instance_type = pool.type.name;
    req.tier = std::string(model::TierName(pool.tier));
    req.region = pool.region;
    req.idempotency_key = key;
    req.boot_delay = pool.boot_delay.Expected();
    auto inst = provider_->Create(req, now);
    if (!inst.ok()) {
      (void)store_->FinishAction(key, "failed", std::string(Message(inst.status())), now);
      memory_->pool_unavailable.emplace(a.pool, now);
      Fail(stats, StrCat("create node ", slot.node, " in pool ", pool.name), inst.status());
      return;
    }
    if (fault_ == "kill-after-create") {
      log_(StrCat("fault injection: SIGKILL after the create of node ", slot.node, " (key ", key, ")"));
      raise(SIGKILL);
    }
    memory_->pool_unavailable.erase(a.pool);
    InstanceRecord r;
    r.id = inst->id;
    r.node = slot.node;
    r.pool = pool.name;
    r.tier = pool.tier;
    r.price_per_hour = pool.price_per_hour;
    r.idempotency_key = key;
    r.created = now;
    r.state = "booting";
    Status committed = store_->CommitCreate(key, r, now);
    if (!committed.ok()) Fail(stats, StrCat("record instance ", inst->id, " of node ", slot.node), committed);
    ++stats->creates;
    ++bought;
    log_(StrCat("bought node ", slot.node, " (pool ", pool.name, ", ", req.tier, ", instance ", inst->id, ", key ", key,
                ") for jobs ", JobList(a.jobs), ": ", a.reason));
  }
  if (bought < a.count) {
    log_(StrCat("pool ", pool.name, " has no free Slurm node left: bought ", bought, " of ", a.count));
  }
}

void Actuator::Release(const autoscale::Action& a, const Built& built, const backends::Observation& obs, Timestamp now,
                       ActStats* stats) {
  for (model::NodeId id : a.nodes) {
    auto it = built.nodes.find(id);
    if (it == built.nodes.end()) continue;
    const Slot& slot = slots_[it->second];
    auto rec = store_->InstanceByNode(slot.node);
    if (!rec.ok() || !rec->has_value()) {
      ++stats->refused;
      log_(StrCat("refused: release node ", slot.node, ": tide did not buy it (no instance on record)"));
      continue;
    }
    if (a.kind == autoscale::ActionKind::kRelease && RunsSomething(obs, slot.node)) {
      ++stats->refused;
      log_(StrCat("refused: release node ", slot.node, ": it runs a job now"));
      continue;
    }
    const auto* on = FindNode(obs, slot.node);
    if (on != nullptr && on->Drained() && on->reason.rfind(kReasonReleasing, 0) == 0) continue;  // already
    Status s = backend_->Drain(slot.node, ShortReason(kReasonReleasing, a.reason));
    if (!s.ok()) {
      Fail(stats, StrCat("drain node ", slot.node), s);
      continue;
    }
    ++stats->drains;
    if (a.kind == autoscale::ActionKind::kRelease && (**rec).state == "booting" && on != nullptr &&
        !on->Responding()) {
      // Its slurmd has not joined, nothing runs on it, and nothing can start
      // on it once drained: give it back now rather than pay for the rest of
      // its boot.
      log_(StrCat("releasing node ", slot.node, " while it boots: ", a.reason));
      GiveBack(slot, (**rec).id, now, stats);
      continue;
    }
    InstanceRecord r = **rec;
    r.state = "releasing";
    (void)store_->PutInstance(r);
    log_(StrCat("draining node ", slot.node, " to release it: ", a.reason));
  }
}

void Actuator::GiveBack(const Slot& slot, const std::string& instance, Timestamp now, ActStats* stats) {
  const std::string key = StrCat("delete-", instance);
  auto begun = store_->BeginAction(
      {key, "delete", slot.node, "", config_.cluster.pools[slot.pool].name, "pending", now, now, instance});
  if (!begun.ok() && !absl::IsAlreadyExists(begun)) {
    Fail(stats, StrCat("record the delete of node ", slot.node), begun);
    return;
  }
  Status pd = backend_->PowerDown(slot.node);
  if (!pd.ok()) log_(StrCat("note: power down of node ", slot.node, " in Slurm failed (", Message(pd),
                            "); the instance is deleted anyway, the node stays drained"));
  Status s = provider_->Delete(instance, key, now);
  if (!s.ok()) {
    Fail(stats, StrCat("delete instance ", instance, " (node ", slot.node, ")"), s);
    return;
  }
  (void)store_->MarkInstanceDeleted(instance, now, "deleted");
  (void)store_->FinishAction(key, "done", instance, now);
  memory_->idle_since.erase(slot.node);
  ++stats->deletes;
  log_(StrCat("released node ", slot.node, " (instance ", instance, ", pool ", config_.cluster.pools[slot.pool].name,
              ")"));
}

bool Actuator::Releasing(const autoscale::Action& a, const Built& built) {
  if (a.nodes.empty()) return false;
  for (model::NodeId id : a.nodes) {
    auto it = built.nodes.find(id);
    if (it == built.nodes.end()) return false;
    auto rec = store_->InstanceByNode(slots_[it->second].node);
    if (!rec.ok() || !rec->has_value() || (**rec).state != "releasing") return false;
  }
  return true;
}

void Actuator::Stop(const autoscale::Action& a, const Built& built, Timestamp now, ActStats* stats) {
  const bool evacuate = a.kind == autoscale::ActionKind::kEvacuate;
  for (model::JobId id : a.jobs) {
    auto it = built.jobs.find(id);
    if (it == built.jobs.end()) continue;
    const backends::ObservedJob& job = *it->second;
    if (IsProtected(config_, job)) {
      ++stats->refused;
      log_(StrCat("refused: ", autoscale::ActionKindName(a.kind), " job ", id, ": it is protected"));
      continue;
    }
    if (memory_->stopping.count(id) || !Running(&job)) continue;
    StopDetail d;
    d.cancel = a.cancel;
    d.signalled = now;
    d.gpus = job.gpus;
    Duration grace = config_.live.jobs.checkpoint_grace;
    if (evacuate) {
      // Requeue before the provider takes the node.
      for (const auto& n : built.state.nodes) {
        if (n.interrupt_at != kInfiniteFuture && std::find(job.nodes.begin(), job.nodes.end(), n.name) != job.nodes.end()) {
          grace = std::min(grace, std::max(Duration{0}, n.interrupt_at - now - Seconds(5)));
        }
      }
    }
    d.deadline = now + grace;
    const std::string key = StrCat("stop-", id, "-", job.restarts);
    Status begun = store_->BeginAction({key, "signal", "", StrCat(id), "", "pending", now, now, Encode(d)});
    if (absl::IsAlreadyExists(begun)) continue;
    if (!begun.ok()) {
      Fail(stats, StrCat("record the stop of job ", id), begun);
      continue;
    }
    if (evacuate) {
      for (const auto& n : job.nodes) {
        Status s = backend_->Drain(n, std::string(kReasonInterruption));
        if (!s.ok()) Fail(stats, StrCat("drain node ", n, " under interruption notice"), s);
      }
    }
    Status s = backend_->Signal(id, config_.live.jobs.checkpoint_signal);
    if (!s.ok()) {
      (void)store_->FinishAction(key, "failed", std::string(Message(s)), now);
      Fail(stats, StrCat("checkpoint signal to job ", id), s);
      continue;
    }
    ++stats->signals;
    memory_->stopping[id] = now;
    (void)store_->AddJobEvent({StrCat(id), "signalled", now, 0, a.reason});
    log_(StrCat("sent ", config_.live.jobs.checkpoint_signal, " to job ", id, " on ", StrJoin(job.nodes, ","), " (",
                autoscale::ActionKindName(a.kind), "; ", d.cancel ? "cancel" : "requeue", " in ", grace.count(),
                " s): ", a.reason));
  }
}

}  // namespace tide::controller
