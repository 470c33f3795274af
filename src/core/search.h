// LowerBound: std::lower_bound over a contiguous range, without a branch
// per step. Each step picks the next half with a conditional move, so a
// search costs its loads and not a mispredicted jump per level, which is
// what a search of a long, randomly probed array mostly costs. The answer
// is std::lower_bound's: the first element for which less(element, key)
// is false.
#ifndef TIDE_CORE_SEARCH_H_
#define TIDE_CORE_SEARCH_H_

#include <cstddef>

namespace tide {

template <typename It, typename Key, typename Less>
It LowerBound(It first, It last, const Key& key, Less less) {
  size_t len = static_cast<size_t>(last - first);
  if (len == 0) return first;
  const auto* base = &*first;
  while (len > 1) {
    const size_t half = len / 2;
    // The answer lies in [base, base + len]; one comparison drops half.
    base += half & (size_t{0} - static_cast<size_t>(less(base[half - 1], key)));
    len -= half;
  }
  return first + ((base - &*first) + (less(*base, key) ? 1 : 0));
}

// The same answer, for a key expected near `first`: it looks at first[0],
// first[1], first[3], first[7], ... until one is not less than the key, then
// searches the last step. A key k elements on costs about 2 log2(k) looks.
template <typename It, typename Key, typename Less>
It GallopLowerBound(It first, It last, const Key& key, Less less) {
  size_t step = 1;
  while (true) {
    // Every element before `first` is less than the key.
    if (static_cast<size_t>(last - first) <= step) return LowerBound(first, last, key, less);
    if (!less(first[step - 1], key)) return LowerBound(first, first + step, key, less);
    first += step;
    step *= 2;
  }
}

// The same answer, for a key expected near `hint` (in [first, last]): it
// gallops forward or back from there. Any hint gives the right answer; a
// good one makes it a few looks.
template <typename It, typename Key, typename Less>
It LowerBoundNear(It first, It last, It hint, const Key& key, Less less) {
  if (hint != last && less(*hint, key)) return GallopLowerBound(hint + 1, last, key, less);
  // The answer is at or before `hint`: every element from `hint` on is not
  // less than the key.
  size_t step = 1;
  while (true) {
    if (static_cast<size_t>(hint - first) <= step) return LowerBound(first, hint, key, less);
    const It probe = hint - step;
    if (less(*probe, key)) return LowerBound(probe + 1, hint, key, less);
    hint = probe;
    step *= 2;
  }
}

}  // namespace tide

#endif  // TIDE_CORE_SEARCH_H_
