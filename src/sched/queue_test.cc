#include "sched/queue.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/rng.h"
#include "gtest/gtest.h"

namespace tide::sched {
namespace {

QueueKey Key(int priority, int64_t submit, model::JobId id, uint32_t index) {
  return {priority, Timestamp(Duration(submit)), id, index};
}

// The order a comparison sort gives, stably: what QueueOrder promises.
std::vector<uint32_t> Expected(std::vector<QueueKey> keys) {
  std::stable_sort(keys.begin(), keys.end());
  std::vector<uint32_t> out;
  for (const auto& k : keys) out.push_back(k.index);
  return out;
}

std::vector<uint32_t> Sorted(const std::vector<QueueKey>& keys) { return QueueOrder(keys); }

TEST(QueueOrder, HigherPriorityThenEarlierSubmitThenLowerId) {
  const std::vector<QueueKey> keys = {Key(0, 10, 1, 0), Key(5, 20, 2, 1), Key(5, 10, 3, 2), Key(5, 10, 1, 3)};
  EXPECT_EQ(Sorted(keys), (std::vector<uint32_t>{3, 2, 1, 0}));
}

// Queues short and long enough for the radix sort, in the shapes a pass sees: a few
// priority classes, submissions over a span, ids in a block; negative
// priorities; already sorted; and equal keys, which keep their order.
TEST(QueueOrder, RadixSortMatchesTheComparisonSort) {
  Rng rng(3);
  for (int round = 0; round < 40; ++round) {
    // Every third queue is short enough for the comparison sort.
    const int n = static_cast<int>(round % 3 == 0 ? rng.UniformInt(2, 1000) : rng.UniformInt(1024, 6000));
    const int64_t span = round % 4 == 0 ? 600 : int64_t{120} * 86400;
    const int64_t id_base = rng.UniformInt(0, int64_t{1} << 40);
    std::vector<QueueKey> keys;
    for (int i = 0; i < n; ++i) {
      const int priority = static_cast<int>(rng.UniformInt(-3, 3)) * 100;
      const int64_t submit = 1'700'000'000 + rng.UniformInt(0, span);
      // Some duplicated keys: the same job key twice must keep its order.
      const model::JobId id = round % 5 == 1 && i % 7 == 0 ? id_base : id_base + rng.UniformInt(0, 4 * n);
      keys.push_back(Key(priority, submit, id, static_cast<uint32_t>(i)));
    }
    if (round % 6 == 2) std::sort(keys.begin(), keys.end());  // already in order
    ASSERT_EQ(Sorted(keys), Expected(keys)) << "round " << round;
  }
}

// A spread too wide to pack in 64 bits falls back to the comparison sort,
// with the same order.
TEST(QueueOrder, WideSpreadFallsBackWithTheSameOrder) {
  Rng rng(5);
  std::vector<QueueKey> keys;
  for (int i = 0; i < 3000; ++i) {
    const int priority = i % 2 == 0 ? std::numeric_limits<int>::min() : std::numeric_limits<int>::max();
    const int64_t submit = rng.UniformInt(-(int64_t{1} << 40), int64_t{1} << 40);
    const model::JobId id = i % 3 == 0 ? std::numeric_limits<int64_t>::min() + i : std::numeric_limits<int64_t>::max() - i;
    keys.push_back(Key(priority, submit, id, static_cast<uint32_t>(i)));
  }
  EXPECT_EQ(Sorted(keys), Expected(keys));
}

TEST(QueueOrder, PendingInQueueOrderListsActiveJobsInStateOrder) {
  model::ClusterState state;
  auto add = [&](model::JobId id, int priority, int64_t submit, model::JobState st) {
    model::Job j;
    j.id = id;
    j.priority = priority;
    j.spec.submit = Timestamp(Duration(submit));
    j.state = st;
    state.jobs.push_back(j);
  };
  add(1, 0, 50, model::JobState::kPending);
  add(2, 0, 10, model::JobState::kRunning);
  add(3, 9, 90, model::JobState::kPending);
  add(4, 0, 20, model::JobState::kCompleted);
  add(5, 0, 40, model::JobState::kPending);
  add(6, 0, 30, model::JobState::kStopping);
  std::vector<const model::Job*> active;
  const auto pending = PendingInQueueOrder(state, &active);
  std::vector<model::JobId> ids, active_ids;
  for (const auto* j : pending) ids.push_back(j->id);
  for (const auto* j : active) active_ids.push_back(j->id);
  EXPECT_EQ(ids, (std::vector<model::JobId>{3, 5, 1}));
  EXPECT_EQ(active_ids, (std::vector<model::JobId>{2, 6}));
}

}  // namespace
}  // namespace tide::sched
