#include "core/strings.h"

#include <cctype>
#include <charconv>

namespace tide {

std::string_view StripWhitespace(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && IsSpace(s[a])) ++a;
  while (b > a && IsSpace(s[b - 1])) --b;
  return s.substr(a, b - a);
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep, bool skip_empty) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (true) {
    const size_t j = s.find(sep, i);
    const std::string_view piece = s.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i);
    if (!skip_empty || !StripWhitespace(piece).empty()) out.push_back(piece);
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}

bool ParseInt(std::string_view s, int* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

namespace {

// The length of the valid UTF-8 sequence of a printable character starting at
// s[i] (beyond ASCII), or 0 when the bytes there are not one.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = 0;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) n = 3;
  else if (c >= 0xF0 && c <= 0xF4) n = 4;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  }
  // Overlong forms, UTF-16 surrogates and code points past U+10FFFF.
  if (c == 0xE0 && b(i + 1) < 0xA0) return 0;
  if (c == 0xED && b(i + 1) >= 0xA0) return 0;
  if (c == 0xF0 && b(i + 1) < 0x90) return 0;
  if (c == 0xF4 && b(i + 1) >= 0x90) return 0;
  // C1 control characters (U+0080 to U+009F).
  if (c == 0xC2 && b(i + 1) < 0xA0) return 0;
  return n;
}

}  // namespace

std::string Shown(std::string_view s, size_t limit) {
  std::string out;
  size_t i = 0, columns = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = 1;  // input bytes this piece shows
    std::string piece;
    if (c >= 0x20 && c < 0x7F) {
      piece.assign(1, static_cast<char>(c));
    } else if (const size_t u = c >= 0x80 ? Utf8Length(s, i) : 0; u > 0) {
      piece.assign(s.substr(i, u));
      n = u;
    } else {
      piece = fmt::format("\\x{:02x}", c);
    }
    // A UTF-8 character takes one column; an escape, four.
    const size_t width = n > 1 ? 1 : piece.size();
    if (columns + width > limit) break;
    out += piece;
    columns += width;
    i += n;
  }
  if (i < s.size()) fmt::format_to(std::back_inserter(out), "... ({} bytes)", s.size());
  return out;
}

}  // namespace tide
