// `tide plan`: sweep a setting over a workload and print the cost and
// queue-wait curve (docs/design/plan.md).
#include <atomic>
#include <fstream>
#include <iostream>
#include <mutex>

#include <unistd.h>

#include "cli/commands.h"
#include "config/config.h"
#include "core/strings.h"
#include "nlohmann/json.hpp"
#include "plan/sweep.h"
#include "report/report.h"
#include "sim/compare.h"
#include "trace/demand.h"
#include "trace/reader.h"

namespace tide::cli {

int Plan(const PlanArgs& args) {
  auto fail = [](const Status& s) {
    std::cerr << "tide: " << Message(s) << "\n";
    return s.code() == absl::StatusCode::kInvalidArgument || s.code() == absl::StatusCode::kNotFound ? 2 : 1;
  };
  auto base = config::LoadConfig(args.config);
  if (!base.ok()) return fail(base.status());
  auto grid = plan::ExpandSweeps(args.sweeps);
  if (!grid.ok()) return fail(grid.status());
  const TraceOptionsFn topts_for = [&](const config::Config& c) { return TraceOptionsFor(c); };

  // The workload once: its size and unqueued demand, for fixed:peak and the header.
  const trace::TraceOptions base_topts = topts_for(*base);
  auto reader = trace::OpenTrace(args.trace, args.format, base_topts);
  if (!reader.ok()) return fail(reader.status());
  auto summary = trace::SummarizeWorkload(**reader);
  if (!summary.ok()) return fail(summary.status());

  // Every point, plus the baseline on the configuration as given.
  std::vector<config::Config> configs;
  std::vector<sim::SimTask> tasks;
  std::vector<std::string> labels;
  const uint64_t seed = args.seed.value_or(base->simulation.seed);
  auto add = [&](config::Config c, const std::string& policy_text, std::string label) -> Status {
    TIDE_ASSIGN_OR_RETURN(auto policy, autoscale::MakePolicy(policy_text, c.policies, c.cluster, summary->demand));
    sim::SimOptions o;
    o.seed = seed;
    o.world = c.simulation.world;
    tasks.push_back({policy.ApplyTo(c.cluster), policy, o});
    configs.push_back(std::move(c));
    labels.push_back(std::move(label));
    return OkStatus();
  };
  if (!args.baseline.empty()) {
    if (auto s = add(*base, args.baseline, StrCat("baseline ", args.baseline)); !s.ok()) return fail(s);
  }
  for (const auto& point : *grid) {
    config::Config c = *base;
    if (auto s = plan::Apply(point, &c); !s.ok()) return fail(s);
    if (auto s = add(std::move(c), args.policy, point.Label()); !s.ok()) return fail(s);
  }

  // Progress on a terminal: points done, as they finish.
  const bool tty = isatty(STDERR_FILENO) && !args.quiet;
  std::atomic<size_t> finished{0};
  std::mutex mu;
  auto done = [&](size_t) {
    const size_t n = ++finished;
    if (!tty) return;
    std::lock_guard<std::mutex> lock(mu);
    std::cerr << "\rtide plan: " << n << "/" << tasks.size() << " simulations done" << std::flush;
  };
  auto open = [&]() { return trace::OpenTrace(args.trace, args.format, base_topts); };
  auto outputs = sim::RunTasks(tasks, open, args.threads, done);
  if (tty) std::cerr << "\r\033[K";
  if (!outputs.ok()) return fail(outputs.status());

  const model::ClusterSpec& spec = base->cluster;
  const bool has_baseline = !args.baseline.empty();
  const double baseline_cost = has_baseline ? (*outputs)[0].result.cost.total : 0;
  size_t best = has_baseline ? 1 : 0;
  for (size_t i = best; i < outputs->size(); ++i) {
    if ((*outputs)[i].result.jobs_unstarted == 0 &&
        ((*outputs)[best].result.jobs_unstarted > 0 ||
         (*outputs)[i].result.cost.total < (*outputs)[best].result.cost.total)) {
      best = i;
    }
  }
  if (!args.quiet) {
    std::cout << "plan: " << (*reader)->Describe() << ", " << summary->jobs << " jobs; policy " << args.policy << ", "
              << grid->size() << " points, seed " << seed << "\n\n";
    std::vector<std::vector<std::string>> rows;
    rows.push_back({"", StrCat("cost (", spec.currency, ")"), "reserved", "on-demand", "spot", "GPU-h paid", "util",
                    "wait p50 / p95 / p99", "unstarted", has_baseline ? "vs baseline" : ""});
    for (size_t i = 0; i < outputs->size(); ++i) {
      const sim::PolicyResult& r = (*outputs)[i].result;
      rows.push_back({StrCat(labels[i], i == best ? "  *" : ""), report::Money(r.cost.total),
                      report::Money(r.cost.by_tier[0]), report::Money(r.cost.by_tier[1]),
                      report::Money(r.cost.by_tier[2]), report::Money(r.cost.gpu_hours_paid),
                      fmt::format("{:.1f}%", 100 * r.utilization),
                      StrCat(report::HumanDuration(r.wait_s.p50), " / ", report::HumanDuration(r.wait_s.p95), " / ",
                             report::HumanDuration(r.wait_s.p99)),
                      StrCat(r.jobs_unstarted),
                      has_baseline && baseline_cost > 0 ? fmt::format("{:+.1f}%", 100 * (r.cost.total / baseline_cost - 1))
                                                        : ""});
    }
    std::vector<size_t> w(rows[0].size(), 0);
    for (const auto& row : rows) {
      for (size_t k = 0; k < row.size(); ++k) w[k] = std::max(w[k], row[k].size());
    }
    for (const auto& row : rows) {
      std::string line = fmt::format("{:<{}}", row[0], w[0]);
      for (size_t k = 1; k < row.size(); ++k) line += fmt::format("  {:>{}}", row[k], w[k]);
      while (!line.empty() && line.back() == ' ') line.pop_back();
      std::cout << line << "\n";
    }
    std::cout << "\n* the cheapest point that starts every job\n";
  }
  if (!args.json_out.empty()) {
    nlohmann::ordered_json root;
    root["trace"] = (*reader)->Describe();
    root["policy"] = args.policy;
    root["seed"] = seed;
    root["currency"] = spec.currency;
    auto& points = root["points"] = nlohmann::ordered_json::array();
    for (size_t i = 0; i < outputs->size(); ++i) {
      nlohmann::ordered_json p;
      p["label"] = labels[i];
      p["baseline"] = has_baseline && i == 0;
      p["result"] = nlohmann::ordered_json::parse(report::PolicyJson(configs[i].cluster, (*outputs)[i].result));
      points.push_back(std::move(p));
    }
    std::ofstream out(args.json_out);
    out << root.dump(2) << "\n";
    if (!out) return fail(absl::UnavailableError(StrCat(args.json_out, ": write failed")));
  }
  return 0;
}

}  // namespace tide::cli
