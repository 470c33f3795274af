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
#include "sim/world.h"

namespace tide::trace {

Result<std::vector<sim::SupplyPoint>> ReadSpotSupply(const std::string& path, std::string_view format = "auto");

}  // namespace tide::trace

#endif  // TIDE_TRACE_SPOT_H_
