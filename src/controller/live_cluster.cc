#include "controller/live_cluster.h"

#include <signal.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/strings.h"

namespace tide::controller {

LiveView::LiveView(const Built* built, Store* store) : built_(built), store_(store) {
  for (size_t i = 0; i < built->state.jobs.size(); ++i) jobs_[built->state.jobs[i].id] = i;
  for (size_t i = 0; i < built->state.nodes.size(); ++i) nodes_[built->state.nodes[i].id] = i;
}

const model::Job* LiveView::FindJob(model::JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &built_->state.jobs[it->second];
}

const model::Node* LiveView::FindNode(model::NodeId id) const {
  auto it = nodes_.find(id);
  return it == nodes_.end() ? nullptr : &built_->state.nodes[it->second];
}

std::string LiveView::JobKey(const model::Job& job) const {
  auto it = built_->jobs.find(job.id);
  return it == built_->jobs.end() ? StrCat(job.id) : it->second->key;
}

std::vector<std::string> LiveView::NodesOf(const model::Job& job) const {
  auto it = built_->jobs.find(job.id);
  return it == built_->jobs.end() ? apply::View::NodesOf(job) : it->second->nodes;
}

std::string LiveView::InstanceOf(const model::Node& node) const {
  auto rec = store_->InstanceByNode(node.name);
  if (!rec.ok() || !rec->has_value()) return std::string();
  return (**rec).id;
}

bool LiveView::Releasing(const model::Node& node) const {
  if (auto it = built_->nodes.find(node.id); it != built_->nodes.end() && backends::IsReleaseCordon(it->second->cordon)) {
    return true;
  }
  auto rec = store_->InstanceByNode(node.name);
  return rec.ok() && rec->has_value() && (**rec).state == "releasing";
}

std::optional<bool> LiveView::EmptyNow(const model::Node& node) const {
  auto it = built_->nodes.find(node.id);
  // A node the manager does not list yet, or one that does not answer: no
  // work can start on it.
  if (it == built_->nodes.end() || !it->second->Answering()) return true;
  return std::nullopt;
}

std::vector<std::string> LiveView::TakenNames() const {
  std::vector<std::string> out;
  for (const auto& [name, inst] : built_->instance_of) out.push_back(name);
  return out;
}

void LiveListener::CreateFailed(int pool, const Status& s, Timestamp now) {
  memory_->pool_unavailable.emplace(pool, now);
  if (absl::IsDeadlineExceeded(s)) {
    log_("note: that create ran out of time: whether the provider bought the node is unknown, so it stays pending; "
         "the next loop adopts the instance if the provider lists its key, and abandons the create if not");
  }
}

void LiveListener::Created(int pool, const std::string& node, const std::string& key, Timestamp now) {
  if (fault_ == "kill-after-create") {
    log_(StrCat("fault injection: SIGKILL after the create of node ", node, " (key ", key, ")"));
    raise(SIGKILL);
  }
  memory_->pool_unavailable.erase(pool);
}

void LiveListener::Disrupted(int nodes, Timestamp now) {
  for (int i = 0; i < nodes; ++i) memory_->disruptions.push_back(now);
}

void LiveListener::Stopped(const model::Job& job, const std::string& key, backends::Cause cause, bool cancel,
                           Timestamp now) {
  memory_->stopping[key] = now;
  if (cause == backends::Cause::kIdleReclaim) ++memory_->reclaims[key];
}

void LiveListener::StopFinished(const apply::PendingStop& stop, std::string_view outcome, Timestamp now) {
  memory_->stopping.erase(stop.job);
  if (outcome == "requeued" || outcome == "cancelled") memory_->requeued_by_tide.insert(stop.job);
}

void LiveListener::GaveBack(const std::string& node, Timestamp now) {
  memory_->idle_since.erase(node);
  if (noticed_.count(node) && store_ != nullptr) {
    Status s = store_->AddCounter("spot_interruptions", 1);
    if (!s.ok()) log_(StrCat("error: store: ", Message(s)));
  }
}

void LiveListener::Bottleneck(model::JobId job, const std::string& key) {
  if (!key.empty()) memory_->bottlenecks.insert(key);
}

namespace {

void Fail(apply::ApplyStats* stats, const LogFn& log, const std::string& what, const Status& s) {
  ++stats->errors;
  const std::string line = StrCat(what, ": ", Message(s));
  stats->problems.push_back(line);
  log(StrCat("error: ", line));
}

}  // namespace

void Advance(const config::Config& config, const backends::Observation& obs, const Built& built,
             backends::WorkloadManager* manager, apply::Applier* applier, Store* store,
             const std::vector<apply::PendingStop>& pending, Timestamp now, apply::ApplyStats* stats,
             const LogFn& log) {
  std::set<std::string> holding;
  for (const auto& j : obs.jobs) {
    if (backends::HoldsNodes(j.phase)) holding.insert(j.nodes.begin(), j.nodes.end());
  }
  const bool fixed_names = manager->capabilities().fixed_node_names;
  for (const auto& on : obs.nodes) {
    if (on.pool < 0) continue;
    const bool runs = on.busy || on.gpus_used > 0 || holding.count(on.name) > 0;
    auto it = built.instance_of.find(on.name);
    const providers::Instance* inst = it == built.instance_of.end() ? nullptr : it->second;
    if (inst != nullptr && on.Answering() && on.cordon == backends::Cause::kNotBought) {
      // Joined: open it for jobs.
      Status s = manager->Uncordon(on.name);
      if (!s.ok()) {
        Fail(stats, log, StrCat("uncordon node ", on.name), s);
        continue;
      }
      ++stats->uncordons;
      auto rec = store->InstanceByNode(on.name);
      if (rec.ok() && rec->has_value()) {
        InstanceRecord r = **rec;
        r.state = "ready";
        (void)store->PutInstance(r);
        log(StrCat("node ", on.name, " (pool ", config.cluster.pools[static_cast<size_t>(on.pool)].name, ", instance ",
                   r.id, ") joined ", (now - r.created).count(), " s after it was bought; open for jobs"));
      }
      continue;
    }
    if (inst != nullptr && backends::IsReleaseCordon(on.cordon) && on.Answering() && !runs) {
      // Cordoned by tide and empty on this fresh observation: give it back.
      (void)applier->GiveBack(on.name, inst->id, on.pool, now, stats);
      continue;
    }
    if (fixed_names && inst == nullptr && on.condition == backends::NodeCondition::kBooting && !runs &&
        on.cordon != backends::Cause::kOther) {
      // The manager is bringing up a node tide bought no machine for (Slurm's
      // power saving powers up a node tide gave back when it picks it for a
      // job, before tide cordons it again). Nothing will ever boot there, and
      // the manager would wait out its own resume timeout: hand it back now,
      // so that it is free to be bought again. A node someone else drained is
      // theirs, as everywhere else. Found by the crash soak.
      Status s = manager->RemoveNode(on.name);
      if (!s.ok()) {
        Fail(stats, log, StrCat("power down node ", on.name, " that has no machine"), s);
      } else {
        log(StrCat("node ", on.name, " was being brought up by the workload manager with no machine behind it; "
                   "handed back"));
      }
      continue;
    }
    if (fixed_names && inst == nullptr && !on.Answering() && on.cordon == backends::Cause::kNone && !runs) {
      // No machine behind it: keep the manager from starting work on it by
      // itself (a cordoned node is never given work).
      Status s = manager->Cordon(on.name, {backends::Cause::kNotBought, ""});
      if (!s.ok()) {
        Fail(stats, log, StrCat("cordon node ", on.name, " that has no machine"), s);
      } else {
        ++stats->cordons;
      }
    }
  }
  // A job the manager started by itself on nodes with no machine behind them
  // (Slurm's power saving allocates a powered-down node, one tide gave back,
  // in the moment before tide cordons it again) would wait for a boot that
  // nobody starts. It has not run, so nothing is lost: cordon those nodes,
  // then requeue it, and it is demand again.
  if (fixed_names) {
    std::map<std::string, const backends::ObservedNode*> node_by_name;
    for (const auto& on : obs.nodes) node_by_name[on.name] = &on;
    for (const auto& j : obs.jobs) {
      if (j.phase != backends::JobPhase::kStarting) continue;
      std::vector<std::string> orphaned;
      for (const auto& name : j.nodes) {
        auto n = node_by_name.find(name);
        if (n == node_by_name.end() || n->second->pool < 0 || n->second->Answering()) continue;
        if (!built.instance_of.contains(name)) orphaned.push_back(name);
      }
      if (orphaned.empty()) continue;
      bool cordoned = true;
      for (const auto& name : orphaned) {
        if (node_by_name[name]->cordon != backends::Cause::kNone) continue;
        Status s = manager->Cordon(name, {backends::Cause::kNotBought, ""});
        if (!s.ok()) {
          Fail(stats, log, StrCat("cordon node ", name, " that has no machine"), s);
          cordoned = false;
        } else {
          ++stats->cordons;
        }
      }
      if (!cordoned) continue;  // requeued onto the same node it would be started on again
      Status s = manager->Requeue(j.key);
      if (!s.ok()) {
        Fail(stats, log, StrCat("requeue job ", j.key), s);
        continue;
      }
      ++stats->requeues;
      log(StrCat("job ", j.key, " was started by the workload manager on ", StrJoin(orphaned, ", "),
                 ", which no machine is behind (tide gave ", orphaned.size() == 1 ? "it" : "them",
                 " back); cordoned, and the job requeued before it ran"));
    }
  }
  // Stops begun with a checkpoint signal: finished once the grace is over.
  std::map<std::string, const backends::ObservedJob*> running;
  for (const auto& j : obs.jobs) {
    if (j.phase == backends::JobPhase::kRunning || j.phase == backends::JobPhase::kStarting) running[j.key] = &j;
  }
  applier->FinishStops(
      pending,
      [&](const std::string& key) -> const model::Job* {
        if (!running.count(key)) return nullptr;
        auto id = built.job_of_key.find(key);
        if (id == built.job_of_key.end()) return nullptr;
        for (const auto& j : built.state.jobs) {
          if (j.id == id->second) return &j;
        }
        return nullptr;
      },
      [&](const model::Job& job) {
        auto it = built.jobs.find(job.id);
        return it == built.jobs.end() ? std::vector<std::string>() : it->second->nodes;
      },
      now, stats);
}

}  // namespace tide::controller
