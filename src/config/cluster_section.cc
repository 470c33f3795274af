#include "config/cluster_section.h"

#include <optional>
#include <utility>

#include "core/strings.h"

namespace tide::config {
namespace {

Status ParseInstanceType(const Field& f, model::InstanceType* t) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"name", "gpus", "gpu_model", "cpus", "memory_gib"}));
  TIDE_RETURN_IF_ERROR(Opt(f, "name", &t->name, [](const Field& x) { return x.String(); }));
  int64_t v;
  if (auto g = f.Get("gpus")) {
    TIDE_ASSIGN_OR_RETURN(v, g->Int(1, 64));
    t->gpus = static_cast<int>(v);
  }
  TIDE_RETURN_IF_ERROR(Opt(f, "gpu_model", &t->gpu_model, [](const Field& x) { return x.String(); }));
  if (auto c = f.Get("cpus")) {
    TIDE_ASSIGN_OR_RETURN(v, c->Int(1, 1 << 20));
    t->cpus = static_cast<int>(v);
  }
  if (auto m = f.Get("memory_gib")) {
    TIDE_ASSIGN_OR_RETURN(v, m->Int(1, 1 << 30));
    t->memory_gib = static_cast<int>(v);
  }
  return OkStatus();
}

Status ParseBootDelay(const Field& f, model::BootDelay* b) {
  if (f.IsScalar()) {
    // "3m" (fixed) or "2m-5m" (uniform)
    const std::string s = f.node().Scalar();
    std::vector<std::string_view> parts = Split(s, '-');
    if (parts.size() == 1) {
      TIDE_ASSIGN_OR_RETURN(b->min, f.Dur());
      b->max = b->min;
      b->kind = model::BootDelay::Kind::kFixed;
      return OkStatus();
    }
    auto lo = ParseDuration(StripWhitespace(parts[0]));
    auto hi = parts.size() == 2 ? ParseDuration(StripWhitespace(parts[1])) : lo;
    if (parts.size() != 2 || !lo.ok() || !hi.ok()) {
      return f.Error(StrCat("'", s, "' is not a boot delay; write a duration (3m) or a range (2m-5m)"));
    }
    if (*hi < *lo) return f.Error("the range's upper end is below its lower end");
    b->kind = model::BootDelay::Kind::kUniform;
    b->min = *lo;
    b->max = *hi;
    return OkStatus();
  }
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"distribution", "min", "max", "median", "sigma"}));
  std::string dist = "uniform";
  TIDE_RETURN_IF_ERROR(Opt(f, "distribution", &dist, [](const Field& x) { return x.String(); }));
  if (dist == "uniform") {
    b->kind = model::BootDelay::Kind::kUniform;
  } else if (dist == "fixed") {
    b->kind = model::BootDelay::Kind::kFixed;
  } else if (dist == "lognormal") {
    b->kind = model::BootDelay::Kind::kLogNormal;
    b->min = Seconds(0);
    b->max = Hours(1);
  } else {
    return f.Get("distribution")->Error("expected uniform, fixed or lognormal");
  }
  TIDE_RETURN_IF_ERROR(Opt(f, "min", &b->min, [](const Field& x) { return x.Dur(); }));
  TIDE_RETURN_IF_ERROR(Opt(f, "max", &b->max, [](const Field& x) { return x.Dur(); }));
  TIDE_RETURN_IF_ERROR(Opt(f, "median", &b->median, [](const Field& x) { return x.Dur(); }));
  TIDE_RETURN_IF_ERROR(Opt(f, "sigma", &b->sigma, [](const Field& x) { return x.Number(0, 10); }));
  if (b->kind == model::BootDelay::Kind::kFixed) b->max = b->min;
  if (b->max < b->min) return f.Error("max is below min");
  return OkStatus();
}

