#include "config/config.h"
#include "core/strings.h"

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

#include "trace/spot.h"
#include "yaml-cpp/yaml.h"

namespace tide::config {
namespace {

// Levenshtein distance, for "did you mean" on misspelt keys.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// A YAML node with the path that led to it, for error messages.
class Field {
 public:
  Field(const YAML::Node& node, std::string path, const std::string* file)
      : node_(node), path_(std::move(path)), file_(file) {}

  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return *file_; }
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
        std::string_view best;
        size_t best_d = 3;  // suggest only close matches
        for (auto k : known) {
          const size_t d = EditDistance(key, k);
          if (d < best_d) {
            best_d = d;
            best = k;
          }
        }
        return f.Error(StrCat("unknown field", best.empty() ? std::string() : StrCat(" (did you mean '", best, "'?)"),
                              "; expected one of: ", StrJoin(known, ", ")));
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

// The IANA zone `name`; nullptr if the tz database has none.
const date::time_zone* FindZone(const std::string& name) {
  try {
    return date::locate_zone(name);
  } catch (const std::exception&) {
    return nullptr;
  }
}

std::string UnknownZone(const std::string& name) {
  return StrCat("unknown time zone '", name, "'; use an IANA name like Asia/Shanghai or UTC");
}

// The IANA zone `name`, read from field `f`.
Result<const date::time_zone*> Zone(const Field& f, const std::string& name) {
  if (const date::time_zone* z = FindZone(name)) return z;
  return f.Error(UnknownZone(name));
}

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

Status ParseAutoscaler(const Field& f, const model::ClusterSpec& cluster, autoscale::AutoscalerOptions* o) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"scan_interval", "pending_threshold", "pending_grace", "gang_aware", "expanders",
                                   "max_pools_per_pass", "release_lookahead", "egress_aware", "idle_release_after", "unneeded_time",
                                   "suspend_time", "release_reserved", "scale_up", "scale_down", "spot_share", "buy_from",
                                   "storage_prefetch", "storage_stagger",
                                   "spot_fallback_after", "spot_retry_after", "spot_notice", "preemption", "reclaim",
                                   "budget", "utilization", "elastic", "schedule", "forecast", "consolidation",
                                   "boot_hedge"}));
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
                     "remaining"}));
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

Status ParsePolicies(const Field& f, const model::ClusterSpec& cluster, autoscale::PolicyDefaults* d) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"compare", "tide", "reactive", "slurm_powersave", "fixed", "variants"}));
  std::optional<Field> compare = f.Get("compare");
  if (compare) {
    TIDE_ASSIGN_OR_RETURN(d->compare, compare->StringList());
  }
  if (auto t = f.Get("tide")) TIDE_RETURN_IF_ERROR(ParseAutoscaler(*t, cluster, &d->tide));
  if (auto r = f.Get("reactive")) TIDE_RETURN_IF_ERROR(ParseAutoscaler(*r, cluster, &d->reactive));
  if (auto v = f.Get("variants")) {
    if (!v->IsMap()) return v->Error("expected a mapping of variant names to tide options");
    for (auto it = v->node().begin(); it != v->node().end(); ++it) {
      const std::string name = it->first.as<std::string>();
      Field field(it->second, StrCat(v->path(), ".", name), &v->file());
      if (name == "tide" || name == "reactive" || name == "slurm-powersave" || name.starts_with("fixed")) {
        return field.Error("a variant needs a name of its own, not a built-in policy's");
      }
      autoscale::AutoscalerOptions options = d->tide;  // a variant starts from tide's options
      if (!it->second.IsNull()) TIDE_RETURN_IF_ERROR(ParseAutoscaler(field, cluster, &options));
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

Status ParseJobDefaults(const Field& f, JobDefaults* d) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"phases", "checkpoint"}));
  if (auto p = f.Get("phases")) {
    TIDE_RETURN_IF_ERROR(p->OnlyKeys({"load", "load_util", "train_util", "eval_share", "eval_util", "checkpoint_util"}));
    auto& ph = d->phases;
    TIDE_RETURN_IF_ERROR(Opt(*p, "load", &ph.load, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*p, "load_util", &ph.load_util, [](const Field& x) { return x.Number(0, 1); }));
    TIDE_RETURN_IF_ERROR(Opt(*p, "train_util", &ph.train_util, [](const Field& x) { return x.Number(0, 1); }));
    TIDE_RETURN_IF_ERROR(Opt(*p, "eval_share", &ph.eval_share, [](const Field& x) { return x.Number(0, 1); }));
    TIDE_RETURN_IF_ERROR(Opt(*p, "eval_util", &ph.eval_util, [](const Field& x) { return x.Number(0, 1); }));
    TIDE_RETURN_IF_ERROR(Opt(*p, "checkpoint_util", &ph.checkpoint_util, [](const Field& x) { return x.Number(0, 1); }));
  }
  if (auto c = f.Get("checkpoint")) {
    TIDE_RETURN_IF_ERROR(c->OnlyKeys({"interval", "cost"}));
    TIDE_RETURN_IF_ERROR(Opt(*c, "interval", &d->checkpoint.interval, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*c, "cost", &d->checkpoint.cost, [](const Field& x) { return x.Dur(); }));
  }
  return OkStatus();
}

