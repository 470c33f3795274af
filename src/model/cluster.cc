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

bool MigConfig::Offers(int units) const {
  for (const auto& p : profiles) {
    if (SliceUnits(p) == units) return true;
  }
  return false;
}

int SliceUnits(std::string_view profile) {
  // "<n>g.<m>gb"
  const size_t g = profile.find('g');
  if (g == 0 || g == std::string_view::npos || g + 1 >= profile.size() || profile[g + 1] != '.') return 0;
  int n = 0;
  for (size_t i = 0; i < g; ++i) {
    if (profile[i] < '0' || profile[i] > '9') return 0;
    n = n * 10 + (profile[i] - '0');
  }
  return (n == 1 || n == 2 || n == 3 || n == 4 || n == 7) ? n : 0;
}

int ClusterSpec::RegionIndex(std::string_view name) const {
  for (size_t i = 0; i < regions.size(); ++i) {
    if (regions[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

double ClusterSpec::EgressCost(const JobSpec& job, int pool) const {
  if (job.data_region.empty() || (job.data_gb <= 0 && job.output_gb <= 0)) return 0;
  const std::string& there = pools[pool].region;
  if (there == job.data_region) return 0;
  const int home = RegionIndex(job.data_region), away = RegionIndex(there);
  const double out_of_home = home >= 0 ? regions[home].egress_per_gb : 0;
  const double out_of_away = away >= 0 ? regions[away].egress_per_gb : 0;
  return job.data_gb * out_of_home + job.output_gb * out_of_away;
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

double ProgressOf(const ClusterState& state, const Job& job, Timestamp t) {
  if (state.progress == nullptr) return job.progress;
  double progress, saved;
  state.progress->ProgressAt(job, t, &progress, &saved);
  return progress;
}

double UnsavedWorkOf(const ClusterState& state, const Job& job, Timestamp t) {
  if (state.progress == nullptr) return job.UnsavedWork();
  double progress, saved;
  state.progress->ProgressAt(job, t, &progress, &saved);
  return progress - saved;
}

}  // namespace tide::model
