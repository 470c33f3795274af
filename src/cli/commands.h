// The `tide` subcommands. Each returns the process exit status:
// 0 success, 1 the run failed, 2 bad input (usage, configuration, trace).
#ifndef TIDE_CLI_COMMANDS_H_
#define TIDE_CLI_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <string>

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
};
int Simulate(const SimulateArgs& args);

struct SynthArgs {
  std::string config;  // optional, for priority classes and the start time
  std::string out;     // "-" or empty: stdout
  int days = 7;
  uint64_t seed = 1;
  double jobs_per_hour = 10;
  double scale = 1;
  int utc_offset_hours = 0;
  std::string start;
};
int TraceSynth(const SynthArgs& args);

struct StatsArgs {
  std::string config;
  std::string trace;
  std::string format = "auto";
};
int TraceStats(const StatsArgs& args);

int Validate(const std::string& config);

}  // namespace tide::cli

#endif  // TIDE_CLI_COMMANDS_H_
