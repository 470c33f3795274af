// `tide place`: replay an openb pod list onto its node list, placement only
// (docs/design/placement.md); and `tide trace openb-cluster`.
#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "core/strings.h"
#include "nlohmann/json.hpp"
#include "place/openb_input.h"
#include "place/packer.h"
#include "trace/openb.h"

namespace tide::cli {
namespace {

// The arrival shares the summary table shows.
constexpr double kShares[] = {0.5, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3};

// The FGD paper's published GPU-milli allocation ratio for its policy
// (Weng et al., ATC'23), as issue 4 cites it. Printed, never computed here.
constexpr double kPublishedFgdMilliAlloc = 0.953;

std::string Pct(double x) { return fmt::format("{:.1f}%", 100 * x); }

std::string SummaryTable(const std::vector<place::Run>& runs) {
  std::string t = fmt::format("{:<10} {:>6} {:>8} {:>7} {:>10} {:>12} {:>6}\n", "policy", "share", "GPU pods",
                              "failed", "GPU alloc", "milli alloc", "frag");
  for (const auto& run : runs) {
    for (double share : kShares) {
      const place::Step& s = place::StepAtShare(run, share);
      StrAppend(&t, fmt::format("{:<10} {:>6} {:>8} {:>7} {:>10} {:>12} {:>6}\n", place::PolicyName(run.policy),
                                fmt::format("{:.0f}%", 100 * share), s.arrival, s.failed, Pct(s.gpu_alloc),
                                Pct(s.milli_alloc), Pct(s.frag)));
    }
  }
  return t;
}

std::string StepsCsv(const std::vector<place::Run>& runs) {
  std::string csv = "policy,arrival,arrived,placed,failed,gpu_alloc,milli_alloc,frag\n";
  for (const auto& run : runs) {
    for (const auto& s : run.steps) {
      StrAppend(&csv, fmt::format("{},{},{:.6f},{},{},{:.6f},{:.6f},{:.6f}\n", place::PolicyName(run.policy),
                                  s.arrival, s.arrived, s.placed ? 1 : 0, s.failed, s.gpu_alloc, s.milli_alloc,
                                  s.frag));
    }
  }
  return csv;
}

std::string StepsJson(const PlaceArgs& args, const place::OpenbInput& in, size_t arrivals,
                      const std::vector<place::Run>& runs) {
  nlohmann::ordered_json j;
  j["pods"] = args.pods;
  j["nodes"] = args.nodes;
  j["gpu_nodes"] = in.cluster.nodes.size();
  j["gpus"] = in.cluster.TotalGpus();
  j["inflate"] = args.inflate;
  j["seed"] = args.seed;
  j["arrivals"] = arrivals;
  j["published_fgd_milli_alloc"] = kPublishedFgdMilliAlloc;
  for (const auto& run : runs) {
    nlohmann::ordered_json r;
    r["policy"] = place::PolicyName(run.policy);
    r["cpu_only_skipped"] = run.cpu_only;
    const place::Step& last = run.steps.back();
    r["gpu_pods"] = last.arrival;
    r["failed"] = last.failed;
    for (double share : kShares) {
      const place::Step& s = place::StepAtShare(run, share);
      r["at_share"].push_back({{"share", share},
                               {"gpu_pods", s.arrival},
                               {"arrived", s.arrived},
                               {"failed", s.failed},
                               {"gpu_alloc", s.gpu_alloc},
                               {"milli_alloc", s.milli_alloc},
                               {"frag", s.frag}});
    }
    j["policies"].push_back(std::move(r));
  }
  return j.dump(2) + "\n";
}

}  // namespace

int Place(const PlaceArgs& args) {
  std::vector<place::Policy> policies;
  for (std::string_view name : Split(args.policies, ',', /*skip_empty=*/true)) {
    auto p = place::ParsePolicy(StripWhitespace(name));
    if (!p.ok()) return ReportFailure(p.status());
    policies.push_back(*p);
  }
  if (policies.empty()) return ReportFailure(absl::InvalidArgumentError("--policy: name at least one policy"));
  auto in = place::LoadOpenb(args.nodes, args.pods);
  if (!in.ok()) return ReportFailure(in.status());
  const int64_t capacity = in->cluster.TotalGpus() * place::kMilliPerGpu;
  const std::vector<int> arrivals = place::InflateArrivals(in->pods, capacity, args.inflate, args.seed);
  const place::Workload workload = place::WorkloadOf(in->pods);
  std::vector<place::Run> runs;
  for (place::Policy p : policies) {
    auto run = place::Replay(in->cluster, in->pods, arrivals, workload, p);
    if (!run.ok()) return ReportFailure(run.status());
    if (run->steps.empty()) return ReportFailure(absl::InvalidArgumentError(StrCat(args.pods, ": no GPU pods")));
    runs.push_back(std::move(*run));
  }
  if (!args.quiet) {
    std::cout << fmt::format("pods: {} ({} rows); nodes: {} ({} GPU nodes, {} GPUs; {} CPU-only nodes left out)\n",
                             args.pods, in->pods.size(), args.nodes, in->cluster.nodes.size(),
                             in->cluster.TotalGpus(), in->cpu_nodes);
    std::cout << fmt::format(
        "arrivals: {} at {:.2f}x GPU capacity (seed {}), no departures; {} CPU-only pods skipped, {} GPU pods "
        "placed in order\n",
        arrivals.size(), args.inflate, args.seed, runs[0].cpu_only, runs[0].steps.size());
    std::cout << SummaryTable(runs);
    std::cout << fmt::format(
        "published: {} GPU-milli allocation ratio for the FGD paper's policy (Weng et al., ATC'23, as cited in "
        "issue 4);\n  tide's fgd above is its own implementation of the idea, not the paper's code.\n",
        Pct(kPublishedFgdMilliAlloc));
  }
  if (!args.csv_out.empty()) {
    if (auto s = WriteFile(args.csv_out, StepsCsv(runs)); !s.ok()) return ReportFailure(s);
  }
  if (!args.json_out.empty()) {
    const std::string json = StepsJson(args, *in, arrivals.size(), runs);
    if (auto s = WriteFile(args.json_out, json); !s.ok()) return ReportFailure(s);
  }
  return 0;
}

int OpenbCluster(const OpenbClusterArgs& args) {
  auto nodes = trace::ReadOpenbNodes(args.nodes);
  if (!nodes.ok()) return ReportFailure(nodes.status());
  int cpu_only = 0;
  const auto groups = trace::GroupOpenbNodes(*nodes, &cpu_only);
  if (groups.empty()) return ReportFailure(absl::InvalidArgumentError(StrCat(args.nodes, ": no GPU nodes")));
  const std::string yaml = trace::OpenbClusterYaml(groups, args.nodes);
  if (args.out.empty() || args.out == "-") {
    std::cout << yaml;
  } else if (auto s = WriteFile(args.out, yaml); !s.ok()) {
    return ReportFailure(s);
  }
  if (cpu_only > 0) std::cerr << "tide: left out " << cpu_only << " CPU-only nodes\n";
  return 0;
}

}  // namespace tide::cli
