// Integer time. A Timestamp is a UTC instant with one-second resolution; a
// Duration is a whole number of seconds. Both are std::chrono types over
// int64, so arithmetic is exact and no code path ever sees `double` seconds.
#ifndef TIDE_CORE_TIME_H_
#define TIDE_CORE_TIME_H_

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "core/status.h"

namespace tide {

using Duration = std::chrono::seconds;
using Timestamp = std::chrono::sys_seconds;

inline constexpr Timestamp kInfinitePast{Duration{std::numeric_limits<int64_t>::min() / 4}};
inline constexpr Timestamp kInfiniteFuture{Duration{std::numeric_limits<int64_t>::max() / 4}};

inline constexpr Duration Seconds(int64_t s) { return Duration{s}; }
inline constexpr Duration Minutes(int64_t m) { return Duration{m * 60}; }
inline constexpr Duration Hours(int64_t h) { return Duration{h * 3600}; }
inline constexpr Timestamp FromUnixSeconds(int64_t s) { return Timestamp{Duration{s}}; }
inline constexpr int64_t ToUnixSeconds(Timestamp t) { return t.time_since_epoch().count(); }

// "90", "90s", "5m", "2h", "1d", "1h30m". Returns InvalidArgument on anything else.
Result<Duration> ParseDuration(std::string_view text);
// The shortest exact spelling: 300 -> "5m", 5400 -> "1h30m", 0 -> "0s".
std::string FormatDuration(Duration d);

// ISO-8601 in UTC: "2026-01-05T09:00:00Z", "2026-01-05 09:00:00", "2026-01-05".
// A numeric offset ("+08:00") is honoured. Returns InvalidArgument otherwise.
Result<Timestamp> ParseTimestamp(std::string_view text);
// "2026-01-05T09:00:00Z".
std::string FormatTimestamp(Timestamp t);

// Rounds `t` up to the next point of the grid origin + k * step, k >= 0.
// Times at or before `origin` give `origin`; a step <= 0 returns `t`.
Timestamp AlignUp(Timestamp t, Timestamp origin, Duration step);

// A source of the current time. Decision code never holds one: it is handed
// `now`. Drivers (the simulator, the live controller) own a Clock.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual Timestamp Now() const = 0;
};

// Reads the system clock. Thread-safe.
class RealClock final : public Clock {
 public:
  Timestamp Now() const override;
};

// A clock that moves only when told to. Not thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Timestamp start) : now_(start) {}
  Timestamp Now() const override { return now_; }
  void Set(Timestamp t) { now_ = t; }
  void Advance(Duration d) { now_ += d; }

 private:
  Timestamp now_;
};

}  // namespace tide

#endif  // TIDE_CORE_TIME_H_
