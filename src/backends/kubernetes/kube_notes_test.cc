// The note writer: sent in order at once without workers; all sent by
// workers after Flush; the oldest dropped, and counted, when the queue is full.
#include "backends/kubernetes/kube_notes.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "gtest/gtest.h"

namespace tide::backends::kube {
namespace {

TEST(NoteWriterTest, WithoutWorkersEachNoteIsSentAtOnceInOrder) {
  NoteWriter w(0, 10);
  std::vector<int> sent;
  for (int i = 0; i < 5; ++i) {
    w.Post([&sent, i] { sent.push_back(i); });
    EXPECT_EQ(sent.size(), static_cast<size_t>(i + 1));
  }
  EXPECT_EQ(sent, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(w.dropped(), 0);
}

TEST(NoteWriterTest, WorkersSendEveryNote) {
  std::atomic<int> sent{0};
  NoteWriter w(3, 1000);
  for (int i = 0; i < 500; ++i) w.Post([&sent] { sent.fetch_add(1); });
  w.Flush();
  EXPECT_EQ(sent.load(), 500);
  EXPECT_EQ(w.dropped(), 0);
}

TEST(NoteWriterTest, AFullQueueDropsTheOldestAndCountsIt) {
  // One worker, held busy by the first note until the queue has overflowed.
  std::mutex mu;
  std::condition_variable cv;
  bool started = false, release = false;
  std::vector<int> sent;
  NoteWriter w(1, 2);
  w.Post([&] {
    std::unique_lock lock(mu);
    started = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  });
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return started; });
  }
  for (int i = 1; i <= 4; ++i) {
    w.Post([&, i] {
      std::lock_guard lock(mu);
      sent.push_back(i);
    });
  }
  EXPECT_EQ(w.dropped(), 2);  // 1 and 2 made way for 3 and 4
  {
    std::lock_guard lock(mu);
    release = true;
  }
  cv.notify_all();
  w.Flush();
  EXPECT_EQ(sent, (std::vector<int>{3, 4}));
}

}  // namespace
}  // namespace tide::backends::kube
