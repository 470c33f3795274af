// Queue order: higher priority first, then earlier submission, then lower id.
#ifndef TIDE_SCHED_QUEUE_H_
#define TIDE_SCHED_QUEUE_H_

#include <cstdint>
#include <vector>

#include "model/cluster.h"

namespace tide::sched {

// True when `a` is ahead of `b` in the queue.
bool QueueBefore(const model::Job& a, const model::Job& b);

// A job's place in the queue, copied out of the job so that sorting a long
// queue compares in one array rather than chasing pointers into jobs.
struct QueueKey {
  int priority = 0;
  Timestamp submit{};
  model::JobId id = 0;
  uint32_t index = 0;  // the caller's: where the job is in what it sorts

  static QueueKey Of(const model::Job& j, uint32_t index) { return {j.priority, j.spec.submit, j.id, index}; }
  // Queue order.
  bool operator<(const QueueKey& o) const {
    if (priority != o.priority) return priority > o.priority;
    if (submit != o.submit) return submit < o.submit;
    return id < o.id;
  }
};

// The keys' `index` fields in queue order (operator<), stably: keys equal
// in all three keep their order. A long queue is ordered on every pass:
// when the spread of its priorities, submissions and ids fits in 64 bits,
// which it does on any real queue, this is a radix sort on that packed key,
// and otherwise a comparison sort. Both give the same order.
std::vector<uint32_t> QueueOrder(const std::vector<QueueKey>& keys);

// The pending jobs of `state`, in queue order. The pointers point into `state`.
// With `active`, also the jobs that hold or are about to free GPUs (starting,
// running, stopping), in the order of `state.jobs`: one scan finds both, and
// passes that look only at those need not read 100,000 queued jobs again.
std::vector<const model::Job*> PendingInQueueOrder(const model::ClusterState& state,
                                                   std::vector<const model::Job*>* active = nullptr);

}  // namespace tide::sched

#endif  // TIDE_SCHED_QUEUE_H_
