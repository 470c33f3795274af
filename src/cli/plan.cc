// `tide plan`: sweep a setting over a workload and print the cost and
// queue-wait curve (docs/design/sweep.md). The points run here on local
// threads, or (--slurm) as a Slurm job array whose tasks each run one point
// (--point) and whose results are gathered back from their JSON files; or
// (--kubernetes) written as a Kubernetes Indexed Job of the same tasks, whose
// JSON files --gather reads back.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "cli/commands.h"
#include "cli/plan_kubernetes.h"
#include "config/config.h"
#include "core/process.h"
#include "core/strings.h"
#include "core/time.h"
#include "nlohmann/json.hpp"
#include "report/report.h"
#include "sim/compare.h"
#include "sweep/sweep.h"
#include "trace/demand.h"
#include "trace/reader.h"

namespace tide::cli {
namespace {

using Json = nlohmann::ordered_json;

// What the table's header line and the JSON's top level say about the run:
// the same whether the points ran here or on Slurm.
struct PlanInfo {
  std::string trace;  // the reader's description
  int64_t jobs = 0;
  std::string policy;
  size_t grid_points = 0;  // points of the grid, without the baseline
  uint64_t seed = 0;
  std::string currency;
  bool has_baseline = false;
};

// One point's outcome: its label and its figures as report::PolicyJson
// writes them. Both the table and --json are made from this, so a local run
// and a gathered Slurm run print the same bytes.
struct PointRow {
  std::string label;
  bool baseline = false;
  Json result;
};

// The figures of a result the table shows, read back from its JSON.
struct Figures {
  double cost = 0;
  double by_tier[model::kNumTiers] = {};
  double gpu_hours_paid = 0;
  double utilization = 0;
  int64_t wait_p50 = 0, wait_p95 = 0, wait_p99 = 0;
  int64_t unstarted = 0;
};

// The member at `path` (object keys), or nullptr.
const Json* Find(const Json& j, std::initializer_list<std::string_view> path) {
  const Json* at = &j;
  for (std::string_view key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(std::string(key));
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

std::string PathText(std::initializer_list<std::string_view> path) { return StrJoin(path, "."); }

Status ReadNumber(const Json& j, std::initializer_list<std::string_view> path, double* out) {
  const Json* v = Find(j, path);
  if (v == nullptr || !v->is_number()) return absl::InvalidArgumentError(StrCat("no number at ", PathText(path)));
  *out = v->get<double>();
  return OkStatus();
}

Status ReadInteger(const Json& j, std::initializer_list<std::string_view> path, int64_t* out) {
  const Json* v = Find(j, path);
  if (v == nullptr || !v->is_number_integer()) {
    return absl::InvalidArgumentError(StrCat("no integer at ", PathText(path)));
  }
  *out = v->get<int64_t>();
  return OkStatus();
}

// InvalidArgument names the first field missing from `result`.
Result<Figures> ReadFigures(const Json& result) {
  Figures f;
  TIDE_RETURN_IF_ERROR(ReadNumber(result, {"cost_total"}, &f.cost));
  for (int t = 0; t < model::kNumTiers; ++t) {
    const std::string_view tier = model::TierName(static_cast<model::Tier>(t));
    TIDE_RETURN_IF_ERROR(ReadNumber(result, {"cost_by_tier", tier}, &f.by_tier[t]));
  }
  TIDE_RETURN_IF_ERROR(ReadNumber(result, {"gpu_hours_paid"}, &f.gpu_hours_paid));
  TIDE_RETURN_IF_ERROR(ReadNumber(result, {"utilization"}, &f.utilization));
  TIDE_RETURN_IF_ERROR(ReadInteger(result, {"wait_s", "p50"}, &f.wait_p50));
  TIDE_RETURN_IF_ERROR(ReadInteger(result, {"wait_s", "p95"}, &f.wait_p95));
  TIDE_RETURN_IF_ERROR(ReadInteger(result, {"wait_s", "p99"}, &f.wait_p99));
  TIDE_RETURN_IF_ERROR(ReadInteger(result, {"jobs_unstarted"}, &f.unstarted));
  return f;
}

// The table of `tide plan`. `*` marks the cheapest non-baseline row that
// started every job. Fails only if a row's JSON lacks a figure.
Status PrintTable(const PlanInfo& info, const std::vector<PointRow>& points) {
  std::vector<Figures> figs;
  for (const auto& p : points) {
    auto f = ReadFigures(p.result);
    if (!f.ok()) return absl::InternalError(StrCat("point ", p.label, ": ", Message(f.status())));
    figs.push_back(*f);
  }
  double baseline_cost = 0;
  std::optional<size_t> best;
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].baseline) {
      baseline_cost = figs[i].cost;
      continue;
    }
    if (!best || (figs[i].unstarted == 0 && (figs[*best].unstarted > 0 || figs[i].cost < figs[*best].cost))) {
      best = i;
    }
  }
  std::cout << "plan: " << info.trace << ", " << info.jobs << " jobs; policy " << info.policy << ", "
            << info.grid_points << " points, seed " << info.seed << "\n\n";
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"", StrCat("cost (", info.currency, ")"), "reserved", "on-demand", "spot", "GPU-h paid", "util",
                  "wait p50 / p95 / p99", "unstarted", info.has_baseline ? "vs baseline" : ""});
  for (size_t i = 0; i < points.size(); ++i) {
    const Figures& f = figs[i];
    rows.push_back(
        {StrCat(points[i].label, best && i == *best ? "  *" : ""), report::Money(f.cost), report::Money(f.by_tier[0]),
         report::Money(f.by_tier[1]), report::Money(f.by_tier[2]), report::Money(f.gpu_hours_paid),
         fmt::format("{:.1f}%", 100 * f.utilization),
         StrCat(report::HumanDuration(f.wait_p50), " / ", report::HumanDuration(f.wait_p95), " / ",
                report::HumanDuration(f.wait_p99)),
         StrCat(f.unstarted),
         info.has_baseline && baseline_cost > 0 ? fmt::format("{:+.1f}%", 100 * (f.cost / baseline_cost - 1)) : ""});
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
  return OkStatus();
}

