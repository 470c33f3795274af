// EventQueue: the simulator's agenda, ordered by (time, insertion sequence)
// so that a run is the same every time. Events are plain values.
#ifndef TIDE_SIM_EVENT_QUEUE_H_
#define TIDE_SIM_EVENT_QUEUE_H_

#include <algorithm>
#include <cstdint>
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

// A four-way heap of small keys (time, sequence, slot); the events
// themselves stay in slots that are reused. A sift reads one or two cache
// lines per level, over half as many levels as a binary heap of events.
class EventQueue {
 public:
  // Schedules an event; returns its sequence number.
  uint64_t Push(Timestamp time, EventKind kind, int64_t a = 0, int64_t b = 0) {
    uint32_t slot;
    if (free_.empty()) {
      slot = static_cast<uint32_t>(events_.size());
      events_.emplace_back();
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    events_[slot] = Event{time, next_seq_, kind, a, b};
    heap_.push_back(Key{time, next_seq_, slot});
    SiftUp(heap_.size() - 1);
    return next_seq_++;
  }
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return events_[heap_.front().slot]; }
  Event Pop() {
    const uint32_t slot = heap_.front().slot;
    Event e = events_[slot];
    free_.push_back(slot);
    const Key last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) SiftDown(last);
    return e;
  }

 private:
  static constexpr size_t kWays = 4;
  struct Key {
    Timestamp time;
    uint64_t seq;
    uint32_t slot;
    bool operator<(const Key& o) const { return time != o.time ? time < o.time : seq < o.seq; }
  };
  void SiftUp(size_t i) {
    const Key k = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / kWays;
      if (!(k < heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = k;
  }
  // Puts `k` at the root's place and moves it down to where it belongs.
  void SiftDown(const Key& k) {
    const size_t n = heap_.size();
    size_t i = 0;
    for (;;) {
      const size_t first = i * kWays + 1;
      if (first >= n) break;
      size_t best = first;
      const size_t last = std::min(first + kWays, n);
      for (size_t c = first + 1; c < last; ++c) {
        if (heap_[c] < heap_[best]) best = c;
      }
      if (!(heap_[best] < k)) break;
      heap_[i] = heap_[best];
      i = best;
    }
    heap_[i] = k;
  }

  std::vector<Key> heap_;
  std::vector<Event> events_;    // by slot
  std::vector<uint32_t> free_;  // slots of events popped
  uint64_t next_seq_ = 0;
};

}  // namespace tide::sim

#endif  // TIDE_SIM_EVENT_QUEUE_H_