Status ParsePool(const Field& f, const std::vector<model::InstanceType>& types, model::NodePool* p,
                 std::optional<std::pair<std::string, Field>>* min_priority) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"name", "instance_type", "tier", "region", "price_per_hour", "min_nodes",
                                   "max_nodes", "nodes", "boot_delay", "priority", "mig", "min_priority"}));
  if (auto m = f.Get("mig")) {
    TIDE_RETURN_IF_ERROR(m->OnlyKeys({"profiles", "reconfigure"}));
    auto profiles = m->Get("profiles");
    if (!profiles) return m->Error("give the MIG profiles the pool offers, e.g. [1g.10gb, 2g.20gb, 3g.40gb, 7g.80gb]");
    TIDE_ASSIGN_OR_RETURN(p->mig.profiles, profiles->StringList());
    for (const auto& name : p->mig.profiles) {
      if (model::SliceUnits(name) == 0) {
        return profiles->Error(StrCat("'", name, "' is not a MIG profile; write <n>g.<m>gb with n in 1, 2, 3, 4, 7"));
      }
    }
    TIDE_RETURN_IF_ERROR(Opt(*m, "reconfigure", &p->mig.reconfigure, [](const Field& x) { return x.Dur(); }));
  }
  auto name = f.Get("name");
  if (!name) return f.Error("a pool needs a name");
  TIDE_ASSIGN_OR_RETURN(p->name, name->String());
  auto it = f.Get("instance_type");
  if (!it) return f.Error(StrCat("pool '", p->name, "' needs an instance_type"));
  if (it->IsScalar()) {
    const std::string tn = it->node().Scalar();
    bool found = false;
    for (const auto& t : types) {
      if (t.name == tn) {
        p->type = t;
        found = true;
      }
    }
    if (!found) {
      std::vector<std::string> names;
      for (const auto& t : types) names.push_back(t.name);
      return it->Error(StrCat("no instance type named '", tn, "'",
                                    names.empty() ? std::string("; define it under instance_types")
                                                  : StrCat("; defined: ", StrJoin(names, ", "))));
    }
  } else {
    TIDE_RETURN_IF_ERROR(ParseInstanceType(*it, &p->type));
    if (p->type.name.empty()) p->type.name = p->name;
  }
  if (auto t = f.Get("tier")) {
    TIDE_ASSIGN_OR_RETURN(std::string s, t->String());
    auto tier = model::ParseTier(s);
    if (!tier.ok()) return t->Error(Message(tier.status()));
    p->tier = *tier;
  }
  TIDE_RETURN_IF_ERROR(Opt(f, "region", &p->region, [](const Field& x) { return x.String(); }));
  auto price = f.Get("price_per_hour");
  if (!price) return f.Error(StrCat("pool '", p->name, "' needs a price_per_hour"));
  TIDE_ASSIGN_OR_RETURN(p->price_per_hour, price->Number(0, 1e9));
  int64_t v;
  if (auto n = f.Get("nodes")) {
    if (f.Get("min_nodes") || f.Get("max_nodes")) return n->Error("give either nodes or min_nodes/max_nodes, not both");
    TIDE_ASSIGN_OR_RETURN(v, n->Int(0, 1000000));
    p->min_nodes = p->max_nodes = static_cast<int>(v);
  }
  if (auto n = f.Get("min_nodes")) {
    TIDE_ASSIGN_OR_RETURN(v, n->Int(0, 1000000));
    p->min_nodes = static_cast<int>(v);
  }
  if (auto n = f.Get("max_nodes")) {
    TIDE_ASSIGN_OR_RETURN(v, n->Int(0, 1000000));
    p->max_nodes = static_cast<int>(v);
    if (p->max_nodes < p->min_nodes) {
      return n->Error(StrCat("must be >= min_nodes (", p->min_nodes, "), got ", p->max_nodes));
    }
  } else if (p->tier == model::Tier::kReserved && !f.Get("nodes")) {
    p->max_nodes = p->min_nodes;
  }
  if (p->max_nodes < p->min_nodes) {
    return f.Error(StrCat("pool '", p->name, "': min_nodes (", p->min_nodes, ") is above max_nodes (",
                                p->max_nodes, ")"));
  }
  if (p->tier == model::Tier::kReserved && p->min_nodes != p->max_nodes) {
    return f.Error(StrCat("pool '", p->name, "' is reserved, a fixed quota paid for whether used or not: give ",
                                "it `nodes: N` (min_nodes = max_nodes)"));
  }
  if (auto b = f.Get("boot_delay")) TIDE_RETURN_IF_ERROR(ParseBootDelay(*b, &p->boot_delay));
  if (auto m = f.Get("min_priority")) {
    // A class name; resolved once the classes are known (see Parse).
    TIDE_ASSIGN_OR_RETURN(std::string name, m->String());
    min_priority->emplace(name, *m);
  }
  if (auto n = f.Get("priority")) {
    TIDE_ASSIGN_OR_RETURN(v, n->Int(-1000000, 1000000));
    p->priority = static_cast<int>(v);
  }
  return OkStatus();
}

}  // namespace

Status ParseRegions(const Field& top, model::ClusterSpec* cluster) {
  if (auto rs = top.Get("regions")) {
    if (!rs->IsSeq()) return rs->Error("expected a list of regions");
    for (size_t i = 0; i < rs->size(); ++i) {
      Field r = rs->At(i);
      TIDE_RETURN_IF_ERROR(r.OnlyKeys({"name", "egress_per_gb"}));
      model::Region region;
      auto n = r.Get("name");
      if (!n) return r.Error("a region needs a name");
      TIDE_ASSIGN_OR_RETURN(region.name, n->String());
      if (cluster->RegionIndex(region.name) >= 0) return r.Error(StrCat("region '", region.name, "' is defined twice"));
      TIDE_RETURN_IF_ERROR(Opt(r, "egress_per_gb", &region.egress_per_gb, [](const Field& x) { return x.Number(0, 1e6); }));
      cluster->regions.push_back(std::move(region));
    }
  }
  return OkStatus();
}