std::string PlanJson(const PlanInfo& info, const std::vector<PointRow>& points) {
  Json root;
  root["trace"] = info.trace;
  root["policy"] = info.policy;
  root["seed"] = info.seed;
  root["currency"] = info.currency;
  auto& list = root["points"] = Json::array();
  for (const auto& p : points) {
    Json j;
    j["label"] = p.label;
    j["baseline"] = p.baseline;
    j["result"] = p.result;
    list.push_back(std::move(j));
  }
  return root.dump(2) + "\n";
}

// Every point of the sweep, ready to simulate: index 0 is the baseline when
// there is one.
struct Points {
  std::vector<config::Config> configs;
  std::vector<sim::SimTask> tasks;
  std::vector<std::string> labels;
};

// Simulates `which` (indices into `points`) on local threads, with progress
// on a terminal.
Result<std::vector<PointRow>> RunLocally(const PlanArgs& args, const PlanInfo& info, const Points& points,
                                         const std::vector<size_t>& which, const sim::TraceFactory& open) {
  std::vector<sim::SimTask> tasks;
  for (size_t i : which) tasks.push_back(points.tasks[i]);
  const bool tty = isatty(STDERR_FILENO) && !args.quiet;
  std::atomic<size_t> finished{0};
  std::mutex mu;
  auto done = [&](size_t) {
    const size_t n = ++finished;
    if (!tty) return;
    std::lock_guard<std::mutex> lock(mu);
    std::cerr << "\rtide plan: " << n << "/" << tasks.size() << " simulations done" << std::flush;
  };
  auto outputs = sim::RunTasks(tasks, open, args.threads, done);
  if (tty) std::cerr << "\r\033[K";
  if (!outputs.ok()) return outputs.status();
  std::vector<PointRow> rows;
  for (size_t k = 0; k < which.size(); ++k) {
    const size_t i = which[k];
    Json result = Json::parse(report::PolicyJson(points.configs[i].cluster, (*outputs)[k].result), nullptr, false);
    if (result.is_discarded()) return absl::InternalError(StrCat("point ", points.labels[i], ": unparseable JSON"));
    rows.push_back({points.labels[i], info.has_baseline && i == 0, std::move(result)});
  }
  return rows;
}

