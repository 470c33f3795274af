#include "config/config.h"
#include "core/strings.h"

#include <fstream>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

#include "yaml-cpp/yaml.h"

namespace tide::config {
namespace {

// A YAML node with the path that led to it, for error messages.
class Field {
 public:
  Field(const YAML::Node& node, std::string path, const std::string* file)
      : node_(node), path_(std::move(path)), file_(file) {}

  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }
  bool IsMap() const { return node_.IsMap(); }
  bool IsSeq() const { return node_.IsSequence(); }
  bool IsScalar() const { return node_.IsScalar(); }

  Status Error(std::string_view what) const {
    const YAML::Mark m = node_.Mark();
    // The top level has no path: "file:1:1: no pools", not "file:1:1: : no pools".
    const std::string field = path_.empty() ? std::string() : StrCat(path_, ": ");
    if (m.is_null()) return absl::InvalidArgumentError(StrCat(*file_, ": ", field, what));
    return absl::InvalidArgumentError(StrCat(*file_, ":", m.line + 1, ":", m.column + 1, ": ", field, what));
  }

  // Child field of a map; absent children are not an error here.
  std::optional<Field> Get(std::string_view key) const {
    if (!node_.IsMap()) return std::nullopt;
    YAML::Node child = node_[std::string(key)];
    if (!child.IsDefined() || child.IsNull()) return std::nullopt;
    return Field(child, path_.empty() ? std::string(key) : StrCat(path_, ".", key), file_);
  }

  Field At(size_t i) const { return Field(node_[i], StrCat(path_, "[", i, "]"), file_); }
  size_t size() const { return node_.size(); }

  // Rejects keys not in `known`, suggesting the nearest.
  Status OnlyKeys(std::initializer_list<std::string_view> known) const {
    if (!node_.IsMap()) return Error("expected a mapping (key: value lines)");
    std::set<std::string> seen;
    for (auto it = node_.begin(); it != node_.end(); ++it) {
      const std::string key = it->first.as<std::string>();
      if (!seen.insert(key).second) {
        Field f(it->first, path_.empty() ? key : StrCat(path_, ".", key), file_);
        return f.Error("given twice; a key may appear once");
      }
      bool ok = false;
      for (auto k : known) ok |= (k == key);
      if (!ok) {
        Field f(it->first, path_.empty() ? key : StrCat(path_, ".", key), file_);
        return f.Error(StrCat("unknown field; expected one of: ", StrJoin(known, ", ")));
      }
    }
    return OkStatus();
  }

  Result<std::string> String() const {
    if (!node_.IsScalar()) return Error("expected a single value");
    return node_.Scalar();
  }

  Result<int64_t> Int(int64_t lo, int64_t hi) const {
    if (!node_.IsScalar()) return Error("expected a whole number");
    int64_t v;
    if (!YAML::convert<int64_t>::decode(node_, v)) {
      return Error(StrCat("expected a whole number, got '", node_.Scalar(), "'"));
    }
    if (v < lo || v > hi) return Error(StrCat("must be between ", lo, " and ", hi, ", got ", v));
    return v;
  }

  Result<double> Number(double lo, double hi) const {
    if (!node_.IsScalar()) return Error("expected a number");
    double v;
    if (!YAML::convert<double>::decode(node_, v) || std::isnan(v)) {
      return Error(StrCat("expected a number, got '", node_.Scalar(), "'"));
    }
    if (v < lo || v > hi) return Error(StrCat("must be between ", lo, " and ", hi, ", got ", node_.Scalar()));
    return v;
  }

  Result<bool> Bool() const {
    bool v;
    if (!node_.IsScalar() || !YAML::convert<bool>::decode(node_, v)) {
      return Error(StrCat("expected true or false"));
    }
    return v;
  }

  Result<Duration> Dur() const {
    if (!node_.IsScalar()) return Error("expected a duration like 90s, 5m or 2h");
    auto d = ParseDuration(node_.Scalar());
    if (!d.ok()) return Error(Message(d.status()));
    return *d;
  }

