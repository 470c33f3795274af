// Forecast: predictive pre-provisioning. Training demand is tidal and its
// peaks come at the same hours (MISSION 1, 6), so the GPUs submitted in the
// next `horizon` on similar recent days are a forecast of what will be
// submitted now. When free and booting capacity falls short of it, nodes are
// bought now, so that they are up when the work arrives instead of a boot
// later.
//
//   forecast = mean over the last `days` days of the same kind (working day
//              or weekend, in UTC) of the GPUs submitted in [t - d, t - d + horizon)
//   buy      = ceil((forecast - free GPUs in the what-if) / node GPUs) nodes
//              of the cheapest on-demand pool per GPU with room
// It needs `min_days` such days of history. It is evaluated every `every`
// (5 minutes). Nodes it buys are marked, and the report counts how many were
// released without ever running a job. See docs/design/forecast.md.
#ifndef TIDE_AUTOSCALE_PREDICT_FORECAST_H_
#define TIDE_AUTOSCALE_PREDICT_FORECAST_H_

#include <optional>
#include <vector>

#include "autoscale/context.h"

namespace tide::autoscale {

struct ForecastOptions {
  bool enabled = false;
  int days = 7;
  int min_days = 2;
  std::optional<Duration> horizon;  // default: the chosen pool's expected boot delay plus one scan
  Duration every = Minutes(5);
  double scale = 1.0;  // multiplies the forecast
};

class Forecast {
 public:
  Forecast(const ForecastOptions& o, Duration scan) : o_(o), scan_(scan) {}
  void Evaluate(PassContext* ctx, ScalingPlan* plan) const;

  // GPUs submitted in [t - d*24h, t - d*24h + horizon), averaged over the
  // similar days of history; nullopt with too little history. `starts`, if
  // given, holds where each day's window began and how long it was last
  // time: the searches start there, and it is updated (it changes the speed,
  // not the answer).
  std::optional<double> Expected(const model::ClusterState& state, Timestamp t, Duration horizon, int* days_used,
                                 std::vector<size_t>* starts = nullptr) const;

 private:
  const ForecastOptions& o_;
  Duration scan_;
};

}  // namespace tide::autoscale

#endif  // TIDE_AUTOSCALE_PREDICT_FORECAST_H_