// ---- --slurm ---------------------------------------------------------------

std::string Absolute(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

// The work directory (`flag` names it in errors), created (or empty), as an
// absolute path.
Result<std::string> MakeWorkDir(std::string_view flag, const std::string& requested, Timestamp now) {
  const std::string dir = requested.empty() ? StrCat("tide-plan-", ToUnixSeconds(now)) : requested;
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) return absl::InvalidArgumentError(StrCat(flag, " ", dir, ": not a directory"));
    if (!fs::is_empty(dir, ec)) {
      return absl::InvalidArgumentError(StrCat(flag, " ", dir, ": exists and is not empty"));
    }
  } else if (!fs::create_directories(dir, ec) || ec) {
    return absl::NotFoundError(StrCat(flag, " ", dir, ": cannot create it: ", ec.message()));
  }
  return Absolute(dir);
}

Result<std::string> SelfExe() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return absl::UnavailableError(StrCat("/proc/self/exe: cannot find the tide binary: ", ec.message()));
  return exe.string();
}

// The arguments of the run that every array task or pod repeats,
// `--name=value` (so a value starting with '-' is never read as an option),
// with the tide binary, configuration and trace where that task sees them.
std::vector<std::string> TaskArgv(const PlanArgs& args, uint64_t seed, const std::string& exe,
                                  const std::string& config, const std::string& trace) {
  std::vector<std::string> argv = {exe, "plan", StrCat("--config=", config), StrCat("--trace=", trace),
                                   StrCat("--format=", args.format)};
  for (const auto& s : args.sweeps) argv.push_back(StrCat("--sweep=", s));
  argv.push_back(StrCat("--policy=", args.policy));
  if (!args.baseline.empty()) argv.push_back(StrCat("--baseline=", args.baseline));
  argv.push_back(StrCat("--seed=", seed));
  return argv;
}

std::string PointFile(const std::string& dir, size_t i) { return StrCat(dir, "/point-", i, ".json"); }
std::string PointLog(const std::string& dir, size_t i) { return StrCat(dir, "/point-", i, ".log"); }

// The batch script: one point per array task.
std::string SweepScript(const std::vector<std::string>& argv, const std::string& dir) {
  std::string out =
      "#!/bin/sh\n"
      "# tide plan --slurm: array task I runs point I of the sweep and writes its\n"
      "# figures to point-I.json (docs/design/sweep.md).\n"
      ": \"${SLURM_ARRAY_TASK_ID:?not a Slurm array task}\"\n"
      "exec";
  for (const auto& a : argv) StrAppend(&out, " ", ShellQuote(a));
  StrAppend(&out, " '--point' \"$SLURM_ARRAY_TASK_ID\" '--json' ", ShellQuote(StrCat(dir, "/point-")),
            "\"$SLURM_ARRAY_TASK_ID\"'.json' '-q'\n");
  return out;
}

std::string FirstLine(std::string_view s) {
  s = StripWhitespace(s);
  return std::string(s.substr(0, s.find('\n')));
}

// The last line of a log that says something, or "" (CLI11's closing
// "Run with --help" hint says nothing about the error above it).
std::string LastLine(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    const std::string_view text = StripWhitespace(line);
    if (!text.empty() && text != "Run with --help for more information.") last = std::string(text);
  }
  return last;
}

