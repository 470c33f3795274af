#include "backends/workload.h"

namespace tide::backends {

std::string_view JobPhaseName(JobPhase phase) {
  switch (phase) {
    case JobPhase::kWaiting: return "waiting";
    case JobPhase::kHeld: return "held";
    case JobPhase::kStarting: return "starting";
    case JobPhase::kRunning: return "running";
    case JobPhase::kStopping: return "stopping";
    case JobPhase::kDone: return "done";
  }
  return "?";
}

std::string_view NodeConditionName(NodeCondition c) {
  switch (c) {
    case NodeCondition::kBooting: return "booting";
    case NodeCondition::kReady: return "ready";
    case NodeCondition::kCordoned: return "cordoned";
    case NodeCondition::kDraining: return "draining";
    case NodeCondition::kGone: return "gone";
  }
  return "?";
}

std::string_view CauseName(Cause c) {
  switch (c) {
    case Cause::kNone: return "none";
    case Cause::kScaleUp: return "scale-up";
    case Cause::kForecast: return "forecast";
    case Cause::kNotBought: return "not-bought";
    case Cause::kRelease: return "release";
    case Cause::kDrain: return "drain";
    case Cause::kPreemption: return "preemption";
    case Cause::kIdleReclaim: return "idle-reclaim";
    case Cause::kSpotInterruption: return "spot-interruption";
    case Cause::kConsolidation: return "consolidation";
    case Cause::kPlaced: return "placed";
    case Cause::kBackfilled: return "backfilled";
    case Cause::kResize: return "resize";
    case Cause::kOther: return "other";
  }
  return "?";
}

// A refusal travels as ResourceExhausted: a budget said no for now.
Status Refused(std::string_view message) { return absl::ResourceExhaustedError(std::string(message)); }

bool IsRefused(const Status& s) { return absl::IsResourceExhausted(s); }

}  // namespace tide::backends
