#include "autoscale/autoscaler.h"

#include <algorithm>

#include "autoscale/context.h"
#include "autoscale/coverage.h"
#include "core/strings.h"

namespace tide::autoscale {

Result<Autoscaler> Autoscaler::Make(AutoscalerOptions o) {
  auto check = [](bool ok, const char* what) { return ok ? OkStatus() : absl::InvalidArgumentError(what); };
  TIDE_RETURN_IF_ERROR(check(o.scan_interval.count() >= 0, "scan_interval must be >= 0"));
  TIDE_RETURN_IF_ERROR(check(o.scale_up.trigger.pending_threshold >= 0, "pending_threshold must be >= 0"));
  TIDE_RETURN_IF_ERROR(check(o.scale_up.trigger.pending_grace.count() >= 0, "pending_grace must be >= 0"));
  TIDE_RETURN_IF_ERROR(check(o.scale_down.idle.idle_after.count() >= 0, "idle_release_after must be >= 0"));
  TIDE_RETURN_IF_ERROR(check(o.tiers.spot_share >= 0 && o.tiers.spot_share <= 1, "spot_share must be in [0, 1]"));
  TIDE_RETURN_IF_ERROR(check(o.reclaim.below >= 0 && o.reclaim.below <= 1, "reclaim.below must be in [0, 1]"));
  TIDE_RETURN_IF_ERROR(check(o.utilization.low < o.utilization.high, "utilization low must be below high"));
  TIDE_RETURN_IF_ERROR(check(o.budget.max_nodes >= 0, "budget.max_nodes must be >= 0"));
  TIDE_RETURN_IF_ERROR(check(o.consolidation.min_ratio >= 0, "consolidation.min_ratio must be >= 0"));
  TIDE_RETURN_IF_ERROR(check(o.consolidation.min_run.count() >= 0, "consolidation.min_run must be >= 0"));
  TIDE_RETURN_IF_ERROR(check(o.consolidation.max_unsaved.count() >= 0, "consolidation.max_unsaved must be >= 0"));
  TIDE_RETURN_IF_ERROR(check(o.scale_up.hedge.nodes >= 0, "boot_hedge must be >= 0"));
  TIDE_RETURN_IF_ERROR(check(o.forecast.days >= 1 && o.forecast.min_days >= 1, "forecast days must be >= 1"));
  TIDE_ASSIGN_OR_RETURN(ExpanderChain chain, ExpanderChain::Make(o.scale_up.expanders));
  return Autoscaler(std::move(o), std::move(chain));
}

// Here, where a pass's scratch lists are a complete type.
Autoscaler::Autoscaler(Autoscaler&&) noexcept = default;
Autoscaler& Autoscaler::operator=(Autoscaler&&) noexcept = default;
Autoscaler::~Autoscaler() = default;

Result<ScalingPlan> Autoscaler::RunOnce(const model::ClusterState& state, Timestamp now) const {
  if (state.spec == nullptr) return absl::InvalidArgumentError("ClusterState has no spec");
  const model::ClusterSpec& spec = *state.spec;
  if (spec.pools.size() > static_cast<size_t>(sched::kMaxPools)) return absl::InvalidArgumentError("more than 64 pools");
  // A driver's index has read every node: it says whether one has a pool
  // out of range, without reading them all again in every pass.
  const model::StateIndex* x = model::IndexFor(state);
  const bool pools_known = x != nullptr && x->pools_within(static_cast<int>(spec.pools.size()));
  for (size_t i = 0; !pools_known && i < state.nodes.size(); ++i) {
    const model::Node& n = state.nodes[i];
    if (n.pool < 0 || n.pool >= static_cast<int>(spec.pools.size())) {
      return absl::InvalidArgumentError(StrCat("node ", n.name, " has unknown pool index ", n.pool));
    }
  }
  const AutoscalerOptions& o = *options_;
  ScalingPlan plan;
  PassContext ctx(state, now);
  ctx.spare = &spare_;
  ctx.Reuse(&scratch_);
  IndexState(&ctx);

  const ScheduledCapacity schedule(o.schedule);
  schedule.ApplyLimits(&ctx, &plan);
  Timestamp budget_frees = kInfiniteFuture;
  ctx.disruption_allowance = DisruptionAllowance(o.budget, state, now, &budget_frees);
  ctx.disruption_max = o.budget.max_nodes > 0 ? o.budget.max_nodes : ctx.disruption_allowance;

  SpotNoticeResponder(o.spot_notice).Evaluate(&ctx, &plan);
  IdleReclaim(o.reclaim).Evaluate(&ctx, &plan);
  if (o.scale_up.enabled || o.scale_down.enabled) schedule.Enforce(&ctx, &plan);

  BuildCoverage(o.scale_up, &ctx, &plan);
  if (!ctx.pending.empty()) {
    ReportUnschedulable(&ctx, &plan);
  }
  const ElasticResizer elastic(o.elastic, o.utilization);
  elastic.BeforeScaleUp(&ctx, &plan);
  std::vector<bool> blocked;
  const Preemption preemption(o.preemption);
  if (o.preemption.before_buying) preemption.Evaluate(&ctx, blocked, &plan);
  ScaleUp(o.scale_up, o.tiers, chain_).Evaluate(&ctx, &plan, &blocked);
  if (!o.preemption.before_buying) preemption.Evaluate(&ctx, blocked, &plan);
  elastic.AfterScaleUp(&ctx, ctx.demands, &plan);
  if (o.scale_up.enabled) {
    Forecast(o.forecast, o.scan_interval).Evaluate(&ctx, &plan);
    BootHedge(o.scale_up.hedge).Evaluate(&ctx, &plan);
  }
  if (o.scale_down.enabled) {
    Consolidation(o.consolidation, o.scale_down.idle.idle_after, o.scale_down.idle.release_reserved)
        .Evaluate(&ctx, &plan);
    IdleRelease(o.scale_down.idle).Evaluate(&ctx, &plan);
  }

  // Something wanted to disrupt and the budget said no. Which victims are
  // cheapest moves as their checkpoints complete, so look again on the next
  // pass, not only when the budget frees up.
  if (ctx.budget_blocked) plan.next_wakeup = std::min({plan.next_wakeup, budget_frees, now + Seconds(1)});
  return plan;
}

std::string_view ActionKindName(ActionKind kind) {
  switch (kind) {
    case ActionKind::kScaleUp: return "scale-up";
    case ActionKind::kRelease: return "release";
    case ActionKind::kUnschedulable: return "unschedulable";
    case ActionKind::kAtMax: return "at-max";
    case ActionKind::kDrain: return "drain";
    case ActionKind::kPreempt: return "preempt";
    case ActionKind::kReclaim: return "reclaim";
    case ActionKind::kEvacuate: return "evacuate";
    case ActionKind::kConsolidate: return "consolidate";
    case ActionKind::kResize: return "resize";
    case ActionKind::kNote: return "note";
  }
  return "?";
}

}  // namespace tide::autoscale
