// Expanders: which pool to grow when several could serve the pending jobs.
//
// An expander filters a list of options, keeping the best ones (ties kept).
// A chain applies them in turn: by default priority (the pool's configured
// priority), then tier-ratio (keeps elastic capacity near the target
// on-demand:spot ratio), then least-cost (hourly price per GPU the jobs
// actually use), then least-waste (fewest idle GPUs on the new nodes). A
// deterministic fallback (the pool declared first) always ends the chain.
// This is cluster-autoscaler's expander chain with prices and tiers in it.
// See docs/design/expanders.md.
#ifndef TIDE_AUTOSCALE_SCALEUP_EXPANDER_H_
#define TIDE_AUTOSCALE_SCALEUP_EXPANDER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "autoscale/scaleup/estimator.h"
#include "core/status.h"
#include "model/cluster.h"

namespace tide::autoscale {

// What an expander may look at besides the options.
struct ExpanderContext {
  const model::ClusterSpec& spec;
  // Nodes per pool that exist or boot, before the option.
  const std::vector<int>& live;
  // The target share of spot in elastic (non-reserved) GPUs: 0.3 for the
  // mission's on-demand:spot = 7:3.
  double spot_share = 0.3;
};

class Expander {
 public:
  virtual ~Expander() = default;
  virtual std::string_view name() const = 0;
  // Keeps the best of `options` (never returns an empty list for a non-empty input).
  virtual std::vector<const ScaleUpOption*> Filter(const std::vector<const ScaleUpOption*>& options,
                                                   const ExpanderContext& ctx) const = 0;
  // One phrase on why `chosen` won, for the decision log.
  virtual std::string Explain(const ScaleUpOption& chosen, const ExpanderContext& ctx) const = 0;
};

// The expander names MakeExpanderChain accepts.
std::vector<std::string> ExpanderNames();

class ExpanderChain {
 public:
  // Builds the chain from names; InvalidArgument names an unknown one.
  static Result<ExpanderChain> Make(const std::vector<std::string>& names);

  struct Choice {
    const ScaleUpOption* option = nullptr;
    std::string why;  // "least-cost: 12.5 CNY per used GPU-hour"
  };
  // Picks one of `options` (non-empty).
  Choice Choose(const std::vector<const ScaleUpOption*>& options, const ExpanderContext& ctx) const;

 private:
  std::vector<std::shared_ptr<const Expander>> chain_;
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_SCALEUP_EXPANDER_H_
