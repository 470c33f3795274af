#include "sim/event_queue.h"

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

}  // namespace
}  // namespace tide::sim
