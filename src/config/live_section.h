// The `live:` section (docs/live.md): the workload-manager backend, what
// tide does with live jobs, Slurm, the provider, Prometheus and HTTP.
// Internal to config/.
#ifndef TIDE_CONFIG_LIVE_SECTION_H_
#define TIDE_CONFIG_LIVE_SECTION_H_

#include <string>
#include <vector>

#include "config/field.h"
#include "config/live.h"
#include "core/status.h"
#include "model/cluster.h"

namespace tide::config {

// `live:` into `l`; relative paths count from `config_path`'s folder, class
// names are checked against `cluster`. Keys that moved (live.slurm.classes,
// protect_comment, checkpoint_signal, checkpoint_grace, now under
// live.jobs) are read where they went, and each adds a line to `notes`;
// given under both names, they are an error naming both.
Status ParseLive(const Field& f, const std::string& config_path, const model::ClusterSpec& cluster, LiveSettings* l,
                 std::vector<std::string>* notes);

}  // namespace tide::config

#endif  // TIDE_CONFIG_LIVE_SECTION_H_