  Result<Timestamp> Time() const {
    if (!node_.IsScalar()) return Error("expected a timestamp like 2026-01-05T00:00:00Z");
    auto t = ParseTimestamp(node_.Scalar());
    if (!t.ok()) return Error(Message(t.status()));
    return *t;
  }

  Result<std::vector<std::string>> StringList() const {
    std::vector<std::string> out;
    if (node_.IsScalar()) {
      for (auto s : Split(node_.Scalar(), ',', /*skip_empty=*/true)) {
        out.push_back(std::string(StripWhitespace(s)));
      }
      return out;
    }
    if (!node_.IsSequence()) return Error("expected a list");
    for (size_t i = 0; i < node_.size(); ++i) {
      TIDE_ASSIGN_OR_RETURN(std::string s, At(i).String());
      out.push_back(std::move(s));
    }
    return out;
  }

 private:
  YAML::Node node_;
  std::string path_;
  const std::string* file_;
};

// Reads an optional field into `out` with `read`.
template <typename T, typename F>
Status Opt(const Field& parent, std::string_view key, T* out, F read) {
  if (auto f = parent.Get(key)) {
    TIDE_ASSIGN_OR_RETURN(*out, read(*f));
  }
  return OkStatus();
}

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

Status ParsePool(const Field& f, const std::vector<model::InstanceType>& types, model::NodePool* p) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"name", "instance_type", "tier", "region", "price_per_hour", "min_nodes",
                                   "max_nodes", "nodes", "boot_delay", "priority"}));
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
  if (auto n = f.Get("priority")) {
    TIDE_ASSIGN_OR_RETURN(v, n->Int(-1000000, 1000000));
    p->priority = static_cast<int>(v);
  }
  return OkStatus();
}

Status ParseAutoscaler(const Field& f, autoscale::AutoscalerOptions* o) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"scan_interval", "pending_threshold", "pending_grace", "gang_aware", "expanders",
                                   "max_pools_per_pass", "release_lookahead", "idle_release_after", "unneeded_time", "suspend_time",
                                   "release_reserved", "scale_up", "scale_down"}));
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
  for (const char* key : {"idle_release_after", "unneeded_time", "suspend_time"}) {
    TIDE_RETURN_IF_ERROR(Opt(f, key, &o->scale_down.idle.idle_after, [](const Field& x) { return x.Dur(); }));
  }
  TIDE_RETURN_IF_ERROR(
      Opt(f, "release_reserved", &o->scale_down.idle.release_reserved, [](const Field& x) { return x.Bool(); }));
  TIDE_RETURN_IF_ERROR(Opt(f, "scale_up", &o->scale_up.enabled, [](const Field& x) { return x.Bool(); }));
  TIDE_RETURN_IF_ERROR(Opt(f, "scale_down", &o->scale_down.enabled, [](const Field& x) { return x.Bool(); }));
  return OkStatus();
}

Status ParsePolicies(const Field& f, const model::ClusterSpec& cluster, autoscale::PolicyDefaults* d) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"compare", "tide", "reactive", "slurm_powersave", "fixed"}));
  std::optional<Field> compare = f.Get("compare");
  if (compare) {
    TIDE_ASSIGN_OR_RETURN(d->compare, compare->StringList());
  }
  if (auto t = f.Get("tide")) TIDE_RETURN_IF_ERROR(ParseAutoscaler(*t, &d->tide));
  if (auto r = f.Get("reactive")) TIDE_RETURN_IF_ERROR(ParseAutoscaler(*r, &d->reactive));
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

