#include "config/policies_section.h"

#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/strings.h"

namespace tide::config {
namespace {

Status ParseSchedule(const Field& f, const model::ClusterSpec& cluster, autoscale::ScheduleOptions* o) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"time_zone", "rules"}));
  if (auto tz = f.Get("time_zone")) {
    TIDE_ASSIGN_OR_RETURN(o->time_zone_name, tz->String());
    TIDE_ASSIGN_OR_RETURN(o->time_zone, Zone(*tz, o->time_zone_name));
  }
  auto rules = f.Get("rules");
  if (!rules) {
    // `rules: []` (or an empty value) switches them off.
    if (f.node()["rules"].IsDefined()) o->rules.clear();
    return OkStatus();
  }
  if (!rules->IsSeq()) return rules->Error("expected a list of rules");
  o->rules.clear();  // a list replaces the rules it would inherit
  for (size_t i = 0; i < rules->size(); ++i) {
    Field r = rules->At(i);
    TIDE_RETURN_IF_ERROR(r.OnlyKeys({"name", "pools", "days", "from", "to", "min_nodes", "max_nodes", "lead", "drain"}));
    autoscale::CronRule rule;
    rule.name = StrCat("rule", i + 1);
    TIDE_RETURN_IF_ERROR(Opt(r, "name", &rule.name, [](const Field& x) { return x.String(); }));
    auto pools = r.Get("pools");
    if (!pools) return r.Error("a rule needs `pools`");
    TIDE_ASSIGN_OR_RETURN(std::vector<std::string> names, pools->StringList());
    for (const auto& n : names) {
      const int p = cluster.PoolIndex(n);
      if (p < 0) return pools->Error(StrCat("no pool named '", n, "'"));
      rule.pools.push_back(p);
    }
    if (auto d = r.Get("days")) {
      TIDE_ASSIGN_OR_RETURN(std::string v, d->String());
      auto days = autoscale::ParseDays(v);
      if (!days.ok()) return d->Error(Message(days.status()));
      rule.days = *days;
    }
    for (auto [key, out] : {std::pair{"from", &rule.from}, {"to", &rule.to}}) {
      auto c = r.Get(key);
      if (!c) return r.Error(StrCat("a rule needs `", key, "` (HH:MM)"));
      TIDE_ASSIGN_OR_RETURN(std::string v, c->String());
      auto m = autoscale::ParseClock(v);
      if (!m.ok()) return c->Error(Message(m.status()));
      *out = *m;
    }
    if (auto m = r.Get("min_nodes")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, m->Int(0, 1000000));
      rule.min_nodes = static_cast<int>(v);
    }
    if (auto m = r.Get("max_nodes")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, m->Int(0, 1000000));
      rule.max_nodes = static_cast<int>(v);
    }
    if (!rule.min_nodes && !rule.max_nodes) return r.Error("a rule sets min_nodes, max_nodes or both");
    if (auto l = r.Get("lead")) {
      TIDE_ASSIGN_OR_RETURN(Duration v, l->Dur());
      rule.lead = v;
    }
    TIDE_RETURN_IF_ERROR(Opt(r, "drain", &rule.drain, [](const Field& x) { return x.Bool(); }));
    o->rules.push_back(std::move(rule));
  }
  return OkStatus();
}

// The keys of a tide options section; a variant may also say `from`.
constexpr std::string_view kAutoscalerKeys[] = {
    "scan_interval", "pending_threshold", "pending_grace", "gang_aware", "expanders", "max_pools_per_pass",
    "release_lookahead", "egress_aware", "idle_release_after", "unneeded_time", "suspend_time", "release_reserved",
    "scale_up", "scale_down", "spot_share", "buy_from", "storage_prefetch", "storage_stagger", "spot_fallback_after",
    "spot_retry_after", "spot_notice", "preemption", "reclaim", "budget", "utilization", "elastic", "schedule",
    "forecast", "consolidation", "boot_hedge", "from"};