// Submits the array; returns its job id. Unavailable with sbatch's words if
// it refuses.
Result<std::string> Submit(CommandRunner* runner, const PlanArgs& args, const std::string& dir, size_t n) {
  std::vector<std::string> argv = {"sbatch", "--parsable", StrCat("--array=0-", n - 1), "--job-name=tide-plan",
                                   StrCat("--output=", dir, "/point-%a.log")};
  for (const auto& a : args.sbatch_args) argv.push_back(a);
  argv.push_back(StrCat(dir, "/sweep.sh"));
  TIDE_ASSIGN_OR_RETURN(CommandResult r, runner->Run(argv, "", Seconds(60)));
  if (r.exit_code != 0) {
    return absl::UnavailableError(
        StrCat(FormatArgv(argv), ": exit status ", r.exit_code, ": ", FirstLine(r.err.empty() ? r.out : r.err)));
  }
  // --parsable: "ID" or "ID;CLUSTER".
  const std::string id(StripWhitespace(std::string_view(r.out).substr(0, r.out.find(';'))));
  if (id.empty() || !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return absl::UnavailableError(StrCat("sbatch: no job id in its reply \"", FirstLine(r.out), "\""));
  }
  return id;
}

// Polls squeue until the array has left the queue. A few failed squeue runs
// in a row are tolerated (slurmctld may be busy); "Invalid job id" means the
// job is finished and already purged.
Status WaitForArray(CommandRunner* runner, const std::string& job, const std::string& dir, size_t n, bool tty) {
  constexpr int kMaxFailures = 30;  // in a row, 2 s apart: a minute or more
  // --jobs=ID: squeue's -j takes its argument only when attached to it.
  const std::vector<std::string> argv = {"squeue", "-h", StrCat("--jobs=", job), "-o", "%i"};
  int failures = 0;
  while (true) {
    if (tty) {
      size_t done = 0;
      std::error_code ec;
      for (size_t i = 0; i < n; ++i) done += std::filesystem::exists(PointFile(dir, i), ec) ? 1 : 0;
      std::cerr << "\rtide plan: " << done << "/" << n << " points done, job " << job << std::flush;
    }
    auto r = runner->Run(argv, "", Seconds(30));
    if (r.ok() && r->exit_code == 0) {
      failures = 0;
      if (StripWhitespace(r->out).empty()) return OkStatus();
    } else if (r.ok() && Contains(r->err, "Invalid job id")) {
      return OkStatus();
    } else if (++failures >= kMaxFailures) {
      const std::string why =
          r.ok() ? StrCat("exit status ", r->exit_code, ": ", FirstLine(r->err)) : std::string(Message(r.status()));
      return absl::UnavailableError(
          StrCat("job ", job, ": ", FormatArgv(argv), " keeps failing: ", why, " (the results will be in ", dir, ")"));
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
}

// Reads point i's result file; InvalidArgument or NotFound says what is wrong with it.
Result<PointRow> ReadPoint(const std::string& path, const std::string& label) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(StrCat(path, ": missing"));
  std::stringstream text;
  text << in.rdbuf();
  Json root = Json::parse(text.str(), nullptr, false);
  if (root.is_discarded()) return absl::InvalidArgumentError(StrCat(path, ": not JSON"));
  const Json* list = Find(root, {"points"});
  if (list == nullptr || !list->is_array() || list->size() != 1) {
    return absl::InvalidArgumentError(StrCat(path, ": not one point"));
  }
  const Json& p = (*list)[0];
  const Json* got_label = Find(p, {"label"});
  const Json* baseline = Find(p, {"baseline"});
  const Json* result = Find(p, {"result"});
  if (got_label == nullptr || !got_label->is_string() || baseline == nullptr || !baseline->is_boolean() ||
      result == nullptr || !result->is_object()) {
    return absl::InvalidArgumentError(StrCat(path, ": no label, baseline and result"));
  }
  if (got_label->get<std::string>() != label) {
    return absl::InvalidArgumentError(StrCat(path, ": holds point \"", got_label->get<std::string>(), "\""));
  }
  if (auto f = ReadFigures(*result); !f.ok())
    return absl::InvalidArgumentError(StrCat(path, ": ", Message(f.status())));
  return PointRow{label, baseline->get<bool>(), *result};
}

// Reads every point's DIR/point-I.json. Unavailable, after `what` ("job 42"),
// naming every point without a result and its log: always with `logs` (a
// Slurm array's), else only a log that is there.
Result<std::vector<PointRow>> Gather(const std::string& dir, const Points& points, std::string_view what,
                                     bool logs) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return absl::NotFoundError(StrCat(what, ": not a directory"));
  const size_t n = points.labels.size();
  std::vector<PointRow> rows;
  std::vector<std::string> failed;
  for (size_t i = 0; i < n; ++i) {
    auto row = ReadPoint(PointFile(dir, i), points.labels[i]);
    if (row.ok()) {
      rows.push_back(std::move(*row));
      continue;
    }
    std::string line = StrCat("  point ", i, " (", points.labels[i], "): ", Message(row.status()));
    if (logs || std::filesystem::exists(PointLog(dir, i), ec)) StrAppend(&line, "; its log: ", PointLog(dir, i));
    if (const std::string last = LastLine(PointLog(dir, i)); !last.empty()) StrAppend(&line, " (\"", last, "\")");
    failed.push_back(std::move(line));
  }
  if (!failed.empty()) {
    return absl::UnavailableError(
        StrCat(what, ": ", failed.size(), " of ", n, " points have no result:\n", StrJoin(failed, "\n")));
  }
  return rows;
}

