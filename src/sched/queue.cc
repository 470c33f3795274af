#include "sched/queue.h"

#include <algorithm>

namespace tide::sched {
namespace {

// A job's place in the queue: higher priority first, then earlier
// submission, then lower id.
struct QueueKey {
  int priority;
  Timestamp submit;
  model::JobId id;
  const model::Job* job;

  explicit QueueKey(const model::Job& j) : priority(j.priority), submit(j.spec.submit), id(j.id), job(&j) {}
  bool operator<(const QueueKey& o) const {
    if (priority != o.priority) return priority > o.priority;
    if (submit != o.submit) return submit < o.submit;
    return id < o.id;
  }
};

}  // namespace

bool QueueBefore(const model::Job& a, const model::Job& b) { return QueueKey(a) < QueueKey(b); }

std::vector<const model::Job*> PendingInQueueOrder(const model::ClusterState& state,
                                                   std::vector<const model::Job*>* active) {
  // Sorted by a copy of each job's key, so that comparisons stay in one
  // array rather than chase pointers into jobs: a long queue is sorted on
  // every scheduling pass.
  std::vector<QueueKey> keys;
  if (active != nullptr) active->clear();
  for (const auto& j : state.jobs) {
    if (j.state == model::JobState::kPending) {
      keys.emplace_back(j);
    } else if (active != nullptr && j.state != model::JobState::kCompleted) {
      active->push_back(&j);
    }
  }
  if (!std::is_sorted(keys.begin(), keys.end())) std::sort(keys.begin(), keys.end());
  std::vector<const model::Job*> out;
  out.reserve(keys.size());
  for (const QueueKey& k : keys) out.push_back(k.job);
  return out;
}

}  // namespace tide::sched
