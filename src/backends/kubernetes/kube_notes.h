// Writes that are for people, not for tide's decisions: Events, and the
// PodScheduled message of a waiting pod. With workers they are sent by
// background threads, so a loop never waits on them (at 10,000 pods they are
// most of the requests); the queue is bounded, and when it is full the oldest
// note is dropped and counted. With no workers (tests) each is sent at once.
// A failed note changes nothing tide decided, and is not retried.
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_NOTES_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_NOTES_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tide::backends::kube {

class NoteWriter {
 public:
  // `workers` threads (0: synchronous), at most `capacity` notes waiting.
  NoteWriter(int workers, size_t capacity);
  ~NoteWriter();  // stops the workers; notes not yet sent are dropped
  NoteWriter(const NoteWriter&) = delete;
  NoteWriter& operator=(const NoteWriter&) = delete;

  void Post(std::function<void()> note);
  // Waits until every note posted so far has been sent (tests, shutdown).
  void Flush();
  int64_t dropped() const { return dropped_.load(); }

 private:
  void Work(std::stop_token stop);

  const size_t capacity_;
  std::mutex mu_;
  std::condition_variable_any cv_;
  std::condition_variable idle_cv_;
  std::deque<std::function<void()>> queue_;
  int busy_ = 0;
  std::atomic<int64_t> dropped_{0};
  std::vector<std::jthread> workers_;  // last: stopped and joined first
};

}  // namespace tide::backends::kube

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_NOTES_H_
