#include "autoscale/scaleup/expander.h"
#include "core/strings.h"

#include <cmath>
#include <functional>


namespace tide::autoscale {
namespace {

// Keeps the options whose score is lowest (within a relative 1e-9).
std::vector<const ScaleUpOption*> KeepMin(const std::vector<const ScaleUpOption*>& options,
                                          const std::function<double(const ScaleUpOption&)>& score) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto* o : options) best = std::min(best, score(*o));
  std::vector<const ScaleUpOption*> out;
  for (const auto* o : options) {
    const double s = score(*o);
    if (s == best || std::fabs(s - best) <= 1e-9 * std::max(1.0, std::fabs(best))) out.push_back(o);
  }
  return out.empty() ? options : out;
}

class PriorityExpander final : public Expander {
 public:
  std::string_view name() const override { return "priority"; }
  std::vector<const ScaleUpOption*> Filter(const std::vector<const ScaleUpOption*>& options,
                                           const ExpanderContext& ctx) const override {
    return KeepMin(options, [&](const ScaleUpOption& o) { return -ctx.spec.pools[o.pool].priority; });
  }
  std::string Explain(const ScaleUpOption& o, const ExpanderContext& ctx) const override {
    return StrCat("priority: pool priority ", ctx.spec.pools[o.pool].priority);
  }
};

class LeastCostExpander final : public Expander {
 public:
  std::string_view name() const override { return "least-cost"; }
  std::vector<const ScaleUpOption*> Filter(const std::vector<const ScaleUpOption*>& options,
                                           const ExpanderContext&) const override {
    return KeepMin(options, [](const ScaleUpOption& o) { return o.CostPerUsedGpuHour(); });
  }
  std::string Explain(const ScaleUpOption& o, const ExpanderContext& ctx) const override {
    if (o.egress_per_hour > 0) {
      return fmt::format("least-cost: {:.4g} {} per used GPU-hour, data transfer included", o.CostPerUsedGpuHour(),
                         ctx.spec.currency);
    }
    return fmt::format("least-cost: {:.4g} {} per used GPU-hour", o.CostPerUsedGpuHour(), ctx.spec.currency);
  }
};

class LeastWasteExpander final : public Expander {
 public:
  std::string_view name() const override { return "least-waste"; }
  std::vector<const ScaleUpOption*> Filter(const std::vector<const ScaleUpOption*>& options,
                                           const ExpanderContext&) const override {
    return KeepMin(options, [](const ScaleUpOption& o) { return o.Waste(); });
  }
  std::string Explain(const ScaleUpOption& o, const ExpanderContext&) const override {
    return fmt::format("least-waste: {:.0f}% of new GPUs idle", 100.0 * o.Waste());
  }
};

// Keeps elastic capacity close to the target share of spot: prefers the
// options after which spot's share of non-reserved GPUs is nearest it.
class TierRatioExpander final : public Expander {
 public:
  std::string_view name() const override { return "tier-ratio"; }
  std::vector<const ScaleUpOption*> Filter(const std::vector<const ScaleUpOption*>& options,
                                           const ExpanderContext& ctx) const override {
    return KeepMin(options, [&](const ScaleUpOption& o) { return std::fabs(ShareAfter(o, ctx) - ctx.spot_share); });
  }
  std::string Explain(const ScaleUpOption& o, const ExpanderContext& ctx) const override {
    return fmt::format("tier-ratio: spot at {:.0f}% of elastic GPUs after it (target {:.0f}%)",
                       100 * ShareAfter(o, ctx), 100 * ctx.spot_share);
  }

 private:
  static double ShareAfter(const ScaleUpOption& o, const ExpanderContext& ctx) {
    double spot = 0, elastic = 0;
    for (size_t p = 0; p < ctx.spec.pools.size(); ++p) {
      const auto& pool = ctx.spec.pools[p];
      if (pool.tier == model::Tier::kReserved) continue;
      const double gpus = static_cast<double>(ctx.live[p] + (static_cast<int>(p) == o.pool ? o.nodes : 0)) * pool.type.gpus;
      elastic += gpus;
      if (pool.tier == model::Tier::kSpot) spot += gpus;
    }
    return elastic > 0 ? spot / elastic : 0;
  }
};

// Serves the most workers first (cluster-autoscaler's "most-pods").
class MostJobsExpander final : public Expander {
 public:
  std::string_view name() const override { return "most-jobs"; }
  std::vector<const ScaleUpOption*> Filter(const std::vector<const ScaleUpOption*>& options,
                                           const ExpanderContext&) const override {
    return KeepMin(options, [](const ScaleUpOption& o) { return -static_cast<double>(o.served.size()); });
  }
  std::string Explain(const ScaleUpOption& o, const ExpanderContext&) const override {
    return StrCat("most-jobs: serves ", o.served.size());
  }
};

// Always last: the pool declared first wins.
class FallbackExpander final : public Expander {
 public:
  std::string_view name() const override { return "first-declared"; }
  std::vector<const ScaleUpOption*> Filter(const std::vector<const ScaleUpOption*>& options,
                                           const ExpanderContext&) const override {
    const ScaleUpOption* best = options.front();
    for (const auto* o : options) {
      if (o->pool < best->pool) best = o;
    }
    return {best};
  }
  std::string Explain(const ScaleUpOption& o, const ExpanderContext& ctx) const override {
    return StrCat("tie broken by declaration order");
  }
};

std::shared_ptr<const Expander> MakeOne(std::string_view name) {
  if (name == "priority") return std::make_shared<PriorityExpander>();
  if (name == "tier-ratio") return std::make_shared<TierRatioExpander>();
  if (name == "least-cost") return std::make_shared<LeastCostExpander>();
  if (name == "least-waste") return std::make_shared<LeastWasteExpander>();
  if (name == "most-jobs") return std::make_shared<MostJobsExpander>();
  return nullptr;
}

}  // namespace

std::vector<std::string> ExpanderNames() { return {"priority", "tier-ratio", "least-cost", "least-waste", "most-jobs"}; }

Result<ExpanderChain> ExpanderChain::Make(const std::vector<std::string>& names) {
  ExpanderChain c;
  for (const auto& n : names) {
    auto e = MakeOne(n);
    if (!e) {
      return absl::InvalidArgumentError(
          StrCat("unknown expander '", n, "'; known: ", StrJoin(ExpanderNames(), ", ")));
    }
    c.chain_.push_back(std::move(e));
  }
  c.chain_.push_back(std::make_shared<FallbackExpander>());
  return c;
}

ExpanderChain::Choice ExpanderChain::Choose(const std::vector<const ScaleUpOption*>& options,
                                            const ExpanderContext& ctx) const {
  Choice choice;
  std::vector<const ScaleUpOption*> left = options;
  for (const auto& e : chain_) {
    if (left.size() <= 1) break;
    auto next = e->Filter(left, ctx);
    if (next.size() < left.size()) {
      choice.why = e->Explain(*next.front(), ctx);
    }
    left = std::move(next);
  }
  choice.option = left.front();
  if (choice.why.empty()) choice.why = "only option";
  return choice;
}

}  // namespace tide::autoscale
