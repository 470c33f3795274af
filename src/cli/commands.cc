#include "cli/commands.h"
#include "core/strings.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <atomic>
#include <map>
#include <optional>


#include "autoscale/policy.h"
#include "cli/progress.h"
#include "bound/bound.h"
#include "config/config.h"
#include "backends/factory.h"
#include "report/html.h"
#include "report/report.h"
#include "sched/eligibility.h"
#include "sim/compare.h"
#include "trace/demand.h"
#include "trace/reader.h"
#include "trace/synth.h"

namespace tide::cli {
namespace {

constexpr int kOk = 0, kFailed = 1, kBadInput = 2;

int Fail(const Status& s) {
  std::cerr << "tide: " << s.message() << "\n";
  return s.code() == absl::StatusCode::kInvalidArgument || s.code() == absl::StatusCode::kNotFound ? kBadInput
                                                                                                   : kFailed;
}

// The configuration's defaults when no file is given.
config::Config DefaultConfig() {
  auto c = config::ParseConfig(
      "pools:\n  - {name: default, instance_type: {gpus: 8}, tier: on-demand, price_per_hour: 100}\n", "(defaults)");
  return *c;
}

}  // namespace

trace::TraceOptions TraceOptionsFor(const config::Config& cfg) {
  trace::TraceOptions o;
  o.start = cfg.simulation.start;
  o.gpus_per_node =
      cfg.simulation.gpus_per_worker_max > 0 ? cfg.simulation.gpus_per_worker_max : cfg.cluster.MaxGpusPerNode();
  o.spec = &cfg.cluster;
  o.phases = cfg.jobs.phases;
  o.checkpoint = cfg.jobs.checkpoint;
  o.swf_procs_per_gpu = cfg.simulation.swf_procs_per_gpu;
  return o;
}

int ReportFailure(const Status& s) { return Fail(s); }

void PrintConfigNotes(const config::Config& cfg) {
  for (const auto& note : cfg.notes) std::cerr << "tide: note: " << note << "\n";
}

Status CheckWritable(const std::string& path) {
  if (path.empty() || path == "-") return OkStatus();
  const std::filesystem::path p(path);
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) return absl::NotFoundError(StrCat(path, ": cannot write: is a directory"));
  const bool exists = std::filesystem::exists(p, ec);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  if (!exists && !std::filesystem::is_directory(dir, ec)) {
    return absl::NotFoundError(StrCat(path, ": cannot write: no directory ", dir.string()));
  }
  if (access(exists ? path.c_str() : dir.c_str(), W_OK) != 0) {
    return absl::NotFoundError(StrCat(path, ": cannot write: permission denied"));
  }
  return OkStatus();
}


Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return absl::NotFoundError(StrCat(path, ": cannot write"));
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(StrCat(path, ": write failed"));
  return OkStatus();
}

namespace {

// The offline lower bounds on the workload `reader` streams, under the
// configuration's prices, into `info`: the best reserved base, and the
// configured one. Jobs no policy could ever start (they fit no pool) cost
// nothing in simulation, so they are left out and counted.
Status LowerBounds(const config::Config& cfg, trace::TraceReader& reader, report::RunInfo* info) {
  std::vector<bound::JobDemand> demand;
  info->jobs = 0;
  info->jobs_fit_no_pool = 0;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(auto job, reader.Next());
    if (!job) break;
    ++info->jobs;
    if (job->submit < reader.start()) {  // as the simulator refuses it
      return absl::InvalidArgumentError(StrCat(reader.Describe(), ": job ", job->name, " is submitted at ",
                                               FormatTimestamp(job->submit), ", before the trace start ",
                                               FormatTimestamp(reader.start()), "; set simulation.start earlier"));
    }
    if (!sched::CouldEverRun(cfg.cluster, *job)) {
      ++info->jobs_fit_no_pool;
      continue;
    }
    demand.push_back({job->submit, job->runtime, job->gpus(), job->preemptible && !job->is_protected});
  }
  TIDE_ASSIGN_OR_RETURN(auto histogram, bound::BuildHistogram(reader.start(), demand));
  const bound::TierPrices prices = bound::CheapestPrices(cfg.cluster);
  auto best = bound::ComputeBound(histogram, prices);
  if (!best.ok()) return absl::InvalidArgumentError(StrCat(cfg.source, ": ", Message(best.status())));
  info->lower_bound = *best;
  // Not an error when the configured base leaves demand unserved: there is
  // then no such bound to show.
  auto configured = bound::BoundAtReserved(histogram, prices, bound::ConfiguredReservedGpus(cfg.cluster));
  if (configured.ok()) info->bound_at_configured = *configured;
  return OkStatus();
}

}  // namespace

