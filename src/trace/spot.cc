#include "trace/spot.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "core/strings.h"
#include "core/time.h"
#include "trace/reader.h"

namespace tide::trace {
namespace {

// More spot instances at once than any one market offers: a malformed row.
constexpr int kMaxSpotInstances = 1 << 20;

Status LineError(const std::string& path, int64_t line, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(path, ":", line, ": ", Shown(what, 2000)));
}

}  // namespace

Status CheckSpotSupplyFormat(std::string_view format) {
  for (std::string_view known : {"auto", "bamboo", "gcloud", "aws"}) {
    if (format == known) return OkStatus();
  }
  return absl::InvalidArgumentError(StrCat("unknown spot trace format '", format, "'; known: auto, bamboo, gcloud, aws"));
}

Result<std::vector<SupplyPoint>> ReadSpotSupply(const std::string& path, std::string_view format) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(StrCat(path, ": cannot open the spot supply trace"));
  std::string fmt(format), line;
  std::vector<std::pair<int64_t, std::vector<std::string>>> rows;  // (line number, fields)
  int64_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (StripWhitespace(line).empty() || StripWhitespace(line).front() == '#') continue;
    std::vector<std::string> f;
    for (auto part : Split(line, ',')) f.emplace_back(StripWhitespace(part));
    rows.emplace_back(n, std::move(f));
  }
  if (rows.empty()) return absl::InvalidArgumentError(StrCat(path, ": the spot supply trace is empty"));
  if (fmt == "auto") {
    const auto& f = rows.front().second;
    if (f.size() == 3 && (f[1] == "add" || f[1] == "remove")) {
      fmt = "bamboo";
    } else if (f.size() == 3 && Contains(f[0], "-")) {
      fmt = "gcloud";
    } else if (f.size() == 2) {
      fmt = "aws";
    } else {
      return LineError(path, rows.front().first,
                       "cannot tell the spot trace format; expected time_ms,add|remove,node (bamboo), "
                       "date, time, count (gcloud) or hours,count (aws)");
    }
  }
  std::map<int64_t, int> at;  // offset seconds -> available (the last row at a time wins)
  if (fmt == "bamboo") {
    std::set<std::string> alive;
    for (const auto& [ln, f] : rows) {
      int64_t ms;
      if (f.size() != 3) return LineError(path, ln, "expected 3 fields: time_ms,add|remove,node");
      if (!absl::SimpleAtoi(absl::string_view(f[0].data(), f[0].size()), &ms) || ms < 0) {
        return LineError(path, ln, StrCat("field 'time_ms': expected a non-negative integer, got '", f[0], "'"));
      }
      if (f[1] == "add") {
        alive.insert(f[2]);
      } else if (f[1] == "remove") {
        alive.erase(f[2]);
      } else {
        return LineError(path, ln, StrCat("field 'event': expected add or remove, got '", f[1], "'"));
      }
      at[ms / 1000] = static_cast<int>(alive.size());
    }
  } else if (fmt == "gcloud") {
    Timestamp first = kInfiniteFuture;
    for (const auto& [ln, f] : rows) {
      if (f.size() != 3) return LineError(path, ln, "expected 3 fields: date, time, available_instances");
      auto t = ParseTimestamp(StrCat(f[0], " ", f[1]));
      if (!t.ok()) return LineError(path, ln, StrCat("field 'time': ", Message(t.status())));
      int count;
      if (!ParseInt(f[2], &count) || count < 0) {
        return LineError(path, ln, StrCat("field 'available_instances': expected a count, got '", f[2], "'"));
      }
      if (first == kInfiniteFuture) first = *t;
      if (*t < first) return LineError(path, ln, "field 'time': earlier than the first row");
      at[(*t - first).count()] = count;
    }
  } else if (fmt == "aws") {
    for (const auto& [ln, f] : rows) {
      if (f.size() != 2) return LineError(path, ln, "expected 2 fields: hours,count");
      double hours, count;
      // Bounded as every trace's times are (found by fuzzing: 1e308 hours
      // overflowed, and "nan" passed a test for < 0).
      if (!absl::SimpleAtod(absl::string_view(f[0].data(), f[0].size()), &hours) ||
          !(hours >= 0 && hours * 3600 <= static_cast<double>(kMaxSubmitSeconds))) {
        return LineError(path, ln,
                         StrCat("field 'hours': expected a number from 0 to ", kMaxSubmitSeconds / 3600, ", got '",
                                Shown(f[0]), "'"));
      }
      if (!absl::SimpleAtod(absl::string_view(f[1].data(), f[1].size()), &count) ||
          !(count >= 0 && count <= kMaxSpotInstances)) {
        return LineError(path, ln, StrCat("field 'count': expected a count from 0 to ", kMaxSpotInstances, ", got '",
                                          Shown(f[1]), "'"));
      }
      at[std::llround(hours * 3600)] = static_cast<int>(std::llround(count));
    }
  } else {
    return CheckSpotSupplyFormat(format);
  }
  // Offsets count from the trace's first point.
  std::vector<SupplyPoint> out;
  const int64_t first = at.begin()->first;
  for (const auto& [off, count] : at) out.push_back({Seconds(off - first), count});
  return out;
}

}  // namespace tide::trace