// simulation.spot / storage / elastic. Relative paths count from the configuration's folder.
Status ParseWorld(const Field& f, const std::string& config_path, sim::WorldOptions* w) {
  if (auto sp = f.Get("spot")) {
    TIDE_RETURN_IF_ERROR(sp->OnlyKeys({"mean_time_to_interrupt", "notice", "supply", "supply_format", "supply_scale"}));
    TIDE_RETURN_IF_ERROR(
        Opt(*sp, "mean_time_to_interrupt", &w->spot.mean_time_to_interrupt, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*sp, "notice", &w->spot.notice, [](const Field& x) { return x.Dur(); }));
    TIDE_RETURN_IF_ERROR(Opt(*sp, "supply_scale", &w->spot.supply_scale, [](const Field& x) { return x.Number(0, 1e6); }));
    if (auto path = sp->Get("supply")) {
      TIDE_ASSIGN_OR_RETURN(std::string rel, path->String());
      std::string format = "auto";
      TIDE_RETURN_IF_ERROR(Opt(*sp, "supply_format", &format, [](const Field& x) { return x.String(); }));
      const std::filesystem::path full = std::filesystem::path(config_path).parent_path() / rel;
      auto supply = trace::ReadSpotSupply(full.string(), format);
      if (!supply.ok()) return path->Error(Message(supply.status()));
      w->spot.supply = std::move(*supply);
      w->spot.supply_source = rel;
    }
  }
  if (auto st = f.Get("storage")) {
    TIDE_RETURN_IF_ERROR(st->OnlyKeys({"load_gb", "bandwidth_gbps", "node_gbps", "prefetch", "max_concurrent"}));
    TIDE_RETURN_IF_ERROR(Opt(*st, "load_gb", &w->storage.load_gb, [](const Field& x) { return x.Number(0, 1e9); }));
    TIDE_RETURN_IF_ERROR(
        Opt(*st, "bandwidth_gbps", &w->storage.bandwidth_gbps, [](const Field& x) { return x.Number(1e-6, 1e9); }));
    TIDE_RETURN_IF_ERROR(Opt(*st, "node_gbps", &w->storage.node_gbps, [](const Field& x) { return x.Number(1e-6, 1e9); }));
    TIDE_RETURN_IF_ERROR(Opt(*st, "prefetch", &w->storage.prefetch, [](const Field& x) { return x.Bool(); }));
    if (auto m = st->Get("max_concurrent")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, m->Int(0, 1000000));
      w->storage.max_concurrent = static_cast<int>(v);
    }
  }
  if (auto el = f.Get("elastic")) {
    TIDE_RETURN_IF_ERROR(el->OnlyKeys({"scaling_exponent", "resize_pause"}));
    TIDE_RETURN_IF_ERROR(
        Opt(*el, "scaling_exponent", &w->elastic.scaling_exponent, [](const Field& x) { return x.Number(0, 2); }));
    TIDE_RETURN_IF_ERROR(Opt(*el, "resize_pause", &w->elastic.resize_pause, [](const Field& x) { return x.Dur(); }));
  }
  return OkStatus();
}

// Paths in `live:` are relative to the configuration file.
std::string RelativeTo(const std::string& config_path, const std::string& p) {
  if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
  return (std::filesystem::path(config_path).parent_path() / p).lexically_normal().string();
}

