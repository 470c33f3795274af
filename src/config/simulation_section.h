// The simulated world's sections: `simulation` (seed, time zero, spot,
// storage, elastic scaling) and `jobs` (defaults for jobs whose trace does
// not say), per docs/configuration.md. Internal to config/.
#ifndef TIDE_CONFIG_SIMULATION_SECTION_H_
#define TIDE_CONFIG_SIMULATION_SECTION_H_

#include <string>

#include "config/config.h"
#include "config/field.h"
#include "core/status.h"

namespace tide::config {

// `simulation:` into `s`. A spot supply trace is only recorded
// (s->supply_trace, its path resolved against `config_path`'s folder);
// nothing is read.
Status ParseSimulation(const Field& f, const std::string& config_path, SimulationSettings* s);

// `jobs:` into `d`.
Status ParseJobDefaults(const Field& f, JobDefaults* d);

}  // namespace tide::config

#endif  // TIDE_CONFIG_SIMULATION_SECTION_H_