int Bound(const BoundArgs& args) {
  auto cfg = config::LoadConfig(args.config);
  if (!cfg.ok()) return Fail(cfg.status());
  auto reader = trace::OpenTrace(args.trace, args.format, TraceOptionsFor(*cfg));
  if (!reader.ok()) return Fail(reader.status());
  report::RunInfo info;
  if (auto s = LowerBounds(*cfg, **reader, &info); !s.ok()) return Fail(s);
  info.config = args.config;
  info.trace = (*reader)->Describe();
  std::cout << report::FormatBound(info, cfg->cluster);
  if (const std::string notes = (*reader)->Notes(); !notes.empty()) std::cout << "  notes: " << notes << "\n";
  if (!args.json_out.empty()) {
    if (auto s = WriteFile(args.json_out, report::FormatBoundJson(info, cfg->cluster)); !s.ok()) return Fail(s);
  }
  return kOk;
}

int Simulate(const SimulateArgs& args) {
  auto cfg = config::LoadConfig(args.config);
  if (!cfg.ok()) return Fail(cfg.status());
  const trace::TraceOptions topts = TraceOptionsFor(*cfg);
  auto open = [&]() { return trace::OpenTrace(args.trace, args.format, topts); };

  auto reader = open();
  if (!reader.ok()) return Fail(reader.status());
  const std::string list = args.compare.empty() ? StrJoin(cfg->policies.compare, ",") : args.compare;
  const ProgressMode mode = args.progress == "always"  ? ProgressMode::kAlways
                            : args.progress == "never" ? ProgressMode::kNever
                                                       : ProgressMode::kAuto;
  const bool show_progress = !args.quiet && ProgressWanted(mode);
  // The workload's size and unqueued demand. Read in a pass of its own first
  // (which also checks every row before any simulation starts) when a policy
  // is sized from it or progress is shown against its job count; else summed
  // up as the first simulation reads the trace.
  std::optional<trace::WorkloadSummary> summary;
  if (autoscale::NeedsDemandStats(list) || show_progress) {
    auto s = trace::SummarizeWorkload(**reader);
    if (!s.ok()) return Fail(s.status());
    summary = *s;
  }
  auto policies = autoscale::MakePolicies(list, cfg->policies, cfg->cluster,
                                          summary ? std::optional<autoscale::DemandStats>(summary->demand) : std::nullopt);
  if (!policies.ok()) return Fail(policies.status());

  const std::string time_zone = args.time_zone.empty() ? cfg->DisplayTimeZone() : args.time_zone;
  if (auto z = config::CheckTimeZone(time_zone); !z.ok()) {
    return Fail(absl::InvalidArgumentError(StrCat("--time-zone: ", Message(z))));
  }
  // Outputs are checked before a long run, not after it.
  for (const std::string* out : {&args.json_out, &args.html_out, &args.decision_log}) {
    if (auto w = CheckWritable(*out); !w.ok()) return Fail(w);
  }

  sim::CompareOptions copts;
  copts.sim.seed = args.seed.value_or(cfg->simulation.seed);
  copts.sim.record_decisions = !args.decision_log.empty();
  copts.sim.record_timeline = !args.html_out.empty();
  copts.sim.world = cfg->simulation.world;
  copts.threads = args.threads;
  std::vector<sim::SimProgress> progress(policies->size());
  copts.progress = progress.data();
  Result<std::vector<sim::SimOutput>> outputs = absl::UnknownError("not run");
  std::optional<trace::WorkloadSummary> gathered;  // by the first simulation's reader
  std::atomic<bool> summing{false};
  auto open_run = [&]() -> Result<std::unique_ptr<trace::TraceReader>> {
    auto r = open();
    if (!r.ok() || summary || summing.exchange(true)) return r;
    return std::unique_ptr<trace::TraceReader>(std::make_unique<trace::SummarizingReader>(std::move(*r), &gathered));
  };
  {
    std::optional<ProgressDisplay> display;
    if (show_progress) display.emplace(&std::cerr, progress.data(), progress.size(), summary->jobs);
    outputs = sim::RunComparison(cfg->cluster, *policies, open_run, copts);
  }
  if (!outputs.ok()) return Fail(outputs.status());
  if (!summary) summary = gathered;
  if (!summary) {  // no simulation read the trace to its end
    auto again = open();
    if (!again.ok()) return Fail(again.status());
    auto s = trace::SummarizeWorkload(**again);
    if (!s.ok()) return Fail(s.status());
    summary = *s;
  }

  std::vector<sim::PolicyResult> results;
  for (const auto& o : *outputs) results.push_back(o.result);
  report::RunInfo info;
  info.config = args.config;
  info.trace = (*reader)->Describe();
  info.jobs = summary->jobs;
  info.gpu_hours = summary->gpu_hours;
  info.peak_demand_gpus = summary->demand.peak_gpus;
  info.mean_demand_gpus = summary->demand.mean_gpus;
  info.seed = copts.sim.seed;
  if (args.bound) {
    auto again = open();
    if (!again.ok()) return Fail(again.status());
    report::RunInfo bounds;
    if (auto s = LowerBounds(*cfg, **again, &bounds); !s.ok()) return Fail(s);
    info.lower_bound = bounds.lower_bound;
    info.bound_at_configured = bounds.bound_at_configured;
  }

  if (!args.quiet) std::cout << report::FormatTable(info, cfg->cluster, results);
  if (!args.json_out.empty()) {
    if (auto s = WriteFile(args.json_out, report::FormatJson(info, cfg->cluster, results)); !s.ok()) return Fail(s);
  }
  if (!args.html_out.empty()) {
    report::ReportData data;
    data.title = StrCat("tide simulate: ", info.trace);
    data.meta = {StrCat("config ", info.config), StrCat("seed ", info.seed),
                 StrCat(report::Money(static_cast<double>(info.jobs)), " jobs"),
                 StrCat(report::Money(info.gpu_hours), " GPU-hours"),
                 fmt::format("unqueued demand: peak {} GPUs, mean {:.0f}", info.peak_demand_gpus, info.mean_demand_gpus)};
    data.time_zone = time_zone;
    data.currency = cfg->cluster.currency;
    data.summary_json = report::FormatJson(info, cfg->cluster, results);
    for (const auto& c : cfg->cluster.priority_classes) data.classes.push_back(c.name);
    for (const auto& o : *outputs) {
      data.policies.push_back({o.result.name, o.result.description, o.timeline ? &*o.timeline : nullptr, o.wait_quantiles});
    }
    if (auto s = WriteFile(args.html_out, report::RenderHtml(report::ReportDataJson(data))); !s.ok()) return Fail(s);
  }
  if (!args.decision_log.empty()) {
    std::string text;
    for (const auto& o : *outputs) {
      for (const auto& line : o.decisions) StrAppend(&text, line, "\n");
    }
    if (auto s = WriteFile(args.decision_log, text); !s.ok()) return Fail(s);
  }
  return kOk;
}