Status ParseAutoscaler(const Field& f, const model::ClusterSpec& cluster, autoscale::AutoscalerOptions* o,
                       bool variant = false) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys(std::span(kAutoscalerKeys).first(std::size(kAutoscalerKeys) - (variant ? 0 : 1))));
  TIDE_RETURN_IF_ERROR(Opt(f, "scan_interval", &o->scan_interval, [](const Field& x) { return x.Dur(); }));
  if (auto n = f.Get("pending_threshold")) {
    TIDE_ASSIGN_OR_RETURN(int64_t v, n->Int(0, 1000000));
    o->scale_up.trigger.pending_threshold = static_cast<int>(v);
  }
  TIDE_RETURN_IF_ERROR(
      Opt(f, "pending_grace", &o->scale_up.trigger.pending_grace, [](const Field& x) { return x.Dur(); }));
  TIDE_RETURN_IF_ERROR(Opt(f, "gang_aware", &o->scale_up.gang_aware, [](const Field& x) { return x.Bool(); }));
  if (auto e = f.Get("expanders")) {
    TIDE_ASSIGN_OR_RETURN(o->scale_up.expanders, e->StringList());
    auto chain = autoscale::ExpanderChain::Make(o->scale_up.expanders);
    if (!chain.ok()) return e->Error(Message(chain.status()));
  }
  if (auto n = f.Get("boot_hedge")) {
    TIDE_ASSIGN_OR_RETURN(int64_t v, n->Int(0, 1000));
    o->scale_up.hedge.nodes = static_cast<int>(v);
  }
  if (auto n = f.Get("max_pools_per_pass")) {
    TIDE_ASSIGN_OR_RETURN(int64_t v, n->Int(0, 64));
    o->scale_up.max_pools_per_pass = static_cast<int>(v);
  }
  if (auto r = f.Get("release_lookahead")) {
    if (r->IsScalar() && r->node().Scalar() == "auto") {
      o->scale_up.release_lookahead.reset();
    } else {
      TIDE_ASSIGN_OR_RETURN(Duration d, r->Dur());
      o->scale_up.release_lookahead = d;
    }
  }
  // One option, three spellings (tide's, cluster-autoscaler's, Slurm's): at most one may be given.
  const char* idle_key = nullptr;
  for (const char* key : {"idle_release_after", "unneeded_time", "suspend_time"}) {
    if (auto k = f.Get(key)) {
      if (idle_key) return k->Error(StrCat("the same setting as ", idle_key, "; give only one of them"));
      idle_key = key;
    }
    TIDE_RETURN_IF_ERROR(Opt(f, key, &o->scale_down.idle.idle_after, [](const Field& x) { return x.Dur(); }));
  }
  TIDE_RETURN_IF_ERROR(
      Opt(f, "release_reserved", &o->scale_down.idle.release_reserved, [](const Field& x) { return x.Bool(); }));
  TIDE_RETURN_IF_ERROR(Opt(f, "scale_up", &o->scale_up.enabled, [](const Field& x) { return x.Bool(); }));
  TIDE_RETURN_IF_ERROR(Opt(f, "scale_down", &o->scale_down.enabled, [](const Field& x) { return x.Bool(); }));
  TIDE_RETURN_IF_ERROR(Opt(f, "egress_aware", &o->scale_up.egress_aware, [](const Field& x) { return x.Bool(); }));
  if (auto b = f.Get("buy_from")) {
    TIDE_ASSIGN_OR_RETURN(std::vector<std::string> names, b->StringList());
    o->scale_up.buy_from.clear();
    for (const auto& n : names) {
      const int p = cluster.PoolIndex(n);
      if (p < 0) return b->Error(StrCat("no pool named '", n, "'"));
      o->scale_up.buy_from.push_back(p);
    }
  }
  if (auto sp = f.Get("storage_prefetch")) {
    TIDE_ASSIGN_OR_RETURN(bool v, sp->Bool());
    o->storage.prefetch = v;
  }
  if (auto st = f.Get("storage_stagger")) {
    TIDE_ASSIGN_OR_RETURN(int64_t v, st->Int(0, 1000000));
    o->storage.stagger = static_cast<int>(v);
  }
  TIDE_RETURN_IF_ERROR(Opt(f, "spot_share", &o->tiers.spot_share, [](const Field& x) { return x.Number(0, 1); }));
  TIDE_RETURN_IF_ERROR(Opt(f, "spot_fallback_after", &o->tiers.spot_fallback_after, [](const Field& x) { return x.Dur(); }));
  TIDE_RETURN_IF_ERROR(Opt(f, "spot_retry_after", &o->tiers.spot_retry_after, [](const Field& x) { return x.Dur(); }));
  TIDE_RETURN_IF_ERROR(Opt(f, "spot_notice", &o->spot_notice.enabled, [](const Field& x) { return x.Bool(); }));
  if (auto p = f.Get("preemption")) {
    TIDE_RETURN_IF_ERROR(p->OnlyKeys({"enabled", "after", "before_buying"}));
    TIDE_RETURN_IF_ERROR(Opt(*p, "enabled", &o->preemption.enabled, [](const Field& x) { return x.Bool(); }));
    TIDE_RETURN_IF_ERROR(Opt(*p, "after", &o->preemption.after, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*p, "before_buying", &o->preemption.before_buying, [](const Field& x) { return x.Bool(); }));
  }
  if (auto r = f.Get("reclaim")) {
    TIDE_RETURN_IF_ERROR(r->OnlyKeys({"enabled", "below", "after", "action"}));
    TIDE_RETURN_IF_ERROR(Opt(*r, "enabled", &o->reclaim.enabled, [](const Field& x) { return x.Bool(); }));
    TIDE_RETURN_IF_ERROR(Opt(*r, "below", &o->reclaim.below, [](const Field& x) { return x.Number(0, 1); }));
    TIDE_RETURN_IF_ERROR(Opt(*r, "after", &o->reclaim.after, [](const Field& x) { return x.Dur(); }));
    if (auto a = r->Get("action")) {
      TIDE_ASSIGN_OR_RETURN(std::string v, a->String());
      if (v != "requeue" && v != "cancel") return a->Error("expected requeue or cancel");
      o->reclaim.cancel = v == "cancel";
    }
  }
  if (auto c = f.Get("consolidation")) {
    auto& co = o->consolidation;
    TIDE_RETURN_IF_ERROR(
        c->OnlyKeys({"enabled", "min_run", "min_ratio", "max_unsaved", "headroom_gpus", "headroom_window", "quiet_for",
                     "remaining", "gangs"}));
    TIDE_RETURN_IF_ERROR(Opt(*c, "enabled", &co.enabled, [](const Field& x) { return x.Bool(); }));
    TIDE_RETURN_IF_ERROR(Opt(*c, "min_run", &co.min_run, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*c, "min_ratio", &co.min_ratio, [](const Field& x) { return x.Number(0, 1000); }));
    TIDE_RETURN_IF_ERROR(Opt(*c, "max_unsaved", &co.max_unsaved, [](const Field& x) { return x.Dur(); }));
    if (auto h = c->Get("headroom_gpus")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, h->Int(0, 1000000));
      co.headroom_gpus = static_cast<int>(v);
    }
    TIDE_RETURN_IF_ERROR(Opt(*c, "headroom_window", &co.headroom_window, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*c, "quiet_for", &co.quiet_for, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*c, "gangs", &co.gangs, [](const Field& x) { return x.Bool(); }));
    if (auto r = c->Get("remaining")) {
      TIDE_ASSIGN_OR_RETURN(std::string v, r->String());
      if (v != "age" && v != "expected-end") return r->Error("expected age or expected-end");
      co.remaining = v == "age" ? autoscale::ConsolidationOptions::Remaining::kAge
                                : autoscale::ConsolidationOptions::Remaining::kExpectedEnd;
    }
  }
  if (auto b = f.Get("budget")) {
    TIDE_RETURN_IF_ERROR(b->OnlyKeys({"max_nodes", "window"}));
    if (auto m = b->Get("max_nodes")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, m->Int(0, 1000000));
      o->budget.max_nodes = static_cast<int>(v);
    }
    TIDE_RETURN_IF_ERROR(Opt(*b, "window", &o->budget.window, [](const Field& x) { return x.Dur(); }));
  }
  if (auto u = f.Get("utilization")) {
    TIDE_RETURN_IF_ERROR(u->OnlyKeys({"enabled", "low", "low_for", "high", "high_for", "warmup", "bottleneck_below",
                                      "bottleneck_for"}));
    auto& uo = o->utilization;
    TIDE_RETURN_IF_ERROR(Opt(*u, "enabled", &uo.enabled, [](const Field& x) { return x.Bool(); }));
    TIDE_RETURN_IF_ERROR(Opt(*u, "low", &uo.low, [](const Field& x) { return x.Number(0, 1); }));
    TIDE_RETURN_IF_ERROR(Opt(*u, "low_for", &uo.low_for, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*u, "high", &uo.high, [](const Field& x) { return x.Number(0, 1); }));
    TIDE_RETURN_IF_ERROR(Opt(*u, "high_for", &uo.high_for, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*u, "warmup", &uo.warmup, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*u, "bottleneck_below", &uo.bottleneck_below, [](const Field& x) { return x.Number(0, 1); }));
    TIDE_RETURN_IF_ERROR(Opt(*u, "bottleneck_for", &uo.bottleneck_for, [](const Field& x) { return x.Dur(); }));
    if (uo.low >= uo.high) return u->Error(StrCat("low (", uo.low, ") must be below high (", uo.high, ")"));
  }
  if (auto e = f.Get("elastic")) {
    TIDE_RETURN_IF_ERROR(e->OnlyKeys({"enabled", "cooldown", "lr_rule", "per_worker_batch", "base_lr"}));
    auto& eo = o->elastic;
    TIDE_RETURN_IF_ERROR(Opt(*e, "enabled", &eo.enabled, [](const Field& x) { return x.Bool(); }));
    TIDE_RETURN_IF_ERROR(Opt(*e, "cooldown", &eo.cooldown, [](const Field& x) { return x.Dur(); }));
    if (auto r = e->Get("lr_rule")) {
      TIDE_ASSIGN_OR_RETURN(std::string v, r->String());
      if (v == "linear") {
        eo.lr_rule = autoscale::LrRule::kLinear;
      } else if (v == "sqrt" || v == "square-root") {
        eo.lr_rule = autoscale::LrRule::kSqrt;
      } else {
        return r->Error("expected linear or sqrt");
      }
    }
    if (auto b = e->Get("per_worker_batch")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, b->Int(1, 1 << 24));
      eo.per_worker_batch = static_cast<int>(v);
    }
    TIDE_RETURN_IF_ERROR(Opt(*e, "base_lr", &eo.base_lr, [](const Field& x) { return x.Number(0, 1e6); }));
  }
  if (auto sc = f.Get("schedule")) TIDE_RETURN_IF_ERROR(ParseSchedule(*sc, cluster, &o->schedule));
  if (auto fc = f.Get("forecast")) {
    TIDE_RETURN_IF_ERROR(fc->OnlyKeys({"enabled", "days", "min_days", "horizon", "every", "scale"}));
    auto& fo = o->forecast;
    TIDE_RETURN_IF_ERROR(Opt(*fc, "enabled", &fo.enabled, [](const Field& x) { return x.Bool(); }));
    if (auto d = fc->Get("days")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, d->Int(1, 60));
      fo.days = static_cast<int>(v);
    }
    if (auto d = fc->Get("min_days")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, d->Int(1, 60));
      fo.min_days = static_cast<int>(v);
    }
    if (auto h = fc->Get("horizon")) {
      TIDE_ASSIGN_OR_RETURN(Duration v, h->Dur());
      fo.horizon = v;
    }
    TIDE_RETURN_IF_ERROR(Opt(*fc, "every", &fo.every, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*fc, "scale", &fo.scale, [](const Field& x) { return x.Number(0, 100); }));
    if (fo.min_days > fo.days) {
      return (fc->Get("min_days") ? *fc->Get("min_days") : *fc)
          .Error(StrCat("min_days (", fo.min_days, ") must not exceed days (", fo.days, "): the forecast would never run"));
    }
  }
  return OkStatus();
}

}  // namespace

