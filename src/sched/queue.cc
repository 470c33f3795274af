#include "sched/queue.h"

#include <algorithm>
#include <array>
#include <bit>

namespace tide::sched {
namespace {

// Below this many keys a comparison sort is as fast, and needs no passes.
constexpr size_t kRadixFrom = 1024;
constexpr int kDigitBits = 8;
constexpr size_t kBuckets = size_t{1} << kDigitBits;

struct Packed {
  uint64_t key;
  uint32_t at;  // the key's index
};

// Least-significant-digit radix sort of `v` on key's low `bits` bits. Stable,
// so equal keys keep their order; a digit every key shares costs no pass.
void RadixSort(std::vector<Packed>* v, int bits) {
  std::vector<Packed> tmp(v->size());
  for (int shift = 0; shift < bits; shift += kDigitBits) {
    std::array<size_t, kBuckets> count{};
    for (const Packed& p : *v) ++count[(p.key >> shift) & (kBuckets - 1)];
    if (std::find(count.begin(), count.end(), v->size()) != count.end()) continue;
    size_t sum = 0;
    for (size_t& c : count) {
      const size_t n = c;
      c = sum;
      sum += n;
    }
    for (const Packed& p : *v) tmp[count[(p.key >> shift) & (kBuckets - 1)]++] = p;
    v->swap(tmp);
  }
}

}  // namespace

bool QueueBefore(const model::Job& a, const model::Job& b) { return QueueKey::Of(a, 0) < QueueKey::Of(b, 0); }

std::vector<uint32_t> QueueOrder(const std::vector<QueueKey>& k) {
  std::vector<uint32_t> at(k.size());
  // Short queues (the simulator's, pass after pass) are sorted as copies of
  // their keys, with the position as the last tie-break: as stable as a
  // stable sort, without its buffer or an indirection per comparison.
  auto comparison_sort = [&] {
    if (std::is_sorted(k.begin(), k.end())) {
      for (size_t n = 0; n < k.size(); ++n) at[n] = k[n].index;
      return at;
    }
    struct Ranked {
      QueueKey key;
      uint32_t pos;
      bool operator<(const Ranked& o) const { return key < o.key || (!(o.key < key) && pos < o.pos); }
    };
    std::vector<Ranked> r(k.size());
    for (size_t n = 0; n < k.size(); ++n) r[n] = {k[n], static_cast<uint32_t>(n)};
    std::sort(r.begin(), r.end());
    for (size_t n = 0; n < k.size(); ++n) at[n] = r[n].key.index;
    return at;
  };
  if (k.size() < kRadixFrom) return comparison_sort();
  // Pack (priority descending, submit, id) as offsets from their minimums.
  int max_p = k[0].priority, min_p = k[0].priority;
  int64_t min_s = k[0].submit.time_since_epoch().count(), max_s = min_s, min_i = k[0].id, max_i = min_i;
  for (const QueueKey& q : k) {
    min_p = std::min(min_p, q.priority);
    max_p = std::max(max_p, q.priority);
    const int64_t s = q.submit.time_since_epoch().count();
    min_s = std::min(min_s, s);
    max_s = std::max(max_s, s);
    min_i = std::min(min_i, q.id);
    max_i = std::max(max_i, q.id);
  }
  // Ranges as unsigned: a difference of two int64 can overflow int64.
  const auto range = [](int64_t lo, int64_t hi) { return static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo); };
  const int bp = std::bit_width(range(min_p, max_p)), bs = std::bit_width(range(min_s, max_s)),
            bi = std::bit_width(range(min_i, max_i));
  if (bp + bs + bi > 64) return comparison_sort();
  std::vector<Packed> packed(k.size());
  bool sorted = true;
  for (size_t n = 0; n < k.size(); ++n) {
    const QueueKey& q = k[n];
    const uint64_t p = range(q.priority, max_p);  // the highest priority packs as 0
    const uint64_t s = range(min_s, q.submit.time_since_epoch().count());
    const uint64_t i = range(min_i, q.id);
    // Shifts by 64 are undefined: a field of 0 bits packs nothing.
    uint64_t key = i;
    if (bs > 0) key |= s << bi;
    if (bp > 0) key |= p << (bi + bs);
    packed[n] = {key, q.index};
    sorted = sorted && (n == 0 || packed[n - 1].key <= key);
  }
  if (!sorted) RadixSort(&packed, bp + bs + bi);
  for (size_t n = 0; n < k.size(); ++n) at[n] = packed[n].at;
  return at;
}

std::vector<const model::Job*> PendingInQueueOrder(const model::ClusterState& state,
                                                   std::vector<const model::Job*>* active) {
  std::vector<QueueKey> keys;
  if (active != nullptr) active->clear();
  for (size_t n = 0; n < state.jobs.size(); ++n) {
    const model::Job& j = state.jobs[n];
    if (j.state == model::JobState::kPending) {
      keys.push_back(QueueKey::Of(j, static_cast<uint32_t>(n)));
    } else if (active != nullptr && j.state != model::JobState::kCompleted) {
      active->push_back(&j);
    }
  }
  std::vector<const model::Job*> out;
  out.reserve(keys.size());
  for (const uint32_t n : QueueOrder(keys)) out.push_back(&state.jobs[n]);
  return out;
}

}  // namespace tide::sched
