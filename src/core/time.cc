#include "core/time.h"
#include "core/strings.h"

#include <cctype>
#include <sstream>

// date.h's parser reads a `long double S` that GCC 12, inlining it at -O2,
// takes for uninitialised (it is set before it is read): a false positive
// in a third-party header, silenced for that header only.
#pragma GCC diagnostic push
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "date/date.h"
#pragma GCC diagnostic pop

namespace tide {

Result<Duration> ParseDuration(std::string_view text) {
  auto bad = [&] {
    return absl::InvalidArgumentError(StrCat(
        "'", text, "' is not a duration; write seconds or a number with a unit, like 90s, 5m, 2h, 1d"));
  };
  if (text.empty()) return bad();
  int64_t total = 0;
  size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return bad();
    int64_t n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      n = n * 10 + (text[i] - '0');
      if (n > (int64_t{1} << 40)) return bad();
      ++i;
    }
    int64_t unit = 1;
    if (i < text.size()) {
      switch (text[i]) {
        case 's': unit = 1; break;
        case 'm': unit = 60; break;
        case 'h': unit = 3600; break;
        case 'd': unit = 86400; break;
        default: return bad();
      }
      ++i;
    } else if (any) {
      return bad();  // "1h30" is ambiguous
    }
    total += n * unit;
    // Each term is below 2^57, so checking the sum as it grows keeps it from overflowing.
    if (total > (int64_t{1} << 40) * 86400) return bad();
    any = true;
  }
  return Duration{total};
}

std::string FormatDuration(Duration d) {
  int64_t s = d.count();
  if (s == 0) return "0s";
  std::string out;
  if (s < 0) {
    out = "-";
    s = -s;
  }
  const int64_t days = s / 86400, hours = s % 86400 / 3600, mins = s % 3600 / 60, secs = s % 60;
  if (days) StrAppend(&out, days, "d");
  if (hours) StrAppend(&out, hours, "h");
  if (mins) StrAppend(&out, mins, "m");
  if (secs) StrAppend(&out, secs, "s");
  return out;
}

namespace {

// The one date.h format for the shape of `s` (already stripped), or nullptr
// if it has none of the shapes ParseTimestamp reads: YYYY-MM-DD, then
// optionally 'T' or ' ' and HH:MM:SS, then optionally 'Z' or an offset
// (+HH:MM, -HH:MM). date.h's %T reads its seconds into an uninitialised
// long double and rounds it even when the read fails ("2026-01-05T00:0e",
// or a date alone tried against "%F %T": found by fuzzing), so %T only ever
// sees text whose time of day is all there.
const char* TimestampFormat(std::string_view s) {
  const auto digits = [&s](size_t at, size_t n) {
    if (at + n > s.size()) return false;
    for (size_t i = at; i < at + n; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
    }
    return true;
  };
  if (!digits(0, 4) || s.size() < 10 || s[4] != '-' || !digits(5, 2) || s[7] != '-' || !digits(8, 2)) return nullptr;
  if (s.size() == 10) return "%F";  // midnight UTC
  if (s[10] != 'T' && s[10] != ' ') return nullptr;
  if (!digits(11, 2) || s.size() < 19 || s[13] != ':' || !digits(14, 2) || s[16] != ':' || !digits(17, 2)) {
    return nullptr;
  }
  const bool t = s[10] == 'T';
  const std::string_view zone = s.substr(19);
  if (zone.empty()) return t ? "%FT%T" : "%F %T";
  if (zone == "Z") return t ? "%FT%TZ" : "%F %TZ";
  const bool offset = (zone[0] == '+' || zone[0] == '-') && zone.size() == 6 && zone[3] == ':' && digits(20, 2) &&
                      digits(23, 2);
  if (!offset) return nullptr;
  return t ? "%FT%T%Ez" : "%F %T%Ez";
}

}  // namespace

Result<Timestamp> ParseTimestamp(std::string_view text) {
  const std::string s(StripWhitespace(text));
  if (const char* format = TimestampFormat(s); format != nullptr) {
    std::istringstream in(s);
    date::sys_seconds tp;
    in >> date::parse(format, tp);
    if (!in.fail() && in.peek() == std::char_traits<char>::eof()) return tp;
  }
  return absl::InvalidArgumentError(
      StrCat("'", Shown(text), "' is not a timestamp; write ISO-8601 like 2026-01-05T09:00:00Z"));
}

std::string FormatTimestamp(Timestamp t) {
  // What date::format("%FT%TZ", t) writes, without its stream: logs and
  // decision reasons write many of these.
  const auto day = date::floor<date::days>(t);
  const date::year_month_day ymd{day};
  const int year = static_cast<int>(ymd.year());
  if (year < 0 || year > 9999) return date::format("%FT%TZ", t);
  const int64_t secs = (t - day).count();
  char out[21];
  auto put = [&out](int at, int64_t value, int width) {
    for (int i = width - 1; i >= 0; --i, value /= 10) out[at + i] = static_cast<char>('0' + value % 10);
  };
  put(0, year, 4);
  out[4] = '-';
  put(5, static_cast<unsigned>(ymd.month()), 2);
  out[7] = '-';
  put(8, static_cast<unsigned>(ymd.day()), 2);
  out[10] = 'T';
  put(11, secs / 3600, 2);
  out[13] = ':';
  put(14, secs % 3600 / 60, 2);
  out[16] = ':';
  put(17, secs % 60, 2);
  out[19] = 'Z';
  return std::string(out, 20);
}

Timestamp AlignUp(Timestamp t, Timestamp origin, Duration step) {
  if (step.count() <= 0) return t;
  if (t <= origin) return origin;
  const int64_t off = (t - origin).count();
  const int64_t k = (off + step.count() - 1) / step.count();
  return origin + Duration{k * step.count()};
}

Timestamp RealClock::Now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

}  // namespace tide