Status ParsePools(const Field& top, model::ClusterSpec* cluster, std::vector<MinPriorityRef>* min_priorities) {
  std::vector<model::InstanceType> types;
  if (auto t = top.Get("instance_types")) {
    if (!t->IsSeq()) return t->Error("expected a list of instance types");
    for (size_t i = 0; i < t->size(); ++i) {
      model::InstanceType it;
      Field f = t->At(i);
      TIDE_RETURN_IF_ERROR(ParseInstanceType(f, &it));
      if (it.name.empty()) return f.Error("an instance type needs a name");
      for (const auto& other : types) {
        if (other.name == it.name) return f.Error(StrCat("instance type '", it.name, "' is defined twice"));
      }
      types.push_back(std::move(it));
    }
  }

  auto pools = top.Get("pools");
  if (!pools) return top.Error("no pools: define at least one under `pools:`");
  if (!pools->IsSeq() || pools->size() == 0) return pools->Error("expected a non-empty list of pools");
  if (pools->size() > 64) return pools->Error("at most 64 pools are supported");
  for (size_t i = 0; i < pools->size(); ++i) {
    model::NodePool p;
    Field f = pools->At(i);
    std::optional<std::pair<std::string, Field>> min_priority;
    TIDE_RETURN_IF_ERROR(ParsePool(f, types, &p, &min_priority));
    if (min_priority) min_priorities->push_back({cluster->pools.size(), min_priority->first, min_priority->second});
    if (cluster->PoolIndex(p.name) >= 0) return f.Error(StrCat("pool '", p.name, "' is defined twice"));
    if (!cluster->regions.empty() && cluster->RegionIndex(p.region) < 0) {
      std::vector<std::string> names;
      for (const auto& r : cluster->regions) names.push_back(r.name);
      return (f.Get("region") ? *f.Get("region") : f)
          .Error(StrCat("region '", p.region, "' is not under `regions:` (", StrJoin(names, ", "), ")"));
    }
    cluster->pools.push_back(std::move(p));
  }
  return OkStatus();
}

Status ParsePriorityClasses(const Field& top, const std::vector<MinPriorityRef>& min_priorities,
                            model::ClusterSpec* cluster) {
  if (auto pc = top.Get("priority_classes")) {
    if (!pc->IsSeq() || pc->size() == 0) return pc->Error("expected a non-empty list of priority classes");
    for (size_t i = 0; i < pc->size(); ++i) {
      Field f = pc->At(i);
      TIDE_RETURN_IF_ERROR(f.OnlyKeys({"name", "value", "preemptible", "protected"}));
      model::PriorityClass cls;
      auto n = f.Get("name");
      if (!n) return f.Error("a priority class needs a name");
      TIDE_ASSIGN_OR_RETURN(cls.name, n->String());
      if (cluster->PriorityClassIndex(cls.name) >= 0) {
        return f.Error(StrCat("priority class '", cls.name, "' is defined twice"));
      }
      if (auto v = f.Get("value")) {
        TIDE_ASSIGN_OR_RETURN(int64_t x, v->Int(-1000000000, 1000000000));
        cls.value = static_cast<int>(x);
      }
      TIDE_RETURN_IF_ERROR(Opt(f, "preemptible", &cls.preemptible, [](const Field& x) { return x.Bool(); }));
      TIDE_RETURN_IF_ERROR(Opt(f, "protected", &cls.protect, [](const Field& x) { return x.Bool(); }));
      cluster->priority_classes.push_back(std::move(cls));
    }
  } else {
    cluster->priority_classes = {{"high", 100, false, false}, {"normal", 50, false, false}, {"low", 10, true, false}};
  }
  cluster->default_priority_class = cluster->PriorityClassIndex("normal");
  if (auto d = top.Get("default_priority_class")) {
    TIDE_ASSIGN_OR_RETURN(std::string s, d->String());
    cluster->default_priority_class = cluster->PriorityClassIndex(s);
    if (cluster->default_priority_class < 0) return d->Error(StrCat("no priority class named '", s, "'"));
  }
  if (cluster->default_priority_class < 0) cluster->default_priority_class = 0;
  for (const auto& ref : min_priorities) {
    const int cls = cluster->PriorityClassIndex(ref.class_name);
    if (cls < 0) return ref.field.Error(StrCat("no priority class named '", ref.class_name, "'"));
    cluster->pools[ref.pool].min_priority = cluster->priority_classes[cls].value;
  }
  return OkStatus();
}

}  // namespace tide::config
