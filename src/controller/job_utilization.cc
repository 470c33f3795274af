#include "controller/job_utilization.h"

#include <optional>
#include <utility>

namespace tide::controller {
namespace {

struct Sum {
  double util = 0;
  int series = 0;
  void Add(double u, int n = 1) {
    util += u;
    series += n;
  }
};

// The mean over every name's series, or nothing when one name has none.
std::optional<double> MeanOfAll(const std::vector<std::string>& names, const std::map<std::string, Sum>& sums) {
  Sum all;
  for (const auto& n : names) {
    auto it = sums.find(n);
    if (it == sums.end()) return std::nullopt;
    all.Add(it->second.util, it->second.series);
  }
  if (all.series == 0) return std::nullopt;
  return all.util / all.series;
}

// Whether the job's GPUs are all the GPUs in use on each of its nodes.
bool AloneOnItsNodes(const backends::ObservedJob& j, const backends::Observation& obs) {
  std::map<std::string, int> mine;
  for (const auto& n : j.nodes) mine[n] += j.gpus_per_worker;
  for (const auto& n : obs.nodes) {
    auto it = mine.find(n.name);
    if (it != mine.end() && n.gpus_used != it->second) return false;
  }
  return true;
}

}  // namespace

std::map<std::string, double> JobUtilization(const backends::Observation& obs,
                                             const std::vector<metrics::UtilSample>& samples) {
  std::map<std::string, Sum> by_job, by_pod, by_node;
  for (const auto& s : samples) {
    if (!s.job.empty()) by_job[s.job].Add(s.util);
    if (!s.pod.empty()) by_pod[s.pod].Add(s.util);
  }
  // A node's figure is the mean of its GPUs, each node weighing the same in
  // a job's figure (as many workers per node, as on Slurm).
  for (const auto& [node, util] : metrics::NodeUtilization(samples)) by_node[node].Add(util);

  std::map<std::string, double> out;
  for (const auto& j : obs.jobs) {
    if (j.phase != backends::JobPhase::kRunning || j.nodes.empty()) continue;
    if (auto it = by_job.find(j.key); it != by_job.end()) {
      out[j.key] = it->second.util / it->second.series;
      continue;
    }
    if (!j.members.empty()) {
      if (auto m = MeanOfAll(j.members, by_pod)) {
        out[j.key] = *m;
        continue;
      }
      if (!by_pod.empty() || !AloneOnItsNodes(j, obs)) continue;
    }
    if (auto m = MeanOfAll(j.nodes, by_node)) out[j.key] = *m;
  }
  return out;
}

}  // namespace tide::controller
