#include "sim/sim_apply.h"

#include <algorithm>

#include "core/strings.h"

namespace tide::sim {

using autoscale::ActionKind;

std::string SimView::JobKey(const model::Job& job) const { return StrCat(job.id); }

void SimListener::Before(const autoscale::Action& a, Timestamp now) {
  switch (a.kind) {
    case ActionKind::kScaleUp:
      break;  // said after, with what the provider created
    case ActionKind::kRelease:
    case ActionKind::kDrain: {
      if (!recorder_->logging()) break;
      std::vector<std::string> names;
      for (auto id : a.nodes) {
        if (const model::Node* n = sim_->PeekNode(id)) names.push_back(n->name);
      }
      if (a.kind == ActionKind::kRelease) {
        recorder_->Log(now, "release",
                       StrCat(sim_->spec->pools[static_cast<size_t>(a.pool)].name, " -", a.nodes.size(), " [",
                              StrJoin(names, " "), "]: ", a.reason));
      } else {
        recorder_->Log(now, "drain", StrCat("[", StrJoin(names, " "), "]: ", a.reason));
      }
      break;
    }
    case ActionKind::kPreempt:
    case ActionKind::kReclaim:
    case ActionKind::kEvacuate:
    case ActionKind::kConsolidate:
    case ActionKind::kResize:
      recorder_->Log(now, autoscale::ActionKindName(a.kind), a.reason);
      break;
    case ActionKind::kUnschedulable:
    case ActionKind::kAtMax:
    case ActionKind::kNote:
      break;  // after the bottleneck mark, as a report
  }
}

void SimListener::After(const autoscale::Action& a, const apply::Outcome& o, Timestamp now) {
  switch (a.kind) {
    case ActionKind::kScaleUp: {
      PolicyResult& r = sim_->result;
      r.spare_nodes += std::min(a.spares, o.created);
      r.nodes_create_failed += a.count - o.created;
      recorder_->Log(now, "scale-up",
                     StrCat(sim_->spec->pools[static_cast<size_t>(a.pool)].name, " +", a.count, ": ", a.reason,
                            o.created < a.count ? StrCat(" [the provider created ", o.created, ": no spot capacity]")
                                                : ""));
      bought_ = o.created > 0;
      changed_ = true;
      break;
    }
    case ActionKind::kRelease:
    case ActionKind::kDrain:
    case ActionKind::kPreempt:
    case ActionKind::kReclaim:
    case ActionKind::kEvacuate:
    case ActionKind::kConsolidate:
      changed_ = true;
      break;
    case ActionKind::kResize:
      changed_ = true;
      freed_ |= !a.resize.remove.empty();
      break;
    case ActionKind::kUnschedulable:
    case ActionKind::kAtMax:
    case ActionKind::kNote:
      recorder_->Report(a, now);
      break;
  }
}

void SimListener::Log(std::string_view line) {
  if (refusal_.empty() && line.rfind("refused: ", 0) == 0) refusal_ = std::string(line);
}

void SimListener::Disrupted(int nodes, Timestamp now) {
  auto& recent = sim_->state.recent_disruptions;
  for (int i = 0; i < nodes; ++i) {
    recent.push_back(now);
    ++sim_->result.disruptions;
    // Keep what the disruption budget looks back over: every pass reads them all.
    const Timestamp horizon = now - std::max(budget_window_, Seconds(1));
    recent.erase(recent.begin(), std::find_if(recent.begin(), recent.end(), [&](Timestamp t) { return t >= horizon; }));
  }
}

void SimListener::Bottleneck(model::JobId job, const std::string& key) {
  if (model::Job* j = sim_->FindJob(job)) j->bottleneck = true;
  changed_ = true;
}

}  // namespace tide::sim
