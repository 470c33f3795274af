#include "model/cluster.h"
#include "core/strings.h"

#include <algorithm>


namespace tide::model {

std::string_view TierName(Tier tier) {
  switch (tier) {
    case Tier::kReserved: return "reserved";
    case Tier::kOnDemand: return "on-demand";
    case Tier::kSpot: return "spot";
  }
  return "?";
}

Result<Tier> ParseTier(std::string_view text) {
  std::string t = ToLower(text);
  if (t == "reserved") return Tier::kReserved;
  if (t == "on-demand" || t == "ondemand" || t == "on_demand") return Tier::kOnDemand;
  if (t == "spot" || t == "preemptible") return Tier::kSpot;
  return absl::InvalidArgumentError(
      StrCat("'", text, "' is not a tier; use reserved, on-demand or spot"));
}

Duration BootDelay::Expected() const {
  switch (kind) {
    case Kind::kFixed: return min;
    case Kind::kUniform: return (min + max) / 2;
    case Kind::kLogNormal: return std::clamp(median, min, max);
  }
  return min;
}

std::string BootDelay::Describe() const {
  switch (kind) {
    case Kind::kFixed: return FormatDuration(min);
    case Kind::kUniform: return StrCat(FormatDuration(min), "-", FormatDuration(max));
    case Kind::kLogNormal:
      return StrCat("lognormal(median ", FormatDuration(median), ", sigma ", sigma, ")");
  }
  return "?";
}

int ClusterSpec::PoolIndex(std::string_view name) const {
  for (size_t i = 0; i < pools.size(); ++i) {
    if (pools[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int ClusterSpec::PriorityClassIndex(std::string_view name) const {
  for (size_t i = 0; i < priority_classes.size(); ++i) {
    if (priority_classes[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

int ClusterSpec::MaxGpusPerNode() const {
  int m = 0;
  for (const auto& p : pools) m = std::max(m, p.type.gpus);
  return m;
}

std::string_view NodeStateName(NodeState state) {
  switch (state) {
    case NodeState::kProvisioning: return "provisioning";
    case NodeState::kReady: return "ready";
    case NodeState::kDraining: return "draining";
    case NodeState::kTerminated: return "terminated";
  }
  return "?";
}

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kPending: return "pending";
    case JobState::kStarting: return "starting";
    case JobState::kRunning: return "running";
    case JobState::kStopping: return "stopping";
    case JobState::kCompleted: return "completed";
  }
  return "?";
}

}  // namespace tide::model
