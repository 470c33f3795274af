#include "config/field.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/strings.h"

namespace tide::config {
namespace {

// Levenshtein distance, for "did you mean" on misspelt keys.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string Field::ChildPath(std::string_view key) const {
  return path_.empty() ? std::string(key) : StrCat(path_, ".", key);
}

std::string Field::ChildPath(size_t i) const { return StrCat(path_, "[", i, "]"); }

std::string Field::Where() const {
  const YAML::Mark m = node_.Mark();
  // The top level has no path: "file:1:1: no pools", not "file:1:1: : no pools".
  const std::string field = path_.empty() ? std::string() : StrCat(": ", path_);
  if (m.is_null()) return StrCat(*file_, field);
  return StrCat(*file_, ":", m.line + 1, ":", m.column + 1, field);
}

// Shown: keys and values quoted in errors come from the file, any bytes.
Status Field::Error(std::string_view what) const {
  return absl::InvalidArgumentError(StrCat(Shown(Where(), 400), ": ", Shown(what, 2000)));
}

std::optional<Field> Field::Get(std::string_view key) const {
  if (!node_.IsMap()) return std::nullopt;
  YAML::Node child = node_[std::string(key)];
  if (!child.IsDefined() || child.IsNull()) return std::nullopt;
  return Field(child, ChildPath(key), file_);
}

std::optional<Field> Field::KeyOf(std::string_view key) const {
  if (!Get(key)) return std::nullopt;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return Field(it->first, ChildPath(key), file_);
  }
  return std::nullopt;
}

Status Field::OnlyKeys(std::initializer_list<std::string_view> known) const {
  return OnlyKeys(std::span<const std::string_view>(known.begin(), known.size()));
}

Status Field::OnlyKeys(std::span<const std::string_view> known) const {
  if (!node_.IsMap()) return Error("expected a mapping (key: value lines)");
  std::set<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string key = it->first.as<std::string>();
    if (!seen.insert(key).second) {
      Field f(it->first, ChildPath(key), file_);
      return f.Error("given twice; a key may appear once");
    }
    bool ok = false;
    for (auto k : known) ok |= (k == key);
    if (!ok) {
      Field f(it->first, ChildPath(key), file_);
      std::string_view best;
      size_t best_d = 3;  // suggest only close matches
      for (auto k : known) {
        const size_t d = EditDistance(key, k);
        if (d < best_d) {
          best_d = d;
          best = k;
        }
      }
      return f.Error(StrCat("unknown field", best.empty() ? std::string() : StrCat(" (did you mean '", best, "'?)"),
                            "; expected one of: ", StrJoin(known, ", ")));
    }
  }
  return OkStatus();
}

Result<std::string> Field::String() const {
  if (!node_.IsScalar()) return Error("expected a single value");
  return node_.Scalar();
}

Result<int64_t> Field::Int(int64_t lo, int64_t hi) const {
  if (!node_.IsScalar()) return Error("expected a whole number");
  int64_t v;
  if (!YAML::convert<int64_t>::decode(node_, v)) {
    return Error(StrCat("expected a whole number, got '", node_.Scalar(), "'"));
  }
  if (v < lo || v > hi) return Error(StrCat("must be between ", lo, " and ", hi, ", got ", v));
  return v;
}

Result<double> Field::Number(double lo, double hi) const {
  if (!node_.IsScalar()) return Error("expected a number");
  double v;
  if (!YAML::convert<double>::decode(node_, v) || std::isnan(v)) {
    return Error(StrCat("expected a number, got '", node_.Scalar(), "'"));
  }
  if (v < lo || v > hi) return Error(StrCat("must be between ", lo, " and ", hi, ", got ", node_.Scalar()));
  return v;
}

Result<bool> Field::Bool() const {
  bool v;
  if (!node_.IsScalar() || !YAML::convert<bool>::decode(node_, v)) {
    return Error(StrCat("expected true or false"));
  }
  return v;
}

Result<Duration> Field::Dur() const {
  if (!node_.IsScalar()) return Error("expected a duration like 90s, 5m or 2h");
  auto d = ParseDuration(node_.Scalar());
  if (!d.ok()) return Error(Message(d.status()));
  return *d;
}

Result<Timestamp> Field::Time() const {
  if (!node_.IsScalar()) return Error("expected a timestamp like 2026-01-05T00:00:00Z");
  auto t = ParseTimestamp(node_.Scalar());
  if (!t.ok()) return Error(Message(t.status()));
  return *t;
}

Result<std::vector<std::string>> Field::StringList() const {
  std::vector<std::string> out;
  if (node_.IsScalar()) {
    for (auto s : Split(node_.Scalar(), ',', /*skip_empty=*/true)) {
      out.push_back(std::string(StripWhitespace(s)));
    }
    return out;
  }
  if (!node_.IsSequence()) return Error("expected a list");
  for (size_t i = 0; i < node_.size(); ++i) {
    TIDE_ASSIGN_OR_RETURN(std::string s, At(i).String());
    out.push_back(std::move(s));
  }
  return out;
}

const date::time_zone* FindZone(const std::string& name) {
  try {
    return date::locate_zone(name);
  } catch (const std::exception&) {
    return nullptr;
  }
}

std::string UnknownZone(const std::string& name) {
  return StrCat("unknown time zone '", name, "'; use an IANA name like Asia/Shanghai or UTC");
}

Result<const date::time_zone*> Zone(const Field& f, const std::string& name) {
  if (const date::time_zone* z = FindZone(name)) return z;
  return f.Error(UnknownZone(name));
}

}  // namespace tide::config
