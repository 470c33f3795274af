#include "controller/explain.h"

#include <algorithm>

#include "core/strings.h"

namespace tide::controller {
namespace {

std::string Gang(const model::Job& j) {
  const int w = j.spec.workers;
  return w == 1 ? std::string("job") : StrCat("gang ", w, "/", w);
}

// "in about 3m", "within a minute", "any moment now": whole minutes, so that
// the sentence (and what the manager is told) changes at most once a minute.
std::string ReadyIn(Duration d) {
  if (d <= Seconds(0)) return "any moment now";
  if (d < Minutes(1)) return "within a minute";
  return StrCat("in about ", FormatDuration(Minutes((d.count() + 30) / 60)));
}

}  // namespace

std::map<model::JobId, std::string> WhyWaiting(const model::ClusterSpec& spec, const model::ClusterState& state,
                                               const autoscale::ScalingPlan& plan, Timestamp now) {
  std::map<model::JobId, const model::Job*> pending;
  for (const auto& j : state.jobs) {
    if (j.state == model::JobState::kPending) pending[j.id] = &j;
  }
  std::map<model::JobId, std::string> out;
  for (const auto& a : plan.actions) {
    for (model::JobId id : a.jobs) {
      auto it = pending.find(id);
      if (it == pending.end() || out.count(id) > 0) continue;
      const model::Job& j = *it->second;
      if (a.kind == autoscale::ActionKind::kScaleUp && a.pool >= 0 && a.pool < static_cast<int>(spec.pools.size())) {
        const model::NodePool& p = spec.pools[static_cast<size_t>(a.pool)];
        const size_t others = a.jobs.size() - 1;
        out[id] = StrCat(Gang(j), " waits for nodes of pool ", p.name, ": ", a.count, " bought now",
                         others == 0 ? std::string() : StrCat(" for it and ", others, others == 1 ? " other job" : " other jobs"),
                         ", ready ", ReadyIn(p.boot_delay.Expected()));
      } else if (a.kind == autoscale::ActionKind::kAtMax) {
        out[id] = StrCat(Gang(j), " waits: ", a.cause.empty() ? a.reason : a.cause);
      } else if (a.kind == autoscale::ActionKind::kUnschedulable) {
        out[id] = StrCat(Gang(j), " cannot run on any pool: ", a.reason);
      }
    }
  }
  std::map<model::NodeId, const model::Node*> nodes;
  for (const auto& n : state.nodes) nodes[n.id] = &n;
  for (const auto& c : plan.covered) {
    auto it = pending.find(c.job);
    if (it == pending.end() || out.count(c.job) > 0) continue;
    // The latest of its nodes to be ready; a node this plan buys (negative
    // id) is named by the scale-up above, so only existing ones count here.
    Timestamp ready = now;
    std::string pool;
    bool booting = false;
    for (const auto& s : c.shares) {
      auto n = nodes.find(s.node);
      if (n == nodes.end() || n->second->state != model::NodeState::kProvisioning) continue;
      booting = true;
      ready = std::max(ready, n->second->ready_at);
      pool = spec.pools[static_cast<size_t>(n->second->pool)].name;
    }
    out[c.job] = booting ? StrCat(Gang(*it->second), " waits for nodes of pool ", pool, ", booting, ready ",
                                  ReadyIn(ready - now))
                         : StrCat(Gang(*it->second), " fits on capacity there is; waiting for its turn");
  }
  for (const auto& [id, j] : pending) {
    if (out.count(id) == 0) out[id] = StrCat(Gang(*j), " waits in the queue (priority order, or the scale-up grace)");
  }
  return out;
}

}  // namespace tide::controller