// Submits every point as one array task, waits, and gathers the results.
// Unavailable, naming every failed point with its log, if any is missing.
Result<std::vector<PointRow>> RunOnSlurm(const PlanArgs& args, const Points& points, uint64_t seed) {
  const size_t n = points.labels.size();
  TIDE_ASSIGN_OR_RETURN(const std::string dir, MakeWorkDir("--slurm-dir", args.slurm_dir, RealClock().Now()));
  TIDE_ASSIGN_OR_RETURN(const std::string exe, SelfExe());
  const auto argv = TaskArgv(args, seed, exe, Absolute(args.config), Absolute(args.trace));
  TIDE_RETURN_IF_ERROR(WriteFile(StrCat(dir, "/sweep.sh"), SweepScript(argv, dir)));
  std::error_code ec;
  std::filesystem::permissions(
      StrCat(dir, "/sweep.sh"),
      std::filesystem::perms::owner_exec | std::filesystem::perms::group_exec | std::filesystem::perms::others_exec,
      std::filesystem::perm_options::add, ec);
  SystemCommandRunner runner;  // inherits the environment: SLURM_CONF reaches sbatch and squeue
  TIDE_ASSIGN_OR_RETURN(const std::string job, Submit(&runner, args, dir, n));
  const bool tty = isatty(STDERR_FILENO) && !args.quiet;
  const Status waited = WaitForArray(&runner, job, dir, n, tty);
  if (tty) std::cerr << "\r\033[K";
  TIDE_RETURN_IF_ERROR(waited);
  return Gather(dir, points, StrCat("job ", job), /*logs=*/true);
}

// ---- --kubernetes ----------------------------------------------------------

