// Spot availability traces (../shared/traces/spot-bamboo), read as a supply
// series: how many spot instances can run, over time.
//
//   bamboo  time_ms,add|remove,nodeN      an EC2 spot fleet's joins and
//                                          preemptions; supply = nodes alive
//   gcloud  YYYY-MM-DD, HH:MM:SS, count    available instances over time
//   aws     hours,count                    running requested instances
// Offsets count from the trace's first point. `auto` tells them apart by
// the first data row.
#ifndef TIDE_TRACE_SPOT_H_
#define TIDE_TRACE_SPOT_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/time.h"

namespace tide::trace {

// One point of a spot availability series: from `offset` after the trace's
// own start, `available` instances can run.
struct SupplyPoint {
  Duration offset;
  int available;
};

// The series in the file at `path`, in `format` (auto, bamboo, gcloud,
// aws). NotFound if it cannot be opened; InvalidArgument "path:line: ..." if
// a row does not parse, or if the file is empty or its format unknown.
Result<std::vector<SupplyPoint>> ReadSpotSupply(const std::string& path, std::string_view format = "auto");

// InvalidArgument ("unknown spot trace format 'X'; known: ...") unless
// `format` is one ReadSpotSupply reads. Reads nothing.
Status CheckSpotSupplyFormat(std::string_view format);

}  // namespace tide::trace

#endif  // TIDE_TRACE_SPOT_H_
