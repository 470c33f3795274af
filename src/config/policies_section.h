// The policies' sections: `scheduler` and `policies` (tide's and the
// baselines' options, the variants, the policies compared), per
// docs/configuration.md. Internal to config/.
#ifndef TIDE_CONFIG_POLICIES_SECTION_H_
#define TIDE_CONFIG_POLICIES_SECTION_H_

#include "autoscale/policy.h"
#include "config/field.h"
#include "core/status.h"
#include "model/cluster.h"

namespace tide::config {

// `scheduler:` into d->scheduler.
Status ParseScheduler(const Field& f, autoscale::PolicyDefaults* d);

// `policies:` into `d`; pool names are checked against `cluster`, and every
// name under `compare` must make a policy.
Status ParsePolicies(const Field& f, const model::ClusterSpec& cluster, autoscale::PolicyDefaults* d);

}  // namespace tide::config

#endif  // TIDE_CONFIG_POLICIES_SECTION_H_
