#include "sim/event_queue.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "core/rng.h"
#include "gtest/gtest.h"

namespace tide::sim {
namespace {

TEST(EventQueueTest, OrdersByTimeThenInsertion) {
  EventQueue q;
  const Timestamp t0 = FromUnixSeconds(1000);
  q.Push(t0 + Seconds(5), EventKind::kTick, 1);
  q.Push(t0, EventKind::kJobEnd, 2);
  q.Push(t0 + Seconds(5), EventKind::kArrival, 3);
  q.Push(t0, EventKind::kNodeReady, 4);
  std::vector<int64_t> order;
  while (!q.empty()) order.push_back(q.Pop().a);
  EXPECT_EQ(order, std::vector<int64_t>({2, 4, 1, 3}));
}

// Pushes and pops in random turns, with many events at the same time, and
// checks every pop against a sorted list of what is queued.
TEST(EventQueueTest, PopsInTheOrderOfASortedListUnderRandomTurns) {
  Rng rng(7);
  EventQueue q;
  std::vector<std::tuple<int64_t, uint64_t, int64_t>> queued;  // time, seq, a
  const Timestamp t0 = FromUnixSeconds(0);
  int64_t now = 0, popped = 0;
  for (int step = 0; step < 20000; ++step) {
    if (queued.empty() || rng.Uniform() < 0.55) {
      const int64_t at = now + static_cast<int64_t>(rng.Uniform() * 50);
      const uint64_t seq = q.Push(t0 + Seconds(at), EventKind::kJobEnd, step, -step);
      queued.emplace_back(at, seq, step);
      continue;
    }
    const auto first = std::min_element(queued.begin(), queued.end());
    ASSERT_EQ(q.size(), queued.size());
    ASSERT_EQ(ToUnixSeconds(q.top().time), std::get<0>(*first));
    const Event e = q.Pop();
    ASSERT_EQ(e.seq, std::get<1>(*first));
    ASSERT_EQ(e.a, std::get<2>(*first));
    ASSERT_EQ(e.b, -e.a);
    ASSERT_EQ(e.kind, EventKind::kJobEnd);
    now = std::get<0>(*first);
    queued.erase(first);
    ++popped;
  }
  EXPECT_GT(popped, 5000);
  EXPECT_GT(q.size(), 100u);  // the heap was deep at the end
}

}  // namespace
}  // namespace tide::sim
