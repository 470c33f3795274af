#include "backends/backend.h"

#include <algorithm>
#include <string_view>

namespace tide::backends {

bool ObservedNode::Has(std::string_view flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

bool ObservedNode::Drained() const { return Has("DRAIN") || state == "drained" || state == "draining"; }

bool ObservedNode::PoweredDown() const { return Has("POWERED_DOWN") && !Has("POWERING_UP"); }

bool ObservedNode::Responding() const {
  // "future" and "unknown" are nodes whose slurmd has not registered yet.
  if (state == "down" || state == "future" || state == "unknown") return false;
  return !Has("POWERED_DOWN") && !Has("POWERING_UP") && !Has("NOT_RESPONDING");
}

}  // namespace tide::backends