Status ParseScheduler(const Field& f, autoscale::PolicyDefaults* d) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"backfill"}));
  TIDE_RETURN_IF_ERROR(Opt(f, "backfill", &d->scheduler.backfill, [](const Field& x) { return x.Bool(); }));
  return OkStatus();
}

Status ParsePolicies(const Field& f, const model::ClusterSpec& cluster, autoscale::PolicyDefaults* d) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"compare", "tide", "reactive", "slurm_powersave", "fixed", "variants"}));
  std::optional<Field> compare = f.Get("compare");
  if (compare) {
    TIDE_ASSIGN_OR_RETURN(d->compare, compare->StringList());
  }
  if (auto t = f.Get("tide")) {
    // `policies.tide` sets tide's options, and tide-seed's too: the two differ
    // only in the defaults of what it leaves out.
    TIDE_RETURN_IF_ERROR(ParseAutoscaler(*t, cluster, &d->tide));
    TIDE_RETURN_IF_ERROR(ParseAutoscaler(*t, cluster, &d->seed));
  }
  if (auto r = f.Get("reactive")) TIDE_RETURN_IF_ERROR(ParseAutoscaler(*r, cluster, &d->reactive));
  if (auto v = f.Get("variants")) {
    if (!v->IsMap()) return v->Error("expected a mapping of variant names to tide options");
    for (auto it = v->node().begin(); it != v->node().end(); ++it) {
      const std::string name = it->first.as<std::string>();
      Field field(it->second, StrCat(v->path(), ".", name), &v->file());
      if (name == "tide" || name == "tide-seed" || name == "reactive" || name == "slurm-powersave" ||
          name == "powersave" || name.starts_with("fixed")) {
        return field.Error("a variant needs a name of its own, not a built-in policy's");
      }
      for (const auto& [earlier, unused] : d->variants) {
        if (earlier == name) return field.Error("a second variant of this name");
      }
      // A variant starts from tide's options, or with `from:` from tide-seed's
      // or an earlier variant's.
      autoscale::AutoscalerOptions options = d->tide;
      if (!it->second.IsNull()) {
        if (auto from = field.Get("from")) {
          TIDE_ASSIGN_OR_RETURN(std::string base, from->String());
          const autoscale::AutoscalerOptions* found = base == "tide" ? &d->tide : base == "tide-seed" ? &d->seed : nullptr;
          for (const auto& [earlier, o] : d->variants) {
            if (earlier == base) found = &o;
          }
          if (found == nullptr) {
            std::vector<std::string> known = {"tide", "tide-seed"};
            for (const auto& [earlier, o] : d->variants) known.push_back(earlier);
            return from->Error(StrCat("no policy '", base, "' to start from; known here: ", StrJoin(known, ", ")));
          }
          options = *found;
        }
        TIDE_RETURN_IF_ERROR(ParseAutoscaler(field, cluster, &options, /*variant=*/true));
      }
      d->variants.emplace_back(name, std::move(options));
    }
  }
  if (auto s = f.Get("slurm_powersave")) {
    // Slurm's own knob names, plus start_tick.
    TIDE_RETURN_IF_ERROR(s->OnlyKeys({"suspend_time", "start_tick"}));
    TIDE_RETURN_IF_ERROR(
        Opt(*s, "suspend_time", &d->powersave.scale_down.idle.idle_after, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*s, "start_tick", &d->powersave_start_tick, [](const Field& x) { return x.Dur(); }));
  }
  if (auto x = f.Get("fixed")) {
    TIDE_RETURN_IF_ERROR(x->OnlyKeys({"pool"}));
    if (auto p = x->Get("pool")) {
      TIDE_ASSIGN_OR_RETURN(d->fixed_pool, p->String());
      if (cluster.PoolIndex(d->fixed_pool) < 0) return p->Error(StrCat("no pool named '", d->fixed_pool, "'"));
    }
  }
  if (compare) {
    // Every name must make a policy; sizes from the workload are checked later.
    auto made = autoscale::MakePolicies(StrJoin(d->compare, ","), *d, cluster, autoscale::DemandStats{});
    if (!made.ok()) return compare->Error(Message(made.status()));
  }
  return OkStatus();
}

}  // namespace tide::config
