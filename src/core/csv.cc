#include "core/csv.h"
#include "core/strings.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif


namespace tide {

Result<std::unique_ptr<CsvReader>> CsvReader::Open(const std::string& path) {
  auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!file->is_open()) {
    return absl::NotFoundError(StrCat(path, ": cannot open file"));
  }
  auto reader = std::make_unique<CsvReader>(file.get(), path);
  reader->owned_ = std::move(file);
  return reader;
}

CsvReader::CsvReader(std::istream* in, std::string name) : in_(in), name_(std::move(name)) {}

bool CsvReader::NextPhysicalLine() {
  // Lines are found with memchr in a block read straight from the stream's
  // buffer: getline into a string cost more than splitting the line did.
  if (pos_ < end_) {
    const char* from = block_.data() + pos_;
    if (const auto* nl = static_cast<const char*>(std::memchr(from, '\n', end_ - pos_))) {
      row_ = std::string_view(from, static_cast<size_t>(nl - from));
      pos_ += row_.size() + 1;
      return true;
    }
  }
  // The line goes on past this block (or none is left): gather it in buf_.
  buf_.assign(block_.data() + pos_, end_ - pos_);
  pos_ = end_;
  if (block_.empty()) block_.resize(size_t{64} << 10);
  while (true) {
    const std::streamsize got = in_->rdbuf() == nullptr ? 0 : in_->rdbuf()->sgetn(block_.data(), static_cast<std::streamsize>(block_.size()));
    pos_ = 0;
    end_ = got > 0 ? static_cast<size_t>(got) : 0;
    if (end_ == 0) {
      // The end: a last line without a newline, if there is one.
      row_ = buf_;
      return !buf_.empty();
    }
    if (const auto* nl = static_cast<const char*>(std::memchr(block_.data(), '\n', end_))) {
      const size_t len = static_cast<size_t>(nl - block_.data());
      buf_.append(block_.data(), len);
      pos_ = len + 1;
      row_ = buf_;
      return true;
    }
    buf_.append(block_.data(), end_);
    pos_ = end_;
  }
}

bool CsvReader::ReadLine() {
  while (NextPhysicalLine()) {
    ++line_;
    if (!row_.empty() && row_.back() == '\r') row_.remove_suffix(1);
    std::string_view trimmed = StripWhitespace(row_);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    return true;
  }
  return false;
}

Status CsvReader::Split() {
  fields_.clear();
  const std::string_view s = row_;
  if (std::memchr(s.data(), '"', s.size()) == nullptr) {
    // The common case, with no quote (memchr says so quickly): views into the
    // line, made in one scan of its bytes (fields are short: a call to find
    // each comma costs more than the comparisons). A field is stripped only if it starts or ends
    // with a blank: most rows have none, and a trace has millions of fields.
    const char* const b = s.data();
    const char* const e = b + s.size();
    auto add = [&](const char* from, const char* to) {
      std::string_view f(from, static_cast<size_t>(to - from));
      if (!f.empty() && (IsSpace(f.front()) || IsSpace(f.back()))) f = StripWhitespace(f);
      fields_.push_back(f);
    };
    const char* start = b;
    const char* c = b;
#if defined(__SSE2__)
    // Sixteen bytes at a time: a mask of the commas among them, walked bit
    // by bit. A branch per byte mispredicted at every comma.
    const __m128i comma = _mm_set1_epi8(',');
    for (; e - c >= 16; c += 16) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c));
      for (auto mask = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, comma))); mask != 0;
           mask &= mask - 1) {
        const char* at = c + __builtin_ctz(mask);
        add(start, at);
        start = at + 1;
      }
    }
