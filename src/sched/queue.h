// Queue order: higher priority first, then earlier submission, then lower id.
#ifndef TIDE_SCHED_QUEUE_H_
#define TIDE_SCHED_QUEUE_H_

#include <vector>

#include "model/cluster.h"

namespace tide::sched {

// True when `a` is ahead of `b` in the queue.
bool QueueBefore(const model::Job& a, const model::Job& b);

// The pending jobs of `state`, in queue order. The pointers point into `state`.
// With `active`, also the jobs that hold or are about to free GPUs (starting,
// running, stopping), in the order of `state.jobs`: one scan finds both, and
// passes that look only at those need not read 100,000 queued jobs again.
std::vector<const model::Job*> PendingInQueueOrder(const model::ClusterState& state,
                                                   std::vector<const model::Job*>* active = nullptr);

}  // namespace tide::sched

#endif  // TIDE_SCHED_QUEUE_H_
