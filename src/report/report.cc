#include "report/report.h"
#include "core/strings.h"

#include <algorithm>
#include <cmath>

#include "nlohmann/json.hpp"

namespace tide::report {
namespace {

using sim::Percentiles;
using sim::PolicyResult;

// Figures are rounded so that reports do not depend on the last bits of a
// floating-point sum.
// Dividing by the scale (not multiplying by its inverse) yields the double
// nearest the decimal, which prints short.
double Round(double x, double unit = 1e-4) {
  const double scale = std::round(1.0 / unit);
  return std::round(x * scale) / scale;
}

}  // namespace

std::string Money(double x) {
  // 1234567.8 -> "1,234,568"
  const int64_t v = std::llround(x);
  std::string digits = StrCat(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return v < 0 ? "-" + out : out;
}

namespace {

nlohmann::ordered_json PercentilesJson(const Percentiles& p) {
  nlohmann::ordered_json j;
  j["p50"] = p.p50;
  j["p95"] = p.p95;
  j["p99"] = p.p99;
  j["mean"] = Round(p.mean, 0.01);
  j["max"] = p.max;
  j["count"] = p.count;
  return j;
}

}  // namespace

std::string HumanDuration(int64_t s) {
  if (s < 60) return StrCat(s, "s");
  if (s < 3600) return s % 60 ? StrCat(s / 60, "m", s % 60, "s") : StrCat(s / 60, "m");
  if (s < 86400) return s % 3600 / 60 ? StrCat(s / 3600, "h", s % 3600 / 60, "m") : StrCat(s / 3600, "h");
  return s % 86400 / 3600 ? StrCat(s / 86400, "d", s % 86400 / 3600, "h") : StrCat(s / 86400, "d");
}

std::string FormatTable(const RunInfo& info, const model::ClusterSpec& spec, const std::vector<PolicyResult>& results) {
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  auto row = [&](std::string label, auto cell) {
    std::vector<std::string> cells;
    for (const auto& r : results) cells.push_back(cell(r));
    rows.emplace_back(std::move(label), std::move(cells));
  };
  auto section = [&](std::string label) { rows.emplace_back(std::move(label), std::vector<std::string>()); };

  section("cost");
  row(StrCat("  total (", spec.currency, ")"), [](const PolicyResult& r) { return Money(r.cost.total); });
  if (info.lower_bound) {
    row("  cost / lower bound", [&](const PolicyResult& r) { return BoundRatio(r.cost.total, *info.lower_bound); });
  }
  if (info.bound_at_configured) {
    row("  cost / bound, configured base",
        [&](const PolicyResult& r) { return BoundRatio(r.cost.total, *info.bound_at_configured); });
  }
  for (int t = 0; t < model::kNumTiers; ++t) {
    bool any = false;
    for (const auto& r : results) any |= r.cost.by_tier[t] > 0;
    if (!any) continue;
    row(StrCat("    ", model::TierName(static_cast<model::Tier>(t))),
        [t](const PolicyResult& r) { return Money(r.cost.by_tier[t]); });
  }
  if (std::any_of(results.begin(), results.end(), [](const PolicyResult& r) { return r.cost.egress > 0; })) {
    row("    egress (data transfer)", [](const PolicyResult& r) { return Money(r.cost.egress); });
  }
  // Who the money went to: jobs by priority class, and capacity no job held.
  for (const auto& cls : spec.priority_classes) {
    bool any = false;
    for (const auto& r : results) {
      for (const auto& [n, c] : r.cost_by_priority) any |= n == cls.name && c > 0;
    }
    if (!any) continue;
    row(StrCat("    jobs of class ", cls.name), [&](const PolicyResult& r) {
      for (const auto& [n, c] : r.cost_by_priority) {
        if (n == cls.name) return Money(c);
      }
      return std::string("0");
    });
  }
  row("    idle capacity", [](const PolicyResult& r) { return Money(r.cost_idle); });
  section("GPU-hours");
  row("  paid", [](const PolicyResult& r) { return Money(r.cost.gpu_hours_paid); });
  row("  busy", [](const PolicyResult& r) { return Money(r.gpu_hours_busy); });
  row("  utilization (busy/paid)", [](const PolicyResult& r) { return fmt::format("{:.1f}%", 100 * r.utilization); });
  row("  measured GPU utilization", [](const PolicyResult& r) { return fmt::format("{:.1f}%", 100 * r.gpu_util_mean); });
  section("queue wait");
  row("  p50 / p95 / p99", [](const PolicyResult& r) {
    return StrCat(HumanDuration(r.wait_s.p50), " / ", HumanDuration(r.wait_s.p95), " / ",
                        HumanDuration(r.wait_s.p99));
  });
  row("  mean", [](const PolicyResult& r) { return HumanDuration(static_cast<int64_t>(std::llround(r.wait_s.mean))); });
  for (const auto& cls : spec.priority_classes) {
    bool any = false;
    for (const auto& r : results) {
      for (const auto& [n, p] : r.wait_by_priority) any |= (n == cls.name && p.count > 0);
    }
    if (!any) continue;
    row(StrCat("  p95 ", cls.name), [&](const PolicyResult& r) {
      for (const auto& [n, p] : r.wait_by_priority) {
        if (n == cls.name) return HumanDuration(p.p95);
      }
      return std::string("-");
    });
  }
  section("job completion time");
  row("  p50 / p95", [](const PolicyResult& r) {
    return StrCat(HumanDuration(r.jct_s.p50), " / ", HumanDuration(r.jct_s.p95));
  });
  // Rows that only matter when some policy has them.
  auto optional_row = [&](std::string label, auto value, auto cell) {
    bool any = false;
    for (const auto& r : results) any |= value(r) != 0;
    if (any) row(std::move(label), cell);
  };
  const bool interruptions = std::any_of(results.begin(), results.end(), [](const PolicyResult& r) {
    return r.spot_interruptions + r.preemptions + r.reclaims + r.consolidations + r.resizes +
                   r.nodes_create_failed >
               0 ||
           r.lost_work_gpu_hours > 0;
  });
  if (interruptions) {
    section("interruptions");
    optional_row("  spot: nodes interrupted / jobs hit",
                 [](const PolicyResult& r) { return r.spot_nodes_interrupted + r.spot_interruptions; },
                 [](const PolicyResult& r) { return StrCat(r.spot_nodes_interrupted, " / ", r.spot_interruptions); });
    optional_row("  spot creates refused", [](const PolicyResult& r) { return r.nodes_create_failed; },
                 [](const PolicyResult& r) { return StrCat(r.nodes_create_failed); });
    optional_row("  preempted jobs", [](const PolicyResult& r) { return r.preemptions; },
                 [](const PolicyResult& r) { return StrCat(r.preemptions); });
    optional_row("  reclaimed idle jobs (cancelled)", [](const PolicyResult& r) { return r.reclaims; },
                 [](const PolicyResult& r) { return StrCat(r.reclaims, " (", r.jobs_cancelled, ")"); });
    optional_row("  jobs moved to consolidate nodes", [](const PolicyResult& r) { return r.consolidations; },
                 [](const PolicyResult& r) { return StrCat(r.consolidations); });
    optional_row("  elastic resizes", [](const PolicyResult& r) { return r.resizes; },
                 [](const PolicyResult& r) { return StrCat(r.resizes); });
    row("  lost work (GPU-hours)", [](const PolicyResult& r) { return fmt::format("{:.1f}", r.lost_work_gpu_hours); });
  }
  section("nodes");
  row("  peak", [](const PolicyResult& r) { return StrCat(r.peak_nodes); });
  row("  bought / released", [](const PolicyResult& r) {
    return r.kind == "fixed" ? std::string("-") : StrCat(r.nodes_bought, " / ", r.nodes_released);
  });
  optional_row("  bought on forecast (unused)", [](const PolicyResult& r) { return r.forecast_nodes; },
               [](const PolicyResult& r) { return StrCat(r.forecast_nodes, " (", r.forecast_nodes_unused, ")"); });
  optional_row("  spares against slow boots (released booting)", [](const PolicyResult& r) { return r.spare_nodes; },
               [](const PolicyResult& r) { return StrCat(r.spare_nodes, " (", r.released_booting, ")"); });
  optional_row("  waiting for storage (node-hours)", [](const PolicyResult& r) { return r.storage_wait_node_hours; },
               [](const PolicyResult& r) { return fmt::format("{:.1f}", r.storage_wait_node_hours); });
  section("jobs");
  row("  total", [](const PolicyResult& r) { return StrCat(r.jobs_total); });
  row("  never started", [](const PolicyResult& r) {
    return r.jobs_unschedulable > 0 ? StrCat(r.jobs_unstarted, " (", r.jobs_unschedulable, " fit no pool)")
                                    : StrCat(r.jobs_unstarted);
  });

  size_t label_w = 0;
  for (const auto& [l, c] : rows) label_w = std::max(label_w, l.size());
  std::vector<size_t> col_w;
  for (const auto& r : results) col_w.push_back(std::max<size_t>(r.name.size(), 8));
  for (const auto& [l, cells] : rows) {
    for (size_t i = 0; i < cells.size(); ++i) col_w[i] = std::max(col_w[i], cells[i].size());
  }

  std::string out;
  StrAppend(&out, "workload: ", info.trace, "\n");
  StrAppend(&out, fmt::format("  {} jobs, {} GPU-hours; unqueued demand peaks at {} GPUs, mean {:.0f} GPUs\n",
                        info.jobs, Money(info.gpu_hours), info.peak_demand_gpus, info.mean_demand_gpus));
  StrAppend(&out, "cluster: ", info.config, " (seed ", info.seed, ")\n");
  if (const auto& b = info.lower_bound) {
    StrAppend(&out, fmt::format("lower bound: {} {} (a reserved base of {} GPUs; docs/design/bound.md)\n",
                                Money(b->total), spec.currency, b->reserved_gpus));
  }
  if (const auto& b = info.bound_at_configured) {
    StrAppend(&out, fmt::format("  with the configured reserved base of {} GPUs: {} {}\n", b->reserved_gpus,
                                Money(b->total), spec.currency));
  }
  for (const auto& r : results) {
    if (!r.description.empty()) StrAppend(&out, "  ", r.name, ": ", r.description, "\n");
  }
  out += "\n";
  StrAppend(&out, std::string(label_w, ' '));
  for (size_t i = 0; i < results.size(); ++i) StrAppend(&out, fmt::format("  {:>{}}", results[i].name, col_w[i]));
  out += "\n";
  for (const auto& [label, cells] : rows) {
    if (cells.empty()) {  // a section heading
      StrAppend(&out, label, "\n");
      continue;
    }
    StrAppend(&out, fmt::format("{:<{}}", label, label_w));
    for (size_t i = 0; i < cells.size(); ++i) StrAppend(&out, fmt::format("  {:>{}}", cells[i], col_w[i]));
    out += "\n";
  }
  return out;
}

namespace {

nlohmann::ordered_json PolicyObject(const model::ClusterSpec& spec, const PolicyResult& r) {
  nlohmann::ordered_json p;
  p["name"] = r.name;
  p["kind"] = r.kind;
  if (!r.description.empty()) p["description"] = r.description;
  p["cost_total"] = Round(r.cost.total, 0.01);
  nlohmann::ordered_json tiers;
  for (int t = 0; t < model::kNumTiers; ++t) {
    tiers[std::string(model::TierName(static_cast<model::Tier>(t)))] = Round(r.cost.by_tier[t], 0.01);
  }
  p["cost_by_tier"] = tiers;
  p["cost_egress"] = Round(r.cost.egress, 0.01);
  nlohmann::ordered_json by_class, by_team;
  for (const auto& [n, c] : r.cost_by_priority) by_class[n] = Round(c, 0.01);
  for (const auto& [n, c] : r.cost_by_team) by_team[n] = Round(c, 0.01);
  p["cost_by_priority"] = by_class;
  p["cost_by_team"] = by_team;
  p["cost_idle"] = Round(r.cost_idle, 0.01);
  nlohmann::ordered_json pools;
  for (size_t i = 0; i < spec.pools.size() && i < r.cost.by_pool.size(); ++i) {
    pools[spec.pools[i].name] = Round(r.cost.by_pool[i], 0.01);
  }
  p["cost_by_pool"] = pools;
  p["gpu_hours_paid"] = Round(r.cost.gpu_hours_paid, 0.01);
  p["gpu_hours_busy"] = Round(r.gpu_hours_busy, 0.01);
  p["utilization"] = Round(r.utilization);
  p["gpu_util_mean"] = Round(r.gpu_util_mean);
  p["wait_s"] = PercentilesJson(r.wait_s);
  nlohmann::ordered_json wbp, jbp;
  for (const auto& [n, pc] : r.wait_by_priority) wbp[n] = PercentilesJson(pc);
  for (const auto& [n, pc] : r.jct_by_priority) jbp[n] = PercentilesJson(pc);
  p["wait_s_by_priority"] = wbp;
  p["jct_s"] = PercentilesJson(r.jct_s);
  p["jct_s_by_priority"] = jbp;
  p["peak_nodes"] = r.peak_nodes;
  p["nodes_bought"] = r.nodes_bought;
  p["nodes_released"] = r.nodes_released;
  p["jobs_total"] = r.jobs_total;
  p["jobs_started"] = r.jobs_started;
  p["jobs_completed"] = r.jobs_completed;
  p["jobs_unstarted"] = r.jobs_unstarted;
  p["jobs_unschedulable"] = r.jobs_unschedulable;
  p["jobs_backfilled"] = r.jobs_backfilled;
  p["jobs_cancelled"] = r.jobs_cancelled;
  p["spot_reclaims"] = r.spot_nodes_interrupted;  // the key keeps its old name: the JSON is a public format
  p["spot_interruptions"] = r.spot_interruptions;
  p["nodes_create_failed"] = r.nodes_create_failed;
  p["preemptions"] = r.preemptions;
  p["reclaims"] = r.reclaims;
  if (r.consolidations > 0) p["consolidations"] = r.consolidations;  // absent while consolidation is off
  p["resizes"] = r.resizes;
  p["disruptions"] = r.disruptions;
  p["lost_work_gpu_hours"] = Round(r.lost_work_gpu_hours, 0.01);
  p["max_lost_work_s"] = Round(r.max_lost_work_s, 0.01);
  p["storage_wait_node_hours"] = Round(r.storage_wait_node_hours, 0.01);
  p["forecast_nodes"] = r.forecast_nodes;
  p["forecast_nodes_unused"] = r.forecast_nodes_unused;
  p["spare_nodes"] = r.spare_nodes;
  p["released_booting"] = r.released_booting;
  p["start"] = FormatTimestamp(r.start);
  p["end"] = FormatTimestamp(r.horizon);
  p["events"] = r.events;
  return p;
}

nlohmann::ordered_json OptionalPrice(const std::optional<double>& price) {
  return price ? nlohmann::ordered_json(Round(*price)) : nlohmann::ordered_json();
}

nlohmann::ordered_json BoundObject(const bound::Bound& b) {
  nlohmann::ordered_json j;
  j["reserved_gpus"] = b.reserved_gpus;
  j["cost_total"] = Round(b.total, 0.01);
  j["cost_by_tier"] = {{"reserved", Round(b.reserved_cost, 0.01)},
                       {"on-demand", Round(b.on_demand_cost, 0.01)},
                       {"spot", Round(b.spot_cost, 0.01)}};
  j["gpu_hours_by_tier"] = {{"reserved", Round(b.reserved_gpu_hours, 0.01)},
                            {"on-demand", Round(b.on_demand_gpu_hours, 0.01)},
                            {"spot", Round(b.spot_gpu_hours, 0.01)}};
  j["price_per_gpu_hour"] = {{"reserved", OptionalPrice(b.prices.reserved)},
                             {"on-demand", OptionalPrice(b.prices.on_demand)},
                             {"spot", OptionalPrice(b.prices.spot)}};
  j["demand_gpu_hours"] = Round(b.demand_gpu_hours, 0.01);
  j["peak_gpus"] = b.peak_gpus;
  j["peak_non_preemptible_gpus"] = b.peak_np_gpus;
  j["start"] = FormatTimestamp(b.start);
  j["end"] = FormatTimestamp(b.end);
  return j;
}

}  // namespace

std::string PolicyJson(const model::ClusterSpec& spec, const PolicyResult& r, int indent) {
  return PolicyObject(spec, r).dump(indent);
}

std::string FormatJson(const RunInfo& info, const model::ClusterSpec& spec, const std::vector<PolicyResult>& results) {
  nlohmann::ordered_json root;
  root["run"] = {{"config", info.config},
                 {"trace", info.trace},
                 {"seed", info.seed},
                 {"jobs", info.jobs},
                 {"gpu_hours", Round(info.gpu_hours, 0.01)},
                 {"peak_demand_gpus", info.peak_demand_gpus},
                 {"mean_demand_gpus", Round(info.mean_demand_gpus, 0.01)}};
  root["currency"] = spec.currency;
  if (info.lower_bound) root["lower_bound"] = BoundObject(*info.lower_bound);
  if (info.bound_at_configured) root["lower_bound_configured_base"] = BoundObject(*info.bound_at_configured);
  auto& policies = root["policies"] = nlohmann::ordered_json::array();
  for (const auto& r : results) {
    policies.push_back(PolicyObject(spec, r));
    auto ratio = [&](const std::optional<bound::Bound>& b) {
      return b->total > 0 ? nlohmann::ordered_json(Round(r.cost.total / b->total)) : nlohmann::ordered_json();
    };
    if (info.lower_bound) policies.back()["cost_to_lower_bound"] = ratio(info.lower_bound);
    if (info.bound_at_configured) policies.back()["cost_to_lower_bound_configured_base"] = ratio(info.bound_at_configured);
  }
  return root.dump(2) + "\n";
}

std::string BoundRatio(double cost, const bound::Bound& b) {
  return b.total > 0 ? fmt::format("{:.2f}x", cost / b.total) : std::string("-");
}

namespace {

std::string PriceText(const std::optional<double>& price) {
  return price ? fmt::format("{:.2f}", *price) : std::string("none");
}

}  // namespace

std::string FormatBound(const RunInfo& info, const model::ClusterSpec& spec) {
  const bound::Bound& b = *info.lower_bound;
  std::vector<const bound::Bound*> cols = {&b};
  if (info.bound_at_configured) cols.push_back(&*info.bound_at_configured);
  std::string out;
  StrAppend(&out, "workload: ", info.trace, "\n");
  StrAppend(&out, fmt::format("  {} jobs, {} GPU-hours; unqueued demand peaks at {} GPUs ({} not preemptible)\n",
                              info.jobs, Money(b.demand_gpu_hours), b.peak_gpus, b.peak_np_gpus));
  if (info.jobs_fit_no_pool > 0) {
    StrAppend(&out, fmt::format("  {} jobs fit no pool and are left out (no policy could run them)\n",
                                info.jobs_fit_no_pool));
  }
  StrAppend(&out, "cluster: ", info.config, "\n");
  StrAppend(&out, fmt::format("  per GPU-hour ({}): reserved {}, on-demand {}, spot {}\n", spec.currency,
                              PriceText(b.prices.reserved), PriceText(b.prices.on_demand), PriceText(b.prices.spot)));
  StrAppend(&out, fmt::format("  billed {} .. {} ({})\n", FormatTimestamp(b.start), FormatTimestamp(b.end),
                              HumanDuration((b.end - b.start).count())));
  out += "\noffline lower bound (docs/design/bound.md)\n";
  using Cell = std::string (*)(const bound::Bound&);
  const std::pair<std::string, Cell> rows[] = {
      {"reserved base (GPUs)", [](const bound::Bound& x) { return StrCat(x.reserved_gpus); }},
      {"GPU-hours reserved", [](const bound::Bound& x) { return Money(x.reserved_gpu_hours); }},
      {"          on-demand", [](const bound::Bound& x) { return Money(x.on_demand_gpu_hours); }},
      {"          spot", [](const bound::Bound& x) { return Money(x.spot_gpu_hours); }},
      {StrCat("cost (", spec.currency, ")"), [](const bound::Bound& x) { return Money(x.total); }},
      {"  reserved", [](const bound::Bound& x) { return Money(x.reserved_cost); }},
      {"  on-demand", [](const bound::Bound& x) { return Money(x.on_demand_cost); }},
      {"  spot", [](const bound::Bound& x) { return Money(x.spot_cost); }},
  };
  const std::string heads[] = {"best base", "configured base"};
  std::vector<size_t> w;
  for (size_t c = 0; c < cols.size(); ++c) {
    w.push_back(heads[c].size());
    for (const auto& [label, cell] : rows) w[c] = std::max(w[c], cell(*cols[c]).size());
  }
  StrAppend(&out, fmt::format("  {:<22}", ""));
  for (size_t c = 0; c < cols.size(); ++c) StrAppend(&out, fmt::format("  {:>{}}", heads[c], w[c]));
  out += "\n";
  for (const auto& [label, cell] : rows) {
    StrAppend(&out, fmt::format("  {:<22}", label));
    for (size_t c = 0; c < cols.size(); ++c) StrAppend(&out, fmt::format("  {:>{}}", cell(*cols[c]), w[c]));
    out += "\n";
  }
  return out;
}

std::string FormatBoundJson(const RunInfo& info, const model::ClusterSpec& spec) {
  nlohmann::ordered_json root;
  root["run"] = {{"config", info.config},
                 {"trace", info.trace},
                 {"jobs", info.jobs},
                 {"jobs_fit_no_pool", info.jobs_fit_no_pool}};
  root["currency"] = spec.currency;
  root["lower_bound"] = BoundObject(*info.lower_bound);
  if (info.bound_at_configured) root["lower_bound_configured_base"] = BoundObject(*info.bound_at_configured);
  return root.dump(2) + "\n";
}

}  // namespace tide::report