// The files the pods read, where they see them: the configuration and the
// trace by their names, and a spot supply trace the configuration names at
// the same place beside it. InvalidArgument if two would land on one name or
// the supply trace is not under the configuration's folder.
Result<std::vector<KubeInput>> KubeInputs(const PlanArgs& args, const config::Config& cfg) {
  namespace fs = std::filesystem;
  std::vector<KubeInput> inputs = {
      {Absolute(args.config), StrCat(kKubeMount, "/", fs::path(args.config).filename().string())},
      {Absolute(args.trace), StrCat(kKubeMount, "/", fs::path(args.trace).filename().string())}};
  if (const auto& supply = cfg.simulation.supply_trace) {
    const fs::path source = fs::path(supply->source).lexically_normal();
    if (source.is_absolute() || source.empty() || *source.begin() == "..") {
      return absl::InvalidArgumentError(
          StrCat("--kubernetes: ", supply->where, " names ", supply->source,
                 ", which is not under the configuration's folder; the pods see only that folder's copy on the "
                 "claim, so put the supply trace beside the configuration"));
    }
    inputs.push_back({Absolute(supply->path), StrCat(kKubeMount, "/", source.string())});
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t k = 0; k < i; ++k) {
      if (inputs[i].in_pod == inputs[k].in_pod && inputs[i].local != inputs[k].local) {
        return absl::InvalidArgumentError(StrCat("--kubernetes: ", inputs[k].local, " and ", inputs[i].local,
                                                 " would both be ", inputs[i].in_pod, " in the pods; rename one"));
      }
    }
  }
  return inputs;
}

// Writes DIR/job.yaml and DIR/files-pod.yaml and says where on stdout
// (unless quiet); submits nothing.
Status WriteKubernetesJob(const PlanArgs& args, const config::Config& cfg, const Points& points, uint64_t seed) {
  TIDE_RETURN_IF_ERROR(CheckKubernetesOptions(args.kubernetes));
  KubeJob job;
  job.options = args.kubernetes;
  job.completions = points.labels.size();
  TIDE_ASSIGN_OR_RETURN(job.inputs, KubeInputs(args, cfg));
  TIDE_ASSIGN_OR_RETURN(const std::string exe, SelfExe());
  TIDE_ASSIGN_OR_RETURN(job.dir, MakeWorkDir("--kubernetes", args.kubernetes_dir, RealClock().Now()));
  job.point_argv = TaskArgv(args, seed, "tide", job.inputs[0].in_pod, job.inputs[1].in_pod);
  job.gather_argv = TaskArgv(args, seed, exe, args.config, args.trace);
  job.gather_argv.push_back(StrCat("--gather=", job.dir));
  std::error_code ec;
  job.gather_cwd = std::filesystem::current_path(ec).string();
  TIDE_RETURN_IF_ERROR(WriteFile(StrCat(job.dir, "/job.yaml"), KubeJobYaml(job)));
  TIDE_RETURN_IF_ERROR(WriteFile(StrCat(job.dir, "/files-pod.yaml"), KubeFilesPodYaml(job)));
  if (!args.quiet) {
    std::cout << "tide plan: wrote " << job.dir << "/job.yaml, a Kubernetes Indexed Job of " << job.completions
              << " points, and " << job.dir << "/files-pod.yaml; the kubectl steps that run and gather it are at the "
              << "top of job.yaml\n";
  }
  return OkStatus();
}

// InvalidArgument naming the two flags if more than one way to run the points
// is asked for, or --json where no table is made.
Status CheckModes(const PlanArgs& args) {
  std::vector<std::string_view> modes;
  if (args.point) modes.push_back("--point");
  if (args.slurm) modes.push_back("--slurm");
  if (!args.kubernetes_dir.empty()) modes.push_back("--kubernetes");
  if (!args.gather_dir.empty()) modes.push_back("--gather");
  if (modes.size() > 1) return absl::InvalidArgumentError(StrCat(modes[0], " and ", modes[1], ": choose one"));
  if (!args.kubernetes_dir.empty() && !args.json_out.empty()) {
    return absl::InvalidArgumentError(
        "--json and --kubernetes: --kubernetes only writes the Job; give --json to the --gather run");
  }
  return OkStatus();
}

}  // namespace

