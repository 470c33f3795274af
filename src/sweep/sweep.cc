#include "sweep/sweep.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "core/strings.h"

namespace tide::sweep {
namespace {

constexpr std::string_view kNames[] = {"reserved", "max", "spot-share", "threshold", "grace", "idle"};

Result<std::vector<std::string>> Values(std::string_view text, std::string_view arg) {
  std::vector<std::string> out;
  const size_t dots = text.find("..");
  if (dots != std::string_view::npos) {
    // a..b:step, numbers
    const std::string_view a = text.substr(0, dots);
    std::string_view rest = text.substr(dots + 2);
    std::string_view step = "1";
    if (const size_t c = rest.find(':'); c != std::string_view::npos) {
      step = rest.substr(c + 1);
      rest = rest.substr(0, c);
    }
    double lo, hi, st;
    if (!absl::SimpleAtod(absl::string_view(a.data(), a.size()), &lo) ||
        !absl::SimpleAtod(absl::string_view(rest.data(), rest.size()), &hi) ||
        !absl::SimpleAtod(absl::string_view(step.data(), step.size()), &st) || st <= 0) {
      return absl::InvalidArgumentError(StrCat("--sweep ", arg, ": write a range as FROM..TO:STEP, like 0..20:5"));
    }
    if (hi < lo) {
      return absl::InvalidArgumentError(StrCat("--sweep ", arg, ": the range runs backwards (", a, " is above ", rest, ")"));
    }
    for (double v = lo; v <= hi + 1e-9; v += st) {
      out.push_back(std::fabs(v - std::round(v)) < 1e-9 ? StrCat(static_cast<int64_t>(std::llround(v)))
                                                          : fmt::format("{:g}", v));
      if (out.size() > 1000) return absl::InvalidArgumentError(StrCat("--sweep ", arg, ": more than 1000 values"));
    }
    return out;
  }
  for (auto v : Split(text, ',', true)) out.emplace_back(StripWhitespace(v));
  if (out.empty()) return absl::InvalidArgumentError(StrCat("--sweep ", arg, ": no values"));
  return out;
}

}  // namespace

std::string SweepPoint::Label() const {
  std::vector<std::string> parts;
  for (const auto& s : settings) parts.push_back(StrCat(s.name, s.pool.empty() ? "" : ":" + s.pool, "=", s.value));
  return StrJoin(parts, " ");
}

Result<std::vector<SweepPoint>> ExpandSweeps(const std::vector<std::string>& sweeps) {
  std::vector<SweepPoint> grid(1);
  for (const std::string& arg : sweeps) {
    const size_t eq = arg.find('=');
    if (eq == std::string::npos) {
      return absl::InvalidArgumentError(StrCat("--sweep ", arg, ": write NAME=VALUES, like reserved=0..20:5"));
    }
    std::string name = arg.substr(0, eq), pool;
    if (const size_t c = name.find(':'); c != std::string::npos) {
      pool = name.substr(c + 1);
      name = name.substr(0, c);
    }
    bool known = false;
    for (auto k : kNames) known |= name == k;
    if (!known) {
      return absl::InvalidArgumentError(StrCat("--sweep ", arg, ": unknown setting '", name, "'; known: ",
                                               StrJoin(std::vector<std::string_view>(std::begin(kNames), std::end(kNames)), ", ")));
    }
    if (!pool.empty() && name != "reserved" && name != "max") {
      return absl::InvalidArgumentError(StrCat("--sweep ", arg, ": only reserved and max take a pool"));
    }
    TIDE_ASSIGN_OR_RETURN(std::vector<std::string> values, Values(std::string_view(arg).substr(eq + 1), arg));
    std::vector<SweepPoint> next;
    for (const auto& point : grid) {
      for (const auto& v : values) {
        SweepPoint p = point;
        p.settings.push_back({name, pool, v});
        next.push_back(std::move(p));
      }
    }
    grid = std::move(next);
    if (grid.size() > 10000) return absl::InvalidArgumentError("the sweep has more than 10,000 points");
  }
  return grid;
}

Status Apply(const SweepPoint& point, config::Config* c) {
  auto& spec = c->cluster;
  for (const Setting& s : point.settings) {
    const std::string where = StrCat("--sweep ", s.name, s.pool.empty() ? "" : ":", s.pool, "=", s.value);
    auto count = [&]() -> Result<int> {
      int v;
      if (!ParseInt(s.value, &v) || v < 0) return absl::InvalidArgumentError(StrCat(where, ": expected a node count"));
      return v;
    };
    auto pick_pool = [&](bool reserved) -> Result<int> {
      if (!s.pool.empty()) {
        const int p = spec.PoolIndex(s.pool);
        if (p < 0) return absl::InvalidArgumentError(StrCat(where, ": no pool named '", s.pool, "'"));
        return p;
      }
      for (size_t p = 0; p < spec.pools.size(); ++p) {
        if ((spec.pools[p].tier == model::Tier::kReserved) == reserved) return static_cast<int>(p);
      }
      return absl::InvalidArgumentError(
          StrCat(where, ": the configuration has no ", reserved ? "reserved" : "non-reserved", " pool"));
    };
    // A policy setting applies to whichever policy the points run: tide, a
    // baseline, or a variant (whose options were copied from tide's).
    auto each = [&](auto set) {
      set(c->policies.tide);
      set(c->policies.seed);
      set(c->policies.reactive);
      set(c->policies.powersave);
      for (auto& [name, options] : c->policies.variants) set(options);
    };
    if (s.name == "reserved") {
      TIDE_ASSIGN_OR_RETURN(int p, pick_pool(true));
      TIDE_ASSIGN_OR_RETURN(int v, count());
      spec.pools[p].min_nodes = spec.pools[p].max_nodes = v;
    } else if (s.name == "max") {
      TIDE_ASSIGN_OR_RETURN(int p, pick_pool(false));
      TIDE_ASSIGN_OR_RETURN(int v, count());
      if (v < spec.pools[p].min_nodes) return absl::InvalidArgumentError(StrCat(where, ": below the pool's min_nodes"));
      spec.pools[p].max_nodes = v;
    } else if (s.name == "spot-share") {
      double v;
      if (!absl::SimpleAtod(absl::string_view(s.value.data(), s.value.size()), &v) || v < 0 || v > 1) {
        return absl::InvalidArgumentError(StrCat(where, ": expected a share between 0 and 1"));
      }
      each([&](autoscale::AutoscalerOptions& o) { o.tiers.spot_share = v; });
    } else if (s.name == "threshold") {
      TIDE_ASSIGN_OR_RETURN(int v, count());
      each([&](autoscale::AutoscalerOptions& o) { o.scale_up.trigger.pending_threshold = v; });
    } else if (s.name == "grace" || s.name == "idle") {
      auto d = ParseDuration(s.value);
      if (!d.ok()) return absl::InvalidArgumentError(StrCat(where, ": ", Message(d.status())));
      each([&](autoscale::AutoscalerOptions& o) {
        (s.name == "grace" ? o.scale_up.trigger.pending_grace : o.scale_down.idle.idle_after) = *d;
      });
    }
  }
  return OkStatus();
}

}  // namespace tide::sweep
