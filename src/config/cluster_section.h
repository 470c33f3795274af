// The cluster's sections: `regions`, `instance_types`, `pools`,
// `priority_classes` and `default_priority_class` (docs/configuration.md).
// Internal to config/; config.cc calls them in the file's reading order.
#ifndef TIDE_CONFIG_CLUSTER_SECTION_H_
#define TIDE_CONFIG_CLUSTER_SECTION_H_

#include <cstddef>
#include <string>
#include <vector>

#include "config/field.h"
#include "core/status.h"
#include "model/cluster.h"

namespace tide::config {

// A pool's `min_priority` names a priority class, and the classes are read
// after the pools: kept here until ParsePriorityClasses resolves it.
struct MinPriorityRef {
  size_t pool;             // index in ClusterSpec::pools
  std::string class_name;  // as written
  Field field;             // where, for the error if no class has that name
};

// `regions` of `top` (none: no egress charges) into cluster->regions.
Status ParseRegions(const Field& top, model::ClusterSpec* cluster);

// `instance_types` and `pools` of `top` into cluster->pools; checks each
// pool's region against cluster->regions (so ParseRegions comes first).
// The pools' min_priority names are appended to `min_priorities`.
Status ParsePools(const Field& top, model::ClusterSpec* cluster, std::vector<MinPriorityRef>* min_priorities);

// `priority_classes` (default: high, normal, low) and
// `default_priority_class` of `top`, then the pools' `min_priority` names.
Status ParsePriorityClasses(const Field& top, const std::vector<MinPriorityRef>& min_priorities,
                            model::ClusterSpec* cluster);

}  // namespace tide::config

#endif  // TIDE_CONFIG_CLUSTER_SECTION_H_
