// Reconcile: brings the state store in line with the provider at the start
// of every loop (and so at the first loop after a crash): creates that were
// in flight when tide stopped are adopted if the provider has an instance
// with their key and abandoned if not; deletes in flight are finished
// (deletes are idempotent); instances the provider has and the store does
// not are adopted (logged, and held while their node has not joined: never
// deleted for being unknown), except ones the store has as gone, which are
// left alone; live instances the provider no
// longer has are closed as lost (on a spot pool, counted as an
// interruption). A create cut by its deadline is pending too, and settled
// the same way. docs/live.md, "Crash recovery" and "Faults".
#ifndef TIDE_CONTROLLER_RECONCILE_H_
#define TIDE_CONTROLLER_RECONCILE_H_

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "apply/applier.h"
#include "backends/workload.h"
#include "config/config.h"
#include "controller/store.h"
#include "providers/provider.h"

namespace tide::controller {

using LogFn = std::function<void(const std::string&)>;

// The nodes of live instances tide adopted without a record of buying them
// (`records`' idempotency key "") that do not answer in `obs`: held, neither
// capacity nor given back, until they join (Memory::held). Pure.
std::set<std::string> HeldNodes(const backends::Observation& obs, const std::vector<InstanceRecord>& records);

// Errors of the store are returned (the loop then acts on nothing); a
// provider delete that fails is counted in `stats` and tried again next loop.
Status Reconcile(const config::Config& config, const backends::Observation& obs,
                 const std::vector<providers::Instance>& instances, Store* store, providers::CloudProvider* provider,
                 Timestamp now, apply::ApplyStats* stats, const LogFn& log);

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_RECONCILE_H_
