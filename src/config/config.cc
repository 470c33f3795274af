#include "config/config.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "config/cluster_section.h"
#include "config/field.h"
#include "config/live_section.h"
#include "config/policies_section.h"
#include "config/simulation_section.h"
#include "core/strings.h"
#include "trace/spot.h"
#include "yaml-cpp/yaml.h"

namespace tide::config {
namespace {

// The whole file, section by section, in the order the checks have always
// run (so a file with several mistakes reports the same one first).
Result<Config> Parse(const YAML::Node& root, const std::string& name) {
  Config c;
  c.source = name;
  Field top(root, "", &c.source);
  if (!root.IsDefined() || root.IsNull()) return absl::InvalidArgumentError(StrCat(name, ": the file is empty"));
  TIDE_RETURN_IF_ERROR(top.OnlyKeys({"currency", "simulation", "jobs", "regions", "instance_types", "pools",
                                     "priority_classes", "default_priority_class", "scheduler", "policies", "live",
                                     "time_zone"}));
  TIDE_RETURN_IF_ERROR(ParseRegions(top, &c.cluster));
  if (auto j = top.Get("jobs")) TIDE_RETURN_IF_ERROR(ParseJobDefaults(*j, &c.jobs));
  TIDE_RETURN_IF_ERROR(Opt(top, "currency", &c.cluster.currency, [](const Field& x) { return x.String(); }));
  if (auto tz = top.Get("time_zone")) {
    TIDE_ASSIGN_OR_RETURN(c.time_zone, tz->String());
    TIDE_RETURN_IF_ERROR(Zone(*tz, c.time_zone).status());
  }
  if (auto s = top.Get("simulation")) TIDE_RETURN_IF_ERROR(ParseSimulation(*s, name, &c.simulation));

  std::vector<MinPriorityRef> min_priorities;
  TIDE_RETURN_IF_ERROR(ParsePools(top, &c.cluster, &min_priorities));
  TIDE_RETURN_IF_ERROR(ParsePriorityClasses(top, min_priorities, &c.cluster));

  if (auto s = top.Get("scheduler")) TIDE_RETURN_IF_ERROR(ParseScheduler(*s, &c.policies));
  if (auto p = top.Get("policies")) TIDE_RETURN_IF_ERROR(ParsePolicies(*p, c.cluster, &c.policies));
  if (auto l = top.Get("live")) TIDE_RETURN_IF_ERROR(ParseLive(*l, name, c.cluster, &c.live, &c.notes));
  if (c.live.loop_interval == Duration{0}) c.live.loop_interval = std::max(c.policies.tide.scan_interval, Seconds(1));
  return c;
}

}  // namespace

Result<Config> ParseConfig(const std::string& text, const std::string& name) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        StrCat(name, ":", e.mark.line + 1, ":", e.mark.column + 1, ": YAML syntax error: ", Shown(e.msg, 300)));
  }
  try {
    return Parse(root, name);
  } catch (const YAML::Exception& e) {
    // yaml-cpp throws on shapes we did not expect; keep the position.
    return absl::InvalidArgumentError(
        StrCat(name, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  }
}

Status CheckTimeZone(const std::string& name) {
  if (FindZone(name) != nullptr) return OkStatus();
  return absl::InvalidArgumentError(UnknownZone(name));
}

Status ReadSupplyTraces(Config* config) {
  if (!config->simulation.supply_trace) return OkStatus();
  const SupplyTraceFile& t = *config->simulation.supply_trace;
  auto supply = trace::ReadSpotSupply(t.path, t.format);
  // Named where the configuration names the trace, as every error in it is.
  if (!supply.ok()) return absl::InvalidArgumentError(StrCat(t.where, ": ", Message(supply.status())));
  config->simulation.world.spot.supply = std::move(*supply);
  config->simulation.world.spot.supply_source = t.source;
  return OkStatus();
}

Result<Config> LoadConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(StrCat(path, ": cannot open the configuration file"));
  std::stringstream ss;
  ss << in.rdbuf();
  TIDE_ASSIGN_OR_RETURN(Config c, ParseConfig(ss.str(), path));
  TIDE_RETURN_IF_ERROR(ReadSupplyTraces(&c));
  return c;
}

}  // namespace tide::config
