// The `tide` subcommands. Each returns the process exit status:
// 0 success, 1 the run failed, 2 bad input (usage, configuration, trace).
#ifndef TIDE_CLI_COMMANDS_H_
#define TIDE_CLI_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace tide::cli {

struct SimulateArgs {
  std::string config;
  std::string trace;
  std::string format = "auto";
  std::string compare;  // empty: the configuration's policies.compare
  std::string json_out;
  std::string decision_log;
  std::optional<uint64_t> seed;
  int threads = 0;
  bool quiet = false;
  bool bound = false;  // also compare every cost with the offline lower bound
  std::string html_out;   // write the HTML report here
  std::string time_zone;  // the report's time axes (default: the configuration's)
  std::string progress = "auto";  // auto (on a terminal), always, never
};
int Simulate(const SimulateArgs& args);

// `tide bound`: the offline lower bound on cost (docs/design/bound.md).
struct BoundArgs {
  std::string config;
  std::string trace;
  std::string format = "auto";
  std::string json_out;
};
int Bound(const BoundArgs& args);

struct SynthArgs {
  std::string config;  // optional, for priority classes and the start time
  std::string out;     // "-" or empty: stdout
  int days = 7;
  uint64_t seed = 1;
  double jobs_per_hour = 10;
  double scale = 1;
  int utc_offset_hours = 0;
  std::string start;
  double bursts_per_day = 2;
  double long_runs_per_day = 0.6;
  double morning_rush = 0;
  double elastic_share = 0;
  double io_bound_share = 0;
  double idle_share = 0;
  double slice_share = 0;
  double data_share = 0;
  std::string data_region = "default";
};
int TraceSynth(const SynthArgs& args);

struct StatsArgs {
  std::string config;
  std::string trace;
  std::string format = "auto";
};
int TraceStats(const StatsArgs& args);

int Validate(const std::string& config);

// The Job `tide plan --kubernetes` writes (docs/design/sweep.md).
struct PlanKubernetesOptions {
  std::string name = "tide-plan";     // the Job's name, and the claim's folder its pods see
  std::string image = "tide:latest";  // an image with tide on its PATH
  std::string pvc = "tide-plan";      // a ReadWriteMany PersistentVolumeClaim: inputs and results
  int parallelism = 16;               // pods at once; never more than the points
  std::string cpu = "1";              // each pod's requests: one point is one thread
  std::string memory = "1Gi";
};

struct PlanArgs {
  std::string config;
  std::string trace;
  std::string format = "auto";
  std::vector<std::string> sweeps;
  std::string policy = "tide";
  std::string baseline;  // e.g. fixed:20; run once on the configuration as given
  std::string json_out;
  std::optional<uint64_t> seed;
  int threads = 0;
  bool quiet = false;
  // Run only this point (0-based, the baseline first if given): what each
  // task of a --slurm job array or pod of a --kubernetes Job runs, writing
  // its one point with --json.
  std::optional<int64_t> point;
  // Submit the points as a Slurm job array (sbatch) instead of simulating
  // here, wait for it, and gather the results (docs/design/sweep.md).
  bool slurm = false;
  std::string slurm_dir;                 // empty: tide-plan-<unix seconds> in the current directory
  std::vector<std::string> sbatch_args;  // extra sbatch arguments, e.g. --partition=gpu
  // Write the points as a Kubernetes Indexed Job into this directory (new or
  // empty) instead of simulating; nothing is submitted. Empty: not asked for.
  std::string kubernetes_dir;
  PlanKubernetesOptions kubernetes;
  // Simulate nothing: read DIR/point-I.json of every point (written by a
  // --kubernetes Job or a --slurm array) and print their table.
  std::string gather_dir;
};
int Plan(const PlanArgs& args);

// `tide place`: the openb pod list placed onto its node list, no departures.
struct PlaceArgs {
  std::string pods;
  std::string nodes;
  std::string policies = "best-fit,first-fit,worst-fit,fgd";
  double inflate = 1.3;  // arrivals up to this multiple of the GPU capacity
  uint64_t seed = 1;
  std::string csv_out;
  std::string json_out;
  bool quiet = false;
};
int Place(const PlaceArgs& args);

// `tide trace openb-cluster`: a configuration from an openb node list.
struct OpenbClusterArgs {
  std::string nodes;
  std::string out;  // "-" or empty: stdout
};
int OpenbCluster(const OpenbClusterArgs& args);

// `tide run`: the live controller (docs/live.md).
struct RunArgs {
  std::string config;
  std::string policy = "tide";  // tide, tide-seed or a variant
  bool dry_run = false;
  bool once = false;
  int loops = 0;  // stop after this many loops (0: until SIGTERM)
  bool no_http = false;
};
int Run(const RunArgs& args);

// `tide local interrupt` (alias `reclaim`): a spot interruption for the local
// provider.
struct LocalInterruptArgs {
  std::string config;
  std::string node;
  std::string notice = "30s";
};
int LocalInterrupt(const LocalInterruptArgs& args);

// Prints `s` as "tide: <message>" and returns its exit status (2 for bad
// input, 1 otherwise).
int ReportFailure(const absl::Status& s);
// Writes `text` to `path`: NotFound if it cannot be opened, Unavailable if
// the write fails.
absl::Status WriteFile(const std::string& path, const std::string& text);
// NotFound naming `path` if it cannot be written (no such directory, a
// directory, no permission); "" and "-" pass.
absl::Status CheckWritable(const std::string& path);

}  // namespace tide::cli

namespace tide::config {
struct Config;
}
namespace tide::trace {
struct TraceOptions;
}

namespace tide::cli {

// The trace options a configuration implies (time zero, gang split, job defaults).
trace::TraceOptions TraceOptionsFor(const config::Config& cfg);
// Prints each of the configuration's notes (keys that moved, ...) on stderr
// as "tide: note: <note>".
void PrintConfigNotes(const config::Config& cfg);
using TraceOptionsFn = std::function<trace::TraceOptions(const config::Config&)>;

}  // namespace tide::cli

#endif  // TIDE_CLI_COMMANDS_H_
