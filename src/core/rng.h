// A small, seeded, platform-independent random number generator.
//
// Standard-library distributions differ between implementations, which would
// break "same seed, same bytes" across machines. Rng therefore implements its
// own (xoshiro256** seeded through splitmix64) and its own distributions.
// There is no global RNG: every user is handed an Rng or a seed.
#ifndef TIDE_CORE_RNG_H_
#define TIDE_CORE_RNG_H_

#include <cstdint>
#include <string_view>

namespace tide {

class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t Next();
  // Uniform in [0, 1).
  double Uniform();
  // Uniform integer in [lo, hi] (inclusive). Requires lo <= hi.
  int64_t UniformInt(int64_t lo, int64_t hi);
  // True with probability p.
  bool Bernoulli(double p) { return Uniform() < p; }
  // Standard normal (Box-Muller).
  double Normal();
  // exp(N(log(median), sigma)).
  double LogNormal(double median, double sigma);
  // Exponential with the given mean.
  double Exponential(double mean);
  // Poisson count with the given mean (inversion for small means, normal
  // approximation above 64).
  int64_t Poisson(double mean);

  // Derives an independent stream, for example one per policy or per pool.
  Rng Fork(std::string_view label);

 private:
  uint64_t s_[4];
};

}  // namespace tide

#endif  // TIDE_CORE_RNG_H_
