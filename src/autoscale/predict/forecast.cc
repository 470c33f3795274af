#include "autoscale/predict/forecast.h"

#include <algorithm>
#include <cmath>

#include "core/search.h"
#include "core/strings.h"

namespace tide::autoscale {
namespace {

bool Weekend(Timestamp t) {
  const int64_t days = ToUnixSeconds(t) / 86400;
  const int wd = static_cast<int>(((days % 7) + 7 + 3) % 7);  // 1970-01-01 was a Thursday; Monday = 0
  return wd >= 5;
}

}  // namespace

std::optional<double> Forecast::Expected(const model::ClusterState& state, Timestamp t, Duration horizon,
                                         int* days_used, std::vector<size_t>* starts) const {
  const auto& arr = state.arrivals;
  *days_used = 0;
  if (arr.empty()) return std::nullopt;
  // With the driver's counts, a day's GPUs are the difference of two; the
  // sums are of whole numbers, so exactly those of the walk without them.
  const bool counted = arr.front().before >= 0;
  auto by_time = [](const model::ClusterState::Arrival& a, Timestamp x) { return a.at < x; };
  auto before = [&](auto it) { return it == arr.end() ? arr.back().before + arr.back().gpus : it->before; };
  double total = 0;
  auto later = arr.end();  // each day back starts earlier: at or before the last day's start
  if (starts != nullptr) {
    // Day d's window begins at entry (*starts)[d - 1] and holds
    // (*starts)[days + d - 1] entries. Its ends are a day or more old and
    // out of the cache: all are asked for at once, not in turn.
    starts->resize(2 * static_cast<size_t>(o_.days), 0);
    for (int d = 0; d < o_.days; ++d) {
      const size_t start = (*starts)[d], length = (*starts)[o_.days + d];
      __builtin_prefetch(&arr[std::min(start, arr.size() - 1)]);
      __builtin_prefetch(&arr[std::min(start + length, arr.size() - 1)]);
    }
  }
  for (int d = 1; d <= o_.days; ++d) {
    const Timestamp from = t - Hours(24) * d;
    if (from < arr.front().at) break;  // no history that far back
    if (Weekend(from) != Weekend(t)) continue;
    const Timestamp to = from + horizon;
    // The log is long and a pass moves each window by a few entries: from
    // where it was, a search is a few looks rather than a cache miss per
    // halving. The end is looked for as far on as the window was long.
    decltype(later) lo, hi;
    if (starts != nullptr) {
      size_t& start = (*starts)[d - 1];
      size_t& length = (*starts)[o_.days + d - 1];
      lo = LowerBoundNear(arr.begin(), later, arr.begin() + std::min<size_t>(start, later - arr.begin()), from, by_time);
      hi = LowerBoundNear(lo, arr.end(), lo + std::min<size_t>(length, arr.end() - lo), to, by_time);
      start = lo - arr.begin();
      length = hi - lo;
    } else {
      lo = LowerBound(arr.begin(), later, from, by_time);
      hi = GallopLowerBound(lo, arr.end(), to, by_time);  // the window is short: its end is a few entries on
    }
    later = lo;
    if (counted) {
      total += static_cast<double>(before(hi) - before(lo));
    } else {
      for (auto it = lo; it != hi; ++it) total += it->gpus;
    }
    ++*days_used;
  }
  if (*days_used < o_.min_days) return std::nullopt;
  return total / *days_used * o_.scale;
}

void Forecast::Evaluate(PassContext* ctx, ScalingPlan* plan) const {
  if (!o_.enabled) return;
  const Timestamp now = ctx->now;
  // Nothing submitted within the history it reads: nothing to forecast.
  const auto& arr = ctx->state.arrivals;
  if (arr.empty() || arr.back().at < now - Hours(24) * o_.days) return;
  // On a coarse grid: the forecast moves slowly, and each look costs a pass.
  const int64_t every = std::max<int64_t>(1, o_.every.count());
  const int64_t into = ToUnixSeconds(now) % every;
  plan->next_wakeup = std::min(plan->next_wakeup, now + Seconds(every - into));
  // The pool: on-demand, with room, cheapest per GPU.
  int pool = -1;
  for (size_t p = 0; p < ctx->spec.pools.size(); ++p) {
    const auto& cand = ctx->spec.pools[p];
    if (cand.tier != model::Tier::kOnDemand || ctx->live[p] >= ctx->max_nodes[p]) continue;
    if (pool < 0 || cand.price_per_hour / cand.type.gpus <
                        ctx->spec.pools[pool].price_per_hour / ctx->spec.pools[pool].type.gpus) {
      pool = static_cast<int>(p);
    }
  }
  if (pool < 0) return;
  const model::NodePool& p = ctx->spec.pools[pool];
  const Duration horizon = o_.horizon ? *o_.horizon : p.boot_delay.Expected() + scan_;
  int days = 0;
  const auto expected = Expected(ctx->state, now, horizon, &days, &ctx->forecast_starts);
  if (!expected || *expected <= 0) return;
  ctx->forecast_expects = true;
  // Free GPUs the what-if has left: ready, booting, and soon freed, after
  // every pending job's claim. A sparse what-if not built yet has had
  // nothing taken from it: it holds at least the GPUs free now and those of
  // the nodes this pass buys (when they cover the forecast, nothing more is
  // read), and what it holds is added up without building it.
  double free;
  if (ctx->sparse() && !ctx->HasSnap()) {
    if (*expected - static_cast<double>(SparseWhatIfFreeNow(*ctx)) <= 0) return;
    free = static_cast<double>(SparseWhatIfFree(*ctx));
  } else {
    free = static_cast<double>(ctx->Snap().total_free());
  }
  const double short_by = *expected - free;
  if (short_by <= 0) return;
  const int nodes = std::min(ctx->max_nodes[pool] - ctx->live[pool],
                             static_cast<int>(std::ceil(short_by / p.type.gpus)));
  if (nodes <= 0) return;
  Action a;
  a.kind = ActionKind::kScaleUp;
  a.pool = pool;
  a.count = nodes;
  a.forecast = true;
  a.reason = fmt::format(
      "forecast: about {:.0f} GPUs of work are submitted in the next {} on similar days ({} days); {:.0f} free or "
      "booting; +{} {} ahead of it",
      *expected, FormatDuration(horizon), days, free, nodes, p.name);
  ctx->live[pool] += nodes;
  plan->actions.push_back(std::move(a));
}

}  // namespace tide::autoscale