int Plan(const PlanArgs& args) {
  auto fail = [](const Status& s) {
    std::cerr << "tide: " << Message(s) << "\n";
    return s.code() == absl::StatusCode::kInvalidArgument || s.code() == absl::StatusCode::kNotFound ? 2 : 1;
  };
  if (auto s = CheckModes(args); !s.ok()) return fail(s);
  auto base = config::LoadConfig(args.config);
  if (!base.ok()) return fail(base.status());
  auto grid = sweep::ExpandSweeps(args.sweeps);
  if (!grid.ok()) return fail(grid.status());
  const TraceOptionsFn topts_for = [&](const config::Config& c) { return TraceOptionsFor(c); };

  // The workload once: its size and unqueued demand, for fixed:peak and the header.
  const trace::TraceOptions base_topts = topts_for(*base);
  auto reader = trace::OpenTrace(args.trace, args.format, base_topts);
  if (!reader.ok()) return fail(reader.status());
  auto summary = trace::SummarizeWorkload(**reader);
  if (!summary.ok()) return fail(summary.status());

  // Every point, plus the baseline on the configuration as given.
  Points points;
  const uint64_t seed = args.seed.value_or(base->simulation.seed);
  auto add = [&](config::Config c, const std::string& policy_text, std::string label) -> Status {
    TIDE_ASSIGN_OR_RETURN(auto policy, autoscale::MakePolicy(policy_text, c.policies, c.cluster, summary->demand));
    sim::SimOptions o;
    o.seed = seed;
    o.world = c.simulation.world;
    points.tasks.push_back({policy.ApplyTo(c.cluster), policy, o});
    points.configs.push_back(std::move(c));
    points.labels.push_back(std::move(label));
    return OkStatus();
  };
  if (!args.baseline.empty()) {
    if (auto s = add(*base, args.baseline, StrCat("baseline ", args.baseline)); !s.ok()) return fail(s);
  }
  for (const auto& point : *grid) {
    config::Config c = *base;
    if (auto s = sweep::Apply(point, &c); !s.ok()) return fail(s);
    if (auto s = add(std::move(c), args.policy, point.Label()); !s.ok()) return fail(s);
  }

  PlanInfo info;
  info.trace = (*reader)->Describe();
  info.jobs = summary->jobs;
  info.policy = args.policy;
  info.grid_points = grid->size();
  info.seed = seed;
  info.currency = base->cluster.currency;
  info.has_baseline = !args.baseline.empty();

  std::vector<size_t> which;
  if (args.point) {
    const int64_t n = static_cast<int64_t>(points.labels.size());
    if (*args.point < 0 || *args.point >= n) {
      return fail(absl::InvalidArgumentError(StrCat("--point ", *args.point, ": the sweep has ", n, " points (0..",
                                                    n - 1, ", the baseline first if given)")));
    }
    which.push_back(static_cast<size_t>(*args.point));
  } else {
    for (size_t i = 0; i < points.labels.size(); ++i) which.push_back(i);
  }
  if (!args.kubernetes_dir.empty()) {
    if (auto s = WriteKubernetesJob(args, *base, points, seed); !s.ok()) return fail(s);
    return 0;
  }
  auto open = [&]() { return trace::OpenTrace(args.trace, args.format, base_topts); };
  auto rows = args.slurm                   ? RunOnSlurm(args, points, seed)
              : !args.gather_dir.empty() ? Gather(args.gather_dir, points, StrCat("--gather ", args.gather_dir), false)
                                         : RunLocally(args, info, points, which, open);
  if (!rows.ok()) return fail(rows.status());

  if (!args.quiet) {
    if (auto s = PrintTable(info, *rows); !s.ok()) return fail(s);
  }
  if (!args.json_out.empty()) {
    if (auto s = WriteFile(args.json_out, PlanJson(info, *rows)); !s.ok()) return fail(s);
  }
  return 0;
}

}  // namespace tide::cli
