// EventQueue: the simulator's agenda, ordered by (time, insertion sequence)
// so that a run is the same every time. Events are plain values.
#ifndef TIDE_SIM_EVENT_QUEUE_H_
#define TIDE_SIM_EVENT_QUEUE_H_

#include <cstdint>
#include <queue>
#include <vector>

#include "core/time.h"

namespace tide::sim {

enum class EventKind : uint8_t {
  kArrival,     // the next trace record is due
  kNodeReady,   // a = node id
  kJobEnd,      // a = job id, b = run epoch
  kJobStart,    // a = job id (a starting job whose nodes have all joined)
  kJobExit,     // a = job id, b = run epoch: a stopping job has checkpointed and exits
  kTick,        // the autoscaler loop
  kSpotNotice,  // a = node id: the provider will reclaim it
  kSpotKill,    // a = node id: the provider reclaims it now
  kSpotSupply,  // the spot availability trace changes
  kNodeLoaded,  // a = node id: its storage load is done
};

struct Event {
  Timestamp time;
  uint64_t seq = 0;
  EventKind kind = EventKind::kTick;
  int64_t a = 0;
  int64_t b = 0;
};

class EventQueue {
 public:
  // Schedules an event; returns its sequence number.
  uint64_t Push(Timestamp time, EventKind kind, int64_t a = 0, int64_t b = 0) {
    heap_.push(Event{time, next_seq_, kind, a, b});
    return next_seq_++;
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.top(); }
  Event Pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& x, const Event& y) const {
      return x.time != y.time ? x.time > y.time : x.seq > y.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_seq_ = 0;
};

}  // namespace tide::sim

#endif  // TIDE_SIM_EVENT_QUEUE_H_
