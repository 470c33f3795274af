#include "core/rng.h"

#include <cmath>

namespace tide {
namespace {

uint64_t SplitMix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

constexpr double kPi = 3.14159265358979323846;

}  // namespace

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (auto& s : s_) s = SplitMix64(x);
}

uint64_t Rng::Next() {
  const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

double Rng::Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

int64_t Rng::UniformInt(int64_t lo, int64_t hi) {
  // Unsigned arithmetic: hi - lo overflows int64 for ranges wider than half of it.
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (range == 0) return static_cast<int64_t>(Next());  // the full 64-bit range
  const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  uint64_t r;
  do {
    r = Next();
  } while (r >= limit);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + r % range);
}

double Rng::Normal() {
  double u1 = Uniform();
  while (u1 <= 0.0) u1 = Uniform();
  const double u2 = Uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
}

double Rng::LogNormal(double median, double sigma) {
  return median * std::exp(sigma * Normal());
}

double Rng::Exponential(double mean) {
  double u = Uniform();
  while (u <= 0.0) u = Uniform();
  return -mean * std::log(u);
}

int64_t Rng::Poisson(double mean) {
  if (mean <= 0) return 0;
  if (mean > 64) {
    const double x = std::round(mean + std::sqrt(mean) * Normal());
    return x < 0 ? 0 : static_cast<int64_t>(x);
  }
  const double limit = std::exp(-mean);
  int64_t k = 0;
  double p = Uniform();
  while (p > limit) {
    ++k;
    p *= Uniform();
  }
  return k;
}

Rng Rng::Fork(std::string_view label) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a over the label
  for (char c : label) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return Rng(Next() ^ h);
}

}  // namespace tide