int TraceSynth(const SynthArgs& args) {
  config::Config cfg = DefaultConfig();
  if (!args.config.empty()) {
    auto c = config::LoadConfig(args.config);
    if (!c.ok()) return Fail(c.status());
    cfg = std::move(*c);
  }
  trace::SynthOptions o;
  o.seed = args.seed;
  o.days = args.days;
  o.jobs_per_hour = args.jobs_per_hour;
  o.scale = args.scale;
  o.utc_offset_hours = args.utc_offset_hours;
  o.hpo_bursts_per_workday = args.bursts_per_day;
  o.long_runs_per_workday = args.long_runs_per_day;
  o.morning_rush = args.morning_rush;
  o.elastic_share = args.elastic_share;
  o.io_bound_share = args.io_bound_share;
  o.idle_share = args.idle_share;
  o.slice_share = args.slice_share;
  o.data_share = args.data_share;
  o.data_region = args.data_region;
  o.start = cfg.simulation.start;
  o.gpus_per_node = TraceOptionsFor(cfg).gpus_per_node;
  if (!args.start.empty()) {
    auto t = ParseTimestamp(args.start);
    if (!t.ok()) return Fail(absl::InvalidArgumentError(StrCat("--start: ", Message(t.status()))));
    o.start = *t;
  }
  auto reader = trace::MakeSynthReader(o, &cfg.cluster);
  if (!reader.ok()) return Fail(reader.status());
  std::ofstream file;
  std::ostream* out = &std::cout;
  if (!args.out.empty() && args.out != "-") {
    file.open(args.out, std::ios::binary);
    if (!file) return Fail(absl::NotFoundError(StrCat(args.out, ": cannot write")));
    out = &file;
  }
  trace::NativeWriter writer(out, &cfg.cluster, o.start, o.Extended());
  int64_t n = 0;
  while (true) {
    auto job = (*reader)->Next();
    if (!job.ok()) return Fail(job.status());
    if (!*job) break;
    writer.Write(**job);
    ++n;
  }
  out->flush();
  if (!*out) return Fail(absl::UnavailableError("writing the trace failed"));
  if (out != &std::cout) {
    std::cerr << fmt::format("tide: wrote {} jobs over {} days to {} (seed {}, start {})\n", n, o.days, args.out,
                                 o.seed, FormatTimestamp(o.start));
  }
  return kOk;
}

