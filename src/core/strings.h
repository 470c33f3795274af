// String helpers over fmt. Debian's Abseil has its own string_view type, so
// its string functions do not accept std::string_view; tide uses these
// instead (Abseil stays for Status and containers).
#ifndef TIDE_CORE_STRINGS_H_
#define TIDE_CORE_STRINGS_H_

#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

// Lets fmt print absl::string_view (what absl::Status::message() returns).
template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<fmt::string_view> {
  auto format(absl::string_view s, fmt::format_context& ctx) const {
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(s.data(), s.size()), ctx);
  }
};

namespace tide {

// Concatenates the arguments' fmt "{}" renderings.
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (fmt::format_to(std::back_inserter(out), "{}", args), ...);
  return out;
}

template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  (fmt::format_to(std::back_inserter(*out), "{}", args), ...);
}

template <typename Range>
std::string StrJoin(const Range& items, std::string_view sep) {
  return fmt::format("{}", fmt::join(items, sep));
}

// std::isspace in the "C" locale, without a call into the C library: the
// CSV reader tests every field of every row.
inline bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
std::string_view StripWhitespace(std::string_view s);
std::string ToLower(std::string_view s);
// Splits on `sep`; with skip_empty, drops empty (or all-blank) pieces.
std::vector<std::string_view> Split(std::string_view s, char sep, bool skip_empty = false);
inline bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }
// Whole-string decimal integer; false on anything else.
bool ParseInt(std::string_view s, int* out);
// Text from an input (a file, a reply) made safe to put in a message: control
// bytes and bytes that are not UTF-8 are written as \xNN, and what would take
// more than `limit` columns is cut, with "... (N bytes)" after it. A binary file
// given by mistake then shows as a short line, not raw bytes on a terminal.
std::string Shown(std::string_view s, size_t limit = 80);

}  // namespace tide

#endif  // TIDE_CORE_STRINGS_H_
