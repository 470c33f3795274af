// BootHedge: buy spare nodes against slow boots, and give back the spares no
// job waits for.
//
// Rule: boot delays vary (2-5 minutes, MISSION section 2), and a job waiting
// for a boot starts on whichever node that can hold it joins first. When
// scale-up buys in a pool that boots, it buys up to `nodes` more, so that the
// jobs it buys for start on the first nodes to join rather than wait for the
// slowest. A spare is a booting node that no waiting job is planned onto. On
// every pass, a pool keeps at most `nodes` spares while some job there waits
// for a boot, and none once no job does: the rest are released while still
// booting. tide's default is 3; tide-seed's and the baselines' 0 (off).
// See docs/design/boot-hedge.md.
#ifndef TIDE_AUTOSCALE_SCALEUP_HEDGE_H_
#define TIDE_AUTOSCALE_SCALEUP_HEDGE_H_

#include <vector>

#include "autoscale/context.h"

namespace tide::autoscale {

struct BootHedgeOptions {
  int nodes = 0;  // spare nodes per pool while jobs wait for a boot
};

class BootHedge {
 public:
  explicit BootHedge(BootHedgeOptions options) : options_(options) {}

  // Spare nodes to add to a buy in `pool` now: `nodes`, less the spares the
  // pool has booting already. 0 for reserved pools and pools with no boot.
  // Reads ctx->needed, which coverage has filled.
  int Spares(const PassContext& ctx, int pool) const;

  // Releases the booting nodes the rule above does not keep, the most
  // recently bought first (one kRelease per pool). Keeps every pool at or
  // above its minimum in force, and does nothing while the forecast expects
  // work within its horizon (ctx->forecast_expects). Uses ctx->needed and
  // ctx->leaving.
  void Evaluate(PassContext* ctx, ScalingPlan* plan) const;

 private:
  // Per pool: the booting nodes no waiting job is planned onto (`spare`,
  // most recent first), and how many booting nodes are waited for.
  struct Booting {
    std::vector<std::vector<const model::Node*>> spare;
    std::vector<int> waited_for;
  };
  Booting Count(const PassContext& ctx) const;
  bool Hedges(const model::NodePool& pool) const;

  BootHedgeOptions options_;
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_SCALEUP_HEDGE_H_