int TraceStats(const StatsArgs& args) {
  config::Config cfg = DefaultConfig();
  if (!args.config.empty()) {
    auto c = config::LoadConfig(args.config);
    if (!c.ok()) return Fail(c.status());
    cfg = std::move(*c);
  }
  const trace::TraceOptions topts = TraceOptionsFor(cfg);
  auto reader = trace::OpenTrace(args.trace, args.format, topts);
  if (!reader.ok()) return Fail(reader.status());
  std::map<int, int64_t> sizes;
  std::map<std::string, int64_t> classes;
  std::vector<int64_t> runtimes;
  Timestamp first = kInfiniteFuture, last = kInfinitePast;
  double gpu_hours = 0;
  while (true) {
    auto job = (*reader)->Next();
    if (!job.ok()) return Fail(job.status());
    if (!*job) break;
    ++sizes[(*job)->gpus()];
    ++classes[cfg.cluster.priority_classes[(*job)->priority_class].name];
    runtimes.push_back((*job)->runtime.count());
    first = std::min(first, (*job)->submit);
    last = std::max(last, (*job)->submit);
    gpu_hours += (*job)->gpus() * static_cast<double>((*job)->runtime.count()) / 3600.0;
  }
  auto again = trace::OpenTrace(args.trace, args.format, topts);
  if (!again.ok()) return Fail(again.status());
  auto summary = trace::SummarizeWorkload(**again);
  if (!summary.ok()) return Fail(summary.status());
  std::cout << "trace: " << (*reader)->Describe() << "\n";
  std::cout << fmt::format("jobs: {} over {} (first {}, last {})\n", runtimes.size(),
                               report::HumanDuration(runtimes.empty() ? 0 : (last - first).count()),
                               runtimes.empty() ? "-" : FormatTimestamp(first),
                               runtimes.empty() ? "-" : FormatTimestamp(last));
  std::cout << fmt::format("GPU-hours: {:.0f}; unqueued demand: peak {} GPUs, mean {:.1f} GPUs\n", gpu_hours,
                               summary->demand.peak_gpus, summary->demand.mean_gpus);
  auto pct = sim::ComputePercentiles(&runtimes);
  std::cout << fmt::format("runtime p50 / p95 / p99: {} / {} / {}\n", report::HumanDuration(pct.p50),
                               report::HumanDuration(pct.p95), report::HumanDuration(pct.p99));
  std::cout << "GPUs per job:";
  for (const auto& [g, n] : sizes) std::cout << " " << g << ":" << n;
  std::cout << "\npriority classes:";
  for (const auto& [c, n] : classes) std::cout << " " << c << ":" << n;
  std::cout << "\n";
  if (const std::string notes = (*reader)->Notes(); !notes.empty()) std::cout << "notes: " << notes << "\n";
  return kOk;
}

int Validate(const std::string& path) {
  auto cfg = config::LoadConfig(path);
  if (!cfg.ok()) return Fail(cfg.status());
  PrintConfigNotes(*cfg);
  // What `tide run` would manage: its backend must be one that can run (for
  // Slurm: the host lists expand and cover every pool's max_nodes).
  Result<backends::Backend> backend = backends::Backend{};
  if (cfg->live.present) backend = backends::MakeBackend(*cfg);
  if (!backend.ok()) return Fail(backend.status());
  std::cout << path << ": OK\n";
  for (const auto& p : cfg->cluster.pools) {
    std::cout << fmt::format("  pool {:<20} {:<9} {:>2} x {:<10} {:<12} {:>8.2f} {}/h  nodes {}..{}  boot {}\n", p.name,
                                 model::TierName(p.tier), p.type.gpus, p.type.gpu_model, p.region, p.price_per_hour,
                                 cfg->cluster.currency, p.min_nodes, p.max_nodes, p.boot_delay.Describe());
  }
  for (const auto& policy : cfg->policies.compare) {
    auto made = autoscale::MakePolicy(policy, cfg->policies, cfg->cluster, autoscale::DemandStats{});
    if (!made.ok()) return Fail(made.status());
  }
  std::cout << "  policies compared by default: " << StrJoin(cfg->policies.compare, ", ") << "\n";
  if (cfg->live.present) {
    const auto& live = cfg->live;
    std::cout << fmt::format("  live: {}, provider {}, loop every {}, state {}\n", backend->summary,
                             live.provider.kind, FormatDuration(live.loop_interval), live.state);
  }
  return kOk;
}

}  // namespace tide::cli
