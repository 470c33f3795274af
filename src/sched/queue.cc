#include "sched/queue.h"

#include <algorithm>

namespace tide::sched {

bool QueueBefore(const model::Job& a, const model::Job& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.spec.submit != b.spec.submit) return a.spec.submit < b.spec.submit;
  return a.id < b.id;
}

std::vector<const model::Job*> PendingInQueueOrder(const model::ClusterState& state) {
  // Sorted by a copy of each job's key, so that comparisons stay in one
  // array rather than chase pointers into jobs: a long queue is sorted on
  // every scheduling pass.
  struct Key {
    int priority;
    Timestamp submit;
    model::JobId id;
    const model::Job* job;
  };
  std::vector<Key> keys;
  for (const auto& j : state.jobs) {
    if (j.state == model::JobState::kPending) keys.push_back({j.priority, j.spec.submit, j.id, &j});
  }
  auto before = [](const Key& a, const Key& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.submit != b.submit) return a.submit < b.submit;
    return a.id < b.id;
  };
  if (!std::is_sorted(keys.begin(), keys.end(), before)) std::sort(keys.begin(), keys.end(), before);
  std::vector<const model::Job*> out;
  out.reserve(keys.size());
  for (const Key& k : keys) out.push_back(k.job);
  return out;
}

}  // namespace tide::sched
