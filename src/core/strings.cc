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

}  // namespace tide
