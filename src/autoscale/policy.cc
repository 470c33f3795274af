#include "autoscale/policy.h"
#include "core/strings.h"

#include <cmath>


namespace tide::autoscale {

namespace {

std::vector<std::string> VariantNames(const PolicyDefaults& d) {
  std::vector<std::string> names;
  for (const auto& [name, options] : d.variants) names.push_back(name);
  return names;
}

// The mechanisms only tide has; baselines run without them.
void TideOnlyOff(AutoscalerOptions* o) {
  o->spot_notice.enabled = false;
  o->preemption.enabled = false;
  o->consolidation.enabled = false;
  o->reclaim.enabled = false;
  o->utilization.enabled = false;
  o->elastic.enabled = false;
  o->forecast.enabled = false;
  o->schedule.rules.clear();
  o->budget.max_nodes = 0;
  o->scale_up.trigger.replace_interrupted_at_once = false;
  o->tiers.spot_fallback_after = Seconds(0);  // no waiting for spot: on-demand at once
  o->scale_up.egress_aware = false;
  o->scale_up.hedge.nodes = 0;
}

}  // namespace

// The component defaults (each component's options struct) are the seed's
// rule; tide's own differ in the settings below. Each was chosen on ITP 2021
// clusters 01-05, Philly and the bundled week: docs/design/defaults.md.
AutoscalerOptions PolicyDefaults::TideDefaults() {
  AutoscalerOptions o;
  o.scale_up.trigger.pending_threshold = 0;
  o.scale_up.trigger.pending_grace = Seconds(0);
  o.scale_up.release_lookahead = Seconds(0);
  o.scale_up.hedge.nodes = 3;
  o.scale_down.idle.idle_after = Minutes(2);
  o.consolidation.enabled = true;
  o.consolidation.quiet_for = Seconds(0);
  o.consolidation.gangs = true;
  return o;
}

AutoscalerOptions PolicyDefaults::SeedDefaults() {
  AutoscalerOptions o;
  o.scale_up.trigger.pending_threshold = 3;
  o.scale_up.trigger.pending_grace = Seconds(30);
  o.scale_up.hedge.nodes = 0;
  o.scale_down.idle.idle_after = Minutes(10);
  o.consolidation.enabled = false;
  return o;
}

AutoscalerOptions PolicyDefaults::ReactiveDefaults() {
  AutoscalerOptions o;
  TideOnlyOff(&o);
  o.scan_interval = Seconds(10);
  o.scale_up.trigger.pending_threshold = 0;
  o.scale_up.trigger.pending_grace = Seconds(0);
  o.scale_up.gang_aware = false;
  o.scale_up.expanders = {"least-waste"};
  o.scale_up.max_pools_per_pass = 1;
  o.scale_up.release_lookahead = Seconds(0);
  o.scale_down.idle.idle_after = Minutes(10);
  return o;
}

AutoscalerOptions PolicyDefaults::PowersaveDefaults() {
  AutoscalerOptions o;
  TideOnlyOff(&o);
  o.scan_interval = Seconds(0);
  o.scale_up.trigger.pending_threshold = 0;
  o.scale_up.trigger.pending_grace = Seconds(0);
  o.scale_up.gang_aware = true;
  o.scale_up.expanders = {"priority"};  // Slurm picks nodes by weight, not price
  o.scale_up.release_lookahead = Seconds(0);
  o.scale_down.idle.idle_after = Minutes(10);
  return o;
}

model::ClusterSpec PolicyProfile::ApplyTo(const model::ClusterSpec& spec) const {
  model::ClusterSpec out = spec;
  if (kind != "fixed") return out;
  for (size_t p = 0; p < out.pools.size(); ++p) {
    auto& pool = out.pools[p];
    if (static_cast<int>(p) == fixed_pool) {
      pool.min_nodes = pool.max_nodes = fixed_nodes;
    } else if (pool.tier != model::Tier::kReserved) {
      pool.max_nodes = pool.min_nodes;
    }
  }
  return out;
}

std::vector<std::string> PolicyNames() { return {"tide", "tide-seed", "reactive", "slurm-powersave", "fixed:N[:pool]"}; }

bool NeedsDemandStats(std::string_view list) {
  for (std::string_view item : Split(list, ',', /*skip_empty=*/true)) {
    item = StripWhitespace(item);
    if (item.starts_with("fixed") && (Contains(item, "peak") || Contains(item, "mean") ||
                                            item == "fixed")) {
      return true;
    }
  }
  return false;
}

Result<PolicyProfile> MakePolicy(std::string_view text, const PolicyDefaults& d, const model::ClusterSpec& spec,
                                 const std::optional<DemandStats>& demand) {
  PolicyProfile p;
  p.name = std::string(StripWhitespace(text));
  p.scheduler = d.scheduler;
  std::vector<std::string> parts;
  for (auto part : Split(p.name, ':')) parts.emplace_back(part);
  const std::string& kind = parts[0];
  auto check = [&](const AutoscalerOptions& o) -> Status { return Autoscaler::Make(o).status(); };
  const AutoscalerOptions* variant = nullptr;
  for (const auto& [name, options] : d.variants) {
    if (name == p.name) variant = &options;
  }
  if (kind != "tide" && kind != "tide-seed" && variant == nullptr) p.scheduler.egress_aware = false;  // baselines place without regard to data
  if (variant != nullptr) {
    p.kind = "tide";
    p.autoscaler = *variant;
    p.scheduler.egress_aware = variant->scale_up.egress_aware;
  } else if (kind == "tide" && parts.size() == 1) {
    p.kind = "tide";
    p.autoscaler = d.tide;
    p.scheduler.egress_aware = d.tide.scale_up.egress_aware;
  } else if (kind == "tide-seed" && parts.size() == 1) {
    p.kind = "tide";
    p.autoscaler = d.seed;
    p.scheduler.egress_aware = d.seed.scale_up.egress_aware;
  } else if (kind == "reactive" && parts.size() == 1) {
    p.kind = "reactive";
    p.autoscaler = d.reactive;
  } else if ((kind == "slurm-powersave" || kind == "powersave") && parts.size() == 1) {
    p.kind = "slurm-powersave";
    p.autoscaler = d.powersave;
    p.scheduler.place_on_provisioning = true;
    p.start_tick = d.powersave_start_tick;
  } else if (kind == "fixed" && parts.size() <= 3) {
    p.kind = "fixed";
    TideOnlyOff(&p.autoscaler);
    p.autoscaler.scale_up.enabled = false;
    p.autoscaler.scale_down.enabled = false;
    p.autoscaler.scan_interval = Seconds(0);
    const std::string pool_name = parts.size() == 3 ? parts[2] : d.fixed_pool;
    if (!pool_name.empty()) {
      p.fixed_pool = spec.PoolIndex(pool_name);
      if (p.fixed_pool < 0) {
        return absl::InvalidArgumentError(StrCat("policy '", p.name, "': no pool named '", pool_name, "'"));
      }
    } else {
      for (size_t i = 0; i < spec.pools.size(); ++i) {
        if (spec.pools[i].tier == model::Tier::kReserved) continue;
        if (p.fixed_pool < 0 || spec.pools[i].type.gpus > spec.pools[p.fixed_pool].type.gpus) {
          p.fixed_pool = static_cast<int>(i);
        }
      }
      if (p.fixed_pool < 0) {
        return absl::InvalidArgumentError(StrCat("policy '", p.name, "': the cluster has no non-reserved pool"));
      }
    }
    const std::string size = parts.size() >= 2 ? parts[1] : "peak";
    const int per_node = spec.pools[p.fixed_pool].type.gpus;
    if (size == "peak" || size == "mean") {
      if (!demand) return absl::InvalidArgumentError(StrCat("policy '", p.name, "' needs workload statistics"));
      // Reserved capacity is part of the fixed cluster too; size the rest.
      int64_t reserved_gpus = 0;
      for (const auto& pool : spec.pools) {
        if (pool.tier == model::Tier::kReserved) reserved_gpus += int64_t{pool.min_nodes} * pool.type.gpus;
      }
      const double want = size == "peak" ? static_cast<double>(demand->peak_gpus) : demand->mean_gpus;
      const double rest = std::max(0.0, want - static_cast<double>(reserved_gpus));
      p.fixed_nodes = static_cast<int>(std::ceil(rest / per_node));
    } else if (!ParseInt(size, &p.fixed_nodes) || p.fixed_nodes < 0) {
      return absl::InvalidArgumentError(
          StrCat("policy '", p.name, "': expected fixed:N with N a node count, or fixed:peak / fixed:mean"));
    }
    p.description = StrCat(p.fixed_nodes, " x ", spec.pools[p.fixed_pool].name);
    if (size == "peak" || size == "mean") {
      StrAppend(&p.description, " (", size, " demand ",
                      size == "peak" ? static_cast<double>(demand->peak_gpus) : std::round(demand->mean_gpus),
                      " GPUs)");
    }
  } else {
    return absl::InvalidArgumentError(
        StrCat("unknown policy '", p.name, "'; known: ", StrJoin(PolicyNames(), ", "),
               d.variants.empty() ? "" : StrCat("; variants: ", StrJoin(VariantNames(d), ", "))));
  }
  TIDE_RETURN_IF_ERROR(check(p.autoscaler));
  return p;
}

Result<std::vector<PolicyProfile>> MakePolicies(std::string_view list, const PolicyDefaults& defaults,
                                                const model::ClusterSpec& spec,
                                                const std::optional<DemandStats>& demand) {
  std::vector<PolicyProfile> out;
  for (std::string_view item : Split(list, ',', /*skip_empty=*/true)) {
    TIDE_ASSIGN_OR_RETURN(PolicyProfile p, MakePolicy(item, defaults, spec, demand));
    for (const auto& q : out) {
      if (q.name == p.name) return absl::InvalidArgumentError(StrCat("policy '", p.name, "' listed twice"));
    }
    out.push_back(std::move(p));
  }
  if (out.empty()) return absl::InvalidArgumentError("no policy to run; list one, e.g. --compare fixed:peak,tide");
  return out;
}

}  // namespace tide::autoscale
