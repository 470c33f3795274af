#include "core/search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "core/rng.h"

namespace tide {
namespace {

TEST(LowerBoundTest, EmptyRangeGivesItsStart) {
  std::vector<int> v;
  EXPECT_EQ(LowerBound(v.begin(), v.end(), 3, std::less<int>()), v.end());
  EXPECT_EQ(GallopLowerBound(v.begin(), v.end(), 3, std::less<int>()), v.end());
  EXPECT_EQ(LowerBoundNear(v.begin(), v.end(), v.end(), 3, std::less<int>()), v.end());
}

TEST(LowerBoundTest, EachGivesTheStandardAnswerOnEveryKeyLengthAndHint) {
  // Sorted runs with repeats, every length up to 70, every key around them,
  // and every sub-range start: the answer must be std::lower_bound's.
  Rng rng(7);
  for (int n = 1; n <= 70; ++n) {
    std::vector<int> v(n);
    int x = 0;
    for (int& e : v) e = x += static_cast<int>(rng.UniformInt(0, 2));
    for (int from = 0; from < n; from += 5) {
      for (int key = -1; key <= x + 1; ++key) {
        auto want = std::lower_bound(v.begin() + from, v.end(), key);
        auto got = LowerBound(v.begin() + from, v.end(), key, std::less<int>());
        ASSERT_EQ(got - v.begin(), want - v.begin()) << "n=" << n << " from=" << from << " key=" << key;
        auto galloped = GallopLowerBound(v.begin() + from, v.end(), key, std::less<int>());
        ASSERT_EQ(galloped - v.begin(), want - v.begin()) << "gallop n=" << n << " from=" << from << " key=" << key;
        for (int hint = from; hint <= n; ++hint) {
          auto near = LowerBoundNear(v.begin() + from, v.end(), v.begin() + hint, key, std::less<int>());
          ASSERT_EQ(near - v.begin(), want - v.begin())
              << "near n=" << n << " from=" << from << " hint=" << hint << " key=" << key;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tide