#endif
    for (; c != e; ++c) {
      if (*c == ',') {
        add(start, c);
        start = c + 1;
      }
    }
    add(start, e);
    return OkStatus();
  }
  // Quoted fields: copy every field, then point the views at the copies.
  unquoted_.clear();
  size_t i = 0;
  while (true) {
    std::string field;
    if (i < s.size() && s[i] == '"') {
      ++i;
      while (true) {
        if (i >= s.size()) return LineError("unterminated quoted field");
        if (s[i] == '"') {
          if (i + 1 < s.size() && s[i + 1] == '"') {
            field.push_back('"');
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field.push_back(s[i++]);
      }
      if (i < s.size() && s[i] != ',') return LineError("text after a closing quote");
    } else {
      size_t end = s.find(',', i);
      if (end == std::string_view::npos) end = s.size();
      field = std::string(StripWhitespace(s.substr(i, end - i)));
      i = end;
    }
    unquoted_.push_back(std::move(field));
    if (i >= s.size()) break;
    ++i;  // skip ','
  }
  for (const auto& f : unquoted_) fields_.push_back(f);
  return OkStatus();
}

Status CsvReader::ReadHeader() {
  if (!ReadLine()) return absl::InvalidArgumentError(StrCat(name_, ": empty file, expected a header row"));
  TIDE_RETURN_IF_ERROR(Split());
  header_.clear();
  for (auto f : fields_) header_.push_back(ToLower(f));
  return OkStatus();
}

int CsvReader::Column(std::string_view name) const {
  for (size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return static_cast<int>(i);
  }
  return -1;
}

Result<const std::vector<std::string_view>*> CsvReader::Next() {
  if (!ReadLine()) return nullptr;
  TIDE_RETURN_IF_ERROR(Split());
  if (!header_.empty() && fields_.size() != header_.size()) {
    return LineError(StrCat("expected ", header_.size(), " fields (", Shown(StrJoin(header_, ",")),
                            "), found ", fields_.size()));
  }
  return &fields_;
}

std::string CsvField(std::string_view field) {
  const bool blank_ends = !field.empty() && (IsSpace(field.front()) || IsSpace(field.back()));
  const bool quote = blank_ends || field.starts_with('#') || field.find_first_of(",\"\r") != std::string_view::npos;
  std::string out;
  if (quote) out.push_back('"');
  for (const char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c == '\n' ? ' ' : c);
  }
  if (quote) out.push_back('"');
  return out;
}

namespace {
// The longest error text kept: a value is cut far shorter (Shown's 80
// columns), so this only bounds a message that lists many names.
constexpr size_t kMaxMessage = 2000;
}  // namespace

Status CsvReader::FieldError(std::string_view field, std::string_view what) const {
  // Shown: a value quoted in `what` may hold any byte of the input.
  return absl::InvalidArgumentError(
      StrCat(name_, ":", line_, ": field '", Shown(field, 200), "': ", Shown(what, kMaxMessage)));
}

Status CsvReader::LineError(std::string_view what) const {
  return absl::InvalidArgumentError(StrCat(name_, ":", line_, ": ", Shown(what, kMaxMessage)));
}

Result<int64_t> CsvReader::Int(std::string_view field, std::string_view value) const {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || value.empty()) {
    // Accept integral floats such as "66.0", which some exports write.
    double d = 0;
    auto [p2, ec2] = std::from_chars(value.data(), value.data() + value.size(), d);
    if (ec2 == std::errc() && p2 == value.data() + value.size() && !value.empty() && std::isfinite(d) &&
        d == std::floor(d) && std::fabs(d) < 9e15) {
      return static_cast<int64_t>(d);
    }
    return FieldError(field, StrCat("expected an integer, got '", Shown(value), "'"));
  }
  return v;
}

namespace {

// Decimal text of at most 15 significant digits, without an exponent ("0",
// "0.85", "-12.5"), exactly as from_chars reads it: the digits are an exact
// integer below 2^53 and the power of ten is exact, so the one division
// rounds correctly. Traces are full of such numbers; anything else is nullopt.
std::optional<double> ShortDecimal(std::string_view value) {
  static constexpr double kPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  size_t i = 0;
  const bool negative = !value.empty() && value[0] == '-';
  if (negative) ++i;
  int64_t digits = 0;
  int count = 0, after_point = -1;
  for (; i < value.size(); ++i) {
    const char c = value[i];
    if (c >= '0' && c <= '9') {
      if (++count > 15) return std::nullopt;
      digits = digits * 10 + (c - '0');
      if (after_point >= 0) ++after_point;
    } else if (c == '.' && after_point < 0) {
      after_point = 0;
    } else {
      return std::nullopt;
    }
  }
  if (count == 0) return std::nullopt;
  const double v = static_cast<double>(digits) / kPow10[std::max(after_point, 0)];
  return negative ? -v : v;
}

}  // namespace

Result<double> CsvReader::Double(std::string_view field, std::string_view value) const {
  if (const auto quick = ShortDecimal(value)) return *quick;
  double v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || value.empty() || !std::isfinite(v)) {
    return FieldError(field, StrCat("expected a number, got '", Shown(value), "'"));
  }
  return v;
}

Result<bool> CsvReader::Bool(std::string_view field, std::string_view value) const {
  // Compared without case and without a copy: traces have a flag or three on every row.
  auto is = [&](std::string_view word) {
    if (value.size() != word.size()) return false;
    for (size_t i = 0; i < word.size(); ++i) {
      const char c = value[i] >= 'A' && value[i] <= 'Z' ? static_cast<char>(value[i] - 'A' + 'a') : value[i];
      if (c != word[i]) return false;
    }
    return true;
  };
  if (is("1") || is("true") || is("yes") || is("y")) return true;
  if (is("0") || is("false") || is("no") || is("n") || value.empty()) return false;
  return FieldError(field, StrCat("expected true/false, got '", Shown(value), "'"));
}

}  // namespace tide