Status ParseLive(const Field& f, const std::string& config_path, const model::ClusterSpec& cluster, LiveSettings* l) {
  TIDE_RETURN_IF_ERROR(f.OnlyKeys({"state", "loop_interval", "slurm", "provider", "metrics", "http"}));
  l->present = true;
  auto str = [](const Field& x) { return x.String(); };
  auto dur = [](const Field& x) { return x.Dur(); };
  TIDE_RETURN_IF_ERROR(Opt(f, "state", &l->state, str));
  l->state = RelativeTo(config_path, l->state);
  TIDE_RETURN_IF_ERROR(Opt(f, "loop_interval", &l->loop_interval, dur));
  if (auto li = f.Get("loop_interval"); li && l->loop_interval < Seconds(1)) return li->Error("must be at least 1s");
  if (auto s = f.Get("slurm")) {
    TIDE_RETURN_IF_ERROR(s->OnlyKeys({"conf", "bin_dir", "timeout", "pools", "classes", "protect_comment",
                                      "checkpoint_signal", "checkpoint_grace"}));
    SlurmSettings& o = l->slurm;
    TIDE_RETURN_IF_ERROR(Opt(*s, "conf", &o.conf, str));
    o.conf = RelativeTo(config_path, o.conf);
    TIDE_RETURN_IF_ERROR(Opt(*s, "bin_dir", &o.bin_dir, str));
    TIDE_RETURN_IF_ERROR(Opt(*s, "timeout", &o.timeout, dur));
    TIDE_RETURN_IF_ERROR(Opt(*s, "protect_comment", &o.protect_comment, str));
    TIDE_RETURN_IF_ERROR(Opt(*s, "checkpoint_signal", &o.checkpoint_signal, str));
    TIDE_RETURN_IF_ERROR(Opt(*s, "checkpoint_grace", &o.checkpoint_grace, dur));
    if (auto sig = s->Get("checkpoint_signal")) {
      static constexpr std::string_view kSignals[] = {"USR1", "USR2", "TERM", "INT", "HUP", "CONT", "URG"};
      if (std::find(std::begin(kSignals), std::end(kSignals), o.checkpoint_signal) == std::end(kSignals)) {
        return sig->Error(StrCat("'", o.checkpoint_signal, "' is not a signal tide sends; use one of ",
                                 StrJoin(kSignals, ", ")));
      }
    }
    auto pools = s->Get("pools");
    if (!pools || !pools->node().IsMap()) {
      return (pools ? *pools : *s).Error("give each pool's Slurm nodes, e.g. `pools: {gpu-spot: \"gpu[1-8]\"}`");
    }
    for (auto it = pools->node().begin(); it != pools->node().end(); ++it) {
      const std::string name = it->first.as<std::string>();
      Field v(it->second, StrCat(pools->path(), ".", name), &config_path);
      if (cluster.PoolIndex(name) < 0) {
        std::vector<std::string> names;
        for (const auto& p : cluster.pools) names.push_back(p.name);
        return v.Error(StrCat("no pool named '", name, "' (pools: ", StrJoin(names, ", "), ")"));
      }
      TIDE_ASSIGN_OR_RETURN(std::string nodes, v.String());
      o.pool_nodes.emplace_back(name, nodes);
    }
    for (const auto& p : cluster.pools) {
      bool found = false;
      for (const auto& [name, nodes] : o.pool_nodes) found |= name == p.name;
      if (!found) return pools->Error(StrCat("pool '", p.name, "' has no Slurm nodes; add `", p.name, ": \"node[1-N]\"`"));
    }
    if (auto cls = s->Get("classes")) {
      if (!cls->IsSeq()) return cls->Error("expected a list of {partition, qos, class} rules");
      for (size_t i = 0; i < cls->size(); ++i) {
        Field r = cls->At(i);
        TIDE_RETURN_IF_ERROR(r.OnlyKeys({"partition", "qos", "class"}));
        ClassRule rule;
        TIDE_RETURN_IF_ERROR(Opt(r, "partition", &rule.partition, str));
        TIDE_RETURN_IF_ERROR(Opt(r, "qos", &rule.qos, str));
        auto c = r.Get("class");
        if (!c) return r.Error("a rule needs a `class` (a priority class name)");
        TIDE_ASSIGN_OR_RETURN(rule.priority_class, c->String());
        if (cluster.PriorityClassIndex(rule.priority_class) < 0) {
          return c->Error(StrCat("no priority class named '", rule.priority_class, "'"));
        }
        if (rule.partition.empty() && rule.qos.empty()) return r.Error("a rule needs a partition, a qos or both");
        o.classes.push_back(std::move(rule));
      }
    }
  } else {
    return f.Error("`live:` needs a `slurm:` section with each pool's nodes");
  }
  if (auto p = f.Get("provider")) {
    TIDE_RETURN_IF_ERROR(p->OnlyKeys({"kind", "state_dir", "slurmd", "create", "delete", "list", "interruptions", "timeout"}));
    ProviderSettings& o = l->provider;
    TIDE_RETURN_IF_ERROR(Opt(*p, "kind", &o.kind, str));
    if (o.kind != "local" && o.kind != "exec") {
      return p->Get("kind")->Error(StrCat("unknown provider '", o.kind, "'; expected local or exec"));
    }
    TIDE_RETURN_IF_ERROR(Opt(*p, "state_dir", &o.state_dir, str));
    o.state_dir = RelativeTo(config_path, o.state_dir);
    TIDE_RETURN_IF_ERROR(Opt(*p, "slurmd", &o.slurmd, str));
    TIDE_RETURN_IF_ERROR(Opt(*p, "timeout", &o.timeout, dur));
    auto argv = [&](std::string_view key, std::vector<std::string>* out) -> Status {
      auto a = p->Get(key);
      if (!a) return OkStatus();
      if (!a->IsSeq() || a->size() == 0) {
        return a->Error("expected a command as a list of arguments, e.g. [/usr/local/bin/create-node, --json]");
      }
      TIDE_ASSIGN_OR_RETURN(*out, a->StringList());
      return OkStatus();
    };
    TIDE_RETURN_IF_ERROR(argv("create", &o.create));
    TIDE_RETURN_IF_ERROR(argv("delete", &o.destroy));
    TIDE_RETURN_IF_ERROR(argv("list", &o.list));
    TIDE_RETURN_IF_ERROR(argv("interruptions", &o.interruptions));
    if (o.kind == "exec") {
      for (auto [key, v] : {std::pair{"create", &o.create}, {"delete", &o.destroy}, {"list", &o.list}}) {
        if (v->empty()) return p->Error(StrCat("the exec provider needs a `", key, "` command"));
      }
    }
  }
  if (l->provider.state_dir.empty()) {
    l->provider.state_dir = (std::filesystem::path(l->state).parent_path() / "local-provider").string();
  }
  if (auto m = f.Get("metrics")) {
    TIDE_RETURN_IF_ERROR(m->OnlyKeys({"prometheus", "metric", "node_label", "job_label", "scale"}));
    MetricsSettings& o = l->metrics;
    TIDE_RETURN_IF_ERROR(Opt(*m, "prometheus", &o.prometheus, str));
    TIDE_RETURN_IF_ERROR(Opt(*m, "metric", &o.metric, str));
    TIDE_RETURN_IF_ERROR(Opt(*m, "node_label", &o.node_label, str));
    TIDE_RETURN_IF_ERROR(Opt(*m, "job_label", &o.job_label, str));
    TIDE_RETURN_IF_ERROR(Opt(*m, "scale", &o.scale, [](const Field& x) { return x.Number(1e-9, 1e9); }));
    if (!o.prometheus.empty() && o.prometheus.rfind("http://", 0) != 0) {
      return m->Get("prometheus")->Error("expected an http:// URL, e.g. http://127.0.0.1:9090");
    }
  }
  if (auto h = f.Get("http")) {
    TIDE_RETURN_IF_ERROR(h->OnlyKeys({"address", "port", "token_file"}));
    HttpSettings& o = l->http;
    TIDE_RETURN_IF_ERROR(Opt(*h, "address", &o.address, str));
    if (auto port = h->Get("port")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, port->Int(0, 65535));
      o.port = static_cast<int>(v);
    }
    TIDE_RETURN_IF_ERROR(Opt(*h, "token_file", &o.token_file, str));
    o.token_file = RelativeTo(config_path, o.token_file);
  }
  return OkStatus();
}

