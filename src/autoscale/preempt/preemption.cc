#include "autoscale/preempt/preemption.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "absl/container/flat_hash_map.h"

#include "core/strings.h"
#include "sched/eligibility.h"

namespace tide::autoscale {

using model::Job;
using model::JobState;

void Preemption::Evaluate(PassContext* ctx, const std::vector<bool>& blocked, ScalingPlan* plan) const {
  if (!o_.enabled || ctx->demands.empty()) return;
  sched::CapacitySnapshot& snap = ctx->Snap();
  // Every job that may ever be a victim, in the order victims are chosen:
  // least work lost, then lowest priority, fewest GPUs, lowest id. Each
  // waiting job below takes the ones it may preempt from this list, so the
  // pass scans the running jobs once rather than once per waiting job.
  // Each candidate carries what every waiting job asks of it (its priority
  // and the pools its GPUs are in), so that the scan per waiting job stays
  // in this array instead of reading each job and looking up its nodes.
  struct Candidate {
    const Job* job;
    double unsaved;
    int priority;
    sched::PoolMask pools;  // pools of the what-if's nodes it runs on
  };
  // A victim has a lower priority than a waiting job that may preempt now
  // (below): a job of no lower priority than all of them is never read.
  int top = std::numeric_limits<int>::min();
  for (size_t i = 0; i < ctx->demands.size(); ++i) {
    const Demand& d = ctx->demands[i];
    const bool may = o_.before_buying || (i < blocked.size() && blocked[i]);
    if (may && ctx->now >= d.submit + o_.after) top = std::max(top, d.priority);
  }
  std::vector<Candidate> all;
  // No waiting job may preempt now: no running job is read (nor listed).
  if (top != std::numeric_limits<int>::min()) {
    for (const Job* jp : ctx->active()) {
      const Job& j = *jp;
      if (j.priority >= top) continue;
      if (j.state != JobState::kRunning || !j.spec.preemptible || j.spec.is_protected || j.spec.slice_units > 0) {
        continue;  // a slice rarely frees a whole GPU
      }
      // The what-if already counts a freeing job's GPUs as free.
      if (ctx->Freeing(j)) continue;
      sched::PoolMask pools = 0;
      for (const auto& sh : j.alloc) {
        if (const int slot = ctx->SlotOf(sh.node); slot >= 0) pools |= sched::PoolBit(snap.pool(slot));
      }
      if (pools == 0) continue;
      all.push_back({&j, model::UnsavedWorkOf(ctx->state, j, ctx->now), j.priority, pools});
    }
  }
  std::sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
    if (a.unsaved != b.unsaved) return a.unsaved < b.unsaved;
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.job->spec.gpus() != b.job->spec.gpus()) return a.job->spec.gpus() < b.job->spec.gpus();
    return a.job->id < b.job->id;
  });
  // Waiting jobs that even every candidate could not make room for, by
  // (pools, GPUs per worker, priority): the fewest workers that failed. A
  // job of the same shape asking for at least as many fails too, until a
  // preemption changes the what-if.
  absl::flat_hash_map<std::tuple<sched::PoolMask, int, int>, int> hopeless;
  // The demands it does not serve stay, in order, compacted in place.
  size_t left = 0;
  for (size_t i = 0; i < ctx->demands.size(); ++i) {
    const Demand& d = ctx->demands[i];
    const Job& job = *d.job;
    const bool may = o_.before_buying || (i < blocked.size() && blocked[i]);
    if (!may) {
      ctx->demands[left++] = d;
      continue;
    }
    const Timestamp due = d.submit + o_.after;
    if (ctx->now < due) {
      plan->next_wakeup = std::min(plan->next_wakeup, due);
      ctx->demands[left++] = d;
      continue;
    }
    const auto shape = std::make_tuple(d.pools, d.gpus_per_worker, d.priority);
    if (auto h = hopeless.find(shape); h != hopeless.end() && d.min_workers >= h->second) {
      ctx->demands[left++] = d;
      continue;
    }
    // Candidates: lower priority, not already counted free, running on nodes it may use.
    std::vector<Candidate> candidates;
    for (const auto& c : all) {
      if (c.priority >= d.priority || !(c.pools & d.pools) || ctx->touched.contains(c.job->id)) continue;
      candidates.push_back(c);
    }
    const int g = d.gpus_per_worker, w = d.min_workers;
    auto give = [&](const Job* v, int sign) {
      for (const auto& sh : v->alloc) {
        if (const int slot = ctx->SlotOf(sh.node); slot >= 0) {
          const int gpus = sh.workers * v->spec.gpus_per_worker;
          if (sign > 0) {
            snap.Give(slot, gpus);
          } else {
            snap.Take(slot, gpus);
          }
        }
      }
    };
    sched::CapacitySnapshot::Fork fork(&snap);
    std::vector<const Job*> victims;
    for (const auto& c : candidates) {
      if (snap.Slots(d.pools, g) >= w) break;
      give(c.job, +1);
      victims.push_back(c.job);
    }
    if (snap.Slots(d.pools, g) < w) {
      ctx->demands[left++] = d;  // even every candidate would not make room
      auto [h, fresh] = hopeless.try_emplace(shape, w);
      if (!fresh) h->second = std::min(h->second, w);
      continue;
    }
    // Drop victims that turned out not to be needed, most lost work first.
    for (size_t k = victims.size(); k-- > 0;) {
      give(victims[k], -1);
      if (snap.Slots(d.pools, g) >= w) {
        victims.erase(victims.begin() + static_cast<long>(k));
      } else {
        give(victims[k], +1);
      }
    }
    absl::flat_hash_set<model::NodeId> nodes;
    for (const Job* v : victims) {
      for (const auto& sh : v->alloc) nodes.insert(sh.node);
    }
    if (static_cast<int>(nodes.size()) > ctx->disruption_allowance) {
      // Look again later only if the budget could ever allow it.
      if (static_cast<int>(nodes.size()) <= ctx->disruption_max) ctx->budget_blocked = true;
      Action note;
      note.kind = ActionKind::kNote;
      note.jobs.push_back(job.id);
      note.reason = StrCat("job ", job.spec.name, " would preempt ", victims.size(), " jobs on ", nodes.size(),
                           " nodes; the disruption budget allows ", ctx->disruption_allowance, " now");
      plan->actions.push_back(std::move(note));
      ctx->demands[left++] = d;
      continue;
    }
    // Commit: the head takes the freed GPUs in the what-if.
    std::vector<sched::SlotShare> shares;
    snap.PlacePreferring(sched::PlacementPreference(ctx->spec, job.spec, d.pools), g, w, &shares);
    fork.Commit();
    hopeless.clear();  // the what-if changed
    for (const auto& s : shares) ctx->NeedSlot(s.slot);
    ctx->disruption_allowance -= static_cast<int>(nodes.size());
    Action a;
    a.kind = ActionKind::kPreempt;
    std::vector<std::string> names;
    double lost = 0;
    for (const Job* v : victims) {
      a.jobs.push_back(v->id);
      ctx->touched.insert(v->id);
      const double unsaved = model::UnsavedWorkOf(ctx->state, *v, ctx->now);
      names.push_back(StrCat(v->spec.name, " (", static_cast<int64_t>(unsaved), "s unsaved)"));
      lost += unsaved;
    }
    a.reason = StrCat("for ", job.spec.name, " (priority ", job.priority, ", waited ",
                      FormatDuration(ctx->now - job.spec.submit), ", no pool has room): checkpoint and requeue ",
                      StrJoin(names, ", "), "; chosen to lose the least work");
    plan->actions.push_back(std::move(a));
    plan->covered.emplace_back().job = job.id;
  }
  ctx->demands.resize(left);
}

}  // namespace tide::autoscale
