#include "sched/queue.h"

#include <algorithm>

namespace tide::sched {

bool QueueBefore(const model::Job& a, const model::Job& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.spec.submit != b.spec.submit) return a.spec.submit < b.spec.submit;
  return a.id < b.id;
}

std::vector<const model::Job*> PendingInQueueOrder(const model::ClusterState& state) {
  std::vector<const model::Job*> out;
  for (const auto& j : state.jobs) {
    if (j.state == model::JobState::kPending) out.push_back(&j);
  }
  std::sort(out.begin(), out.end(), [](const model::Job* a, const model::Job* b) { return QueueBefore(*a, *b); });
  return out;
}

}  // namespace tide::sched