Result<Config> Parse(const YAML::Node& root, const std::string& name) {
  Config c;
  c.source = name;
  Field top(root, "", &c.source);
  if (!root.IsDefined() || root.IsNull()) return absl::InvalidArgumentError(StrCat(name, ": the file is empty"));
  TIDE_RETURN_IF_ERROR(top.OnlyKeys({"currency", "simulation", "instance_types", "pools", "priority_classes",
                                     "default_priority_class", "scheduler", "policies"}));
  TIDE_RETURN_IF_ERROR(Opt(top, "currency", &c.cluster.currency, [](const Field& x) { return x.String(); }));

  if (auto s = top.Get("simulation")) {
    TIDE_RETURN_IF_ERROR(s->OnlyKeys({"seed", "start", "gpus_per_worker_max"}));
    if (auto seed = s->Get("seed")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, seed->Int(0, INT64_MAX));
      c.simulation.seed = static_cast<uint64_t>(v);
    }
    TIDE_RETURN_IF_ERROR(Opt(*s, "start", &c.simulation.start, [](const Field& x) { return x.Time(); }));
    if (auto g = s->Get("gpus_per_worker_max")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, g->Int(0, 64));
      c.simulation.gpus_per_worker_max = static_cast<int>(v);
    }
  }

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
    TIDE_RETURN_IF_ERROR(ParsePool(f, types, &p));
    if (c.cluster.PoolIndex(p.name) >= 0) return f.Error(StrCat("pool '", p.name, "' is defined twice"));
    c.cluster.pools.push_back(std::move(p));
  }

  if (auto pc = top.Get("priority_classes")) {
    if (!pc->IsSeq() || pc->size() == 0) return pc->Error("expected a non-empty list of priority classes");
    for (size_t i = 0; i < pc->size(); ++i) {
      Field f = pc->At(i);
      TIDE_RETURN_IF_ERROR(f.OnlyKeys({"name", "value", "preemptible", "protected"}));
      model::PriorityClass cls;
      auto n = f.Get("name");
      if (!n) return f.Error("a priority class needs a name");
      TIDE_ASSIGN_OR_RETURN(cls.name, n->String());
      if (c.cluster.PriorityClassIndex(cls.name) >= 0) {
        return f.Error(StrCat("priority class '", cls.name, "' is defined twice"));
      }
      if (auto v = f.Get("value")) {
        TIDE_ASSIGN_OR_RETURN(int64_t x, v->Int(-1000000000, 1000000000));
        cls.value = static_cast<int>(x);
      }
      TIDE_RETURN_IF_ERROR(Opt(f, "preemptible", &cls.preemptible, [](const Field& x) { return x.Bool(); }));
      TIDE_RETURN_IF_ERROR(Opt(f, "protected", &cls.protect, [](const Field& x) { return x.Bool(); }));
      c.cluster.priority_classes.push_back(std::move(cls));
    }
  } else {
    c.cluster.priority_classes = {{"high", 100, false, false}, {"normal", 50, false, false}, {"low", 10, true, false}};
  }
  c.cluster.default_priority_class = c.cluster.PriorityClassIndex("normal");
  if (auto d = top.Get("default_priority_class")) {
    TIDE_ASSIGN_OR_RETURN(std::string s, d->String());
    c.cluster.default_priority_class = c.cluster.PriorityClassIndex(s);
    if (c.cluster.default_priority_class < 0) return d->Error(StrCat("no priority class named '", s, "'"));
  }
  if (c.cluster.default_priority_class < 0) c.cluster.default_priority_class = 0;

  if (auto s = top.Get("scheduler")) {
    TIDE_RETURN_IF_ERROR(s->OnlyKeys({"backfill"}));
    TIDE_RETURN_IF_ERROR(Opt(*s, "backfill", &c.policies.scheduler.backfill, [](const Field& x) { return x.Bool(); }));
  }
  if (auto p = top.Get("policies")) TIDE_RETURN_IF_ERROR(ParsePolicies(*p, c.cluster, &c.policies));
  return c;
}

}  // namespace

Result<Config> ParseConfig(const std::string& text, const std::string& name) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        StrCat(name, ":", e.mark.line + 1, ":", e.mark.column + 1, ": YAML syntax error: ", e.msg));
  }
  try {
    return Parse(root, name);
  } catch (const YAML::Exception& e) {
    // yaml-cpp throws on shapes we did not expect; keep the position.
    return absl::InvalidArgumentError(
        StrCat(name, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  }
}

Result<Config> LoadConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(StrCat(path, ": cannot open the configuration file"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseConfig(ss.str(), path);
}

}  // namespace tide::config