Result<Config> Parse(const YAML::Node& root, const std::string& name) {
  Config c;
  c.source = name;
  Field top(root, "", &c.source);
  if (!root.IsDefined() || root.IsNull()) return absl::InvalidArgumentError(StrCat(name, ": the file is empty"));
  TIDE_RETURN_IF_ERROR(top.OnlyKeys({"currency", "simulation", "jobs", "regions", "instance_types", "pools",
                                     "priority_classes", "default_priority_class", "scheduler", "policies", "live",
                                     "time_zone"}));
  if (auto rs = top.Get("regions")) {
    if (!rs->IsSeq()) return rs->Error("expected a list of regions");
    for (size_t i = 0; i < rs->size(); ++i) {
      Field r = rs->At(i);
      TIDE_RETURN_IF_ERROR(r.OnlyKeys({"name", "egress_per_gb"}));
      model::Region region;
      auto n = r.Get("name");
      if (!n) return r.Error("a region needs a name");
      TIDE_ASSIGN_OR_RETURN(region.name, n->String());
      if (c.cluster.RegionIndex(region.name) >= 0) return r.Error(StrCat("region '", region.name, "' is defined twice"));
      TIDE_RETURN_IF_ERROR(Opt(r, "egress_per_gb", &region.egress_per_gb, [](const Field& x) { return x.Number(0, 1e6); }));
      c.cluster.regions.push_back(std::move(region));
    }
  }
  if (auto j = top.Get("jobs")) TIDE_RETURN_IF_ERROR(ParseJobDefaults(*j, &c.jobs));
  TIDE_RETURN_IF_ERROR(Opt(top, "currency", &c.cluster.currency, [](const Field& x) { return x.String(); }));
  if (auto tz = top.Get("time_zone")) {
    TIDE_ASSIGN_OR_RETURN(c.time_zone, tz->String());
    TIDE_RETURN_IF_ERROR(Zone(*tz, c.time_zone).status());
  }

  if (auto s = top.Get("simulation")) {
    TIDE_RETURN_IF_ERROR(s->OnlyKeys({"seed", "start", "gpus_per_worker_max", "swf_procs_per_gpu", "spot", "storage", "elastic"}));
    TIDE_RETURN_IF_ERROR(ParseWorld(*s, name, &c.simulation.world));
    if (auto seed = s->Get("seed")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, seed->Int(0, INT64_MAX));
      c.simulation.seed = static_cast<uint64_t>(v);
    }
    TIDE_RETURN_IF_ERROR(Opt(*s, "start", &c.simulation.start, [](const Field& x) { return x.Time(); }));
    if (auto g = s->Get("gpus_per_worker_max")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, g->Int(0, 64));
      c.simulation.gpus_per_worker_max = static_cast<int>(v);
    }
    if (auto g = s->Get("swf_procs_per_gpu")) {
      TIDE_ASSIGN_OR_RETURN(int64_t v, g->Int(1, 1 << 20));
      c.simulation.swf_procs_per_gpu = static_cast<int>(v);
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

  std::vector<std::pair<size_t, std::pair<std::string, Field>>> pool_min_priority;
  auto pools = top.Get("pools");
  if (!pools) return top.Error("no pools: define at least one under `pools:`");
  if (!pools->IsSeq() || pools->size() == 0) return pools->Error("expected a non-empty list of pools");
  if (pools->size() > 64) return pools->Error("at most 64 pools are supported");
  for (size_t i = 0; i < pools->size(); ++i) {
    model::NodePool p;
    Field f = pools->At(i);
    std::optional<std::pair<std::string, Field>> min_priority;
    TIDE_RETURN_IF_ERROR(ParsePool(f, types, &p, &min_priority));
    if (min_priority) pool_min_priority.emplace_back(c.cluster.pools.size(), *min_priority);
    if (c.cluster.PoolIndex(p.name) >= 0) return f.Error(StrCat("pool '", p.name, "' is defined twice"));
    if (!c.cluster.regions.empty() && c.cluster.RegionIndex(p.region) < 0) {
      std::vector<std::string> names;
      for (const auto& r : c.cluster.regions) names.push_back(r.name);
      return (f.Get("region") ? *f.Get("region") : f)
          .Error(StrCat("region '", p.region, "' is not under `regions:` (", StrJoin(names, ", "), ")"));
    }
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
  for (const auto& [pool, named] : pool_min_priority) {
    const int cls = c.cluster.PriorityClassIndex(named.first);
    if (cls < 0) return named.second.Error(StrCat("no priority class named '", named.first, "'"));
    c.cluster.pools[pool].min_priority = c.cluster.priority_classes[cls].value;
  }

  if (auto s = top.Get("scheduler")) {
    TIDE_RETURN_IF_ERROR(s->OnlyKeys({"backfill"}));
    TIDE_RETURN_IF_ERROR(Opt(*s, "backfill", &c.policies.scheduler.backfill, [](const Field& x) { return x.Bool(); }));
  }
  if (auto p = top.Get("policies")) TIDE_RETURN_IF_ERROR(ParsePolicies(*p, c.cluster, &c.policies));
  if (auto l = top.Get("live")) TIDE_RETURN_IF_ERROR(ParseLive(*l, name, c.cluster, &c.live));
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

Status CheckTimeZone(const std::string& name) {
  if (FindZone(name) != nullptr) return OkStatus();
  return absl::InvalidArgumentError(UnknownZone(name));
}

Result<Config> LoadConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(StrCat(path, ": cannot open the configuration file"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseConfig(ss.str(), path);
}

}  // namespace tide::config
