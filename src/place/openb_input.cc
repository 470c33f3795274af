#include "place/openb_input.h"

#include <algorithm>
#include <set>

#include "core/strings.h"
#include "trace/openb.h"

namespace tide::place {

Result<OpenbInput> LoadOpenb(const std::string& nodes_path, const std::string& pods_path) {
  OpenbInput in;
  TIDE_ASSIGN_OR_RETURN(auto nodes, trace::ReadOpenbNodes(nodes_path));
  std::set<std::string> models;
  for (const auto& n : nodes) {
    if (n.gpus > 0) models.insert(n.model);
  }
  in.cluster.models.assign(models.begin(), models.end());
  for (const auto& n : nodes) {
    if (n.gpus == 0) {
      ++in.cpu_nodes;
      continue;
    }
    const auto it = std::find(in.cluster.models.begin(), in.cluster.models.end(), n.model);
    in.cluster.nodes.push_back(
        {n.name, n.cpu_milli, n.memory_mib, n.gpus, static_cast<int>(it - in.cluster.models.begin())});
  }
  if (in.cluster.nodes.empty()) return absl::InvalidArgumentError(StrCat(nodes_path, ": no GPU nodes"));
  TIDE_ASSIGN_OR_RETURN(auto pods, trace::ReadOpenbPods(pods_path));
  for (const auto& p : pods) {
    in.pods.push_back({p.cpu_milli, p.memory_mib, p.num_gpu, p.gpu_milli, MaskOf(in.cluster, p.gpu_models)});
  }
  if (in.pods.empty()) return absl::InvalidArgumentError(StrCat(pods_path, ": no pods"));
  return in;
}

}  // namespace tide::place
