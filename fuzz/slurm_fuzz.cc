// Slurm's replies: `squeue --json` (TIDE_FUZZ_TOOL "squeue") or `sinfo
// --json` ("sinfo"), read through SlurmCommands::Query with the other tool
// answering a recorded reply (src/backends/slurm/testdata).
//
// Properties: a reply that does not parse fails the whole query (nothing
// is decided on it), with a printable error naming the tool; a reply never
// reads as "no jobs" or "no nodes" unless it is JSON with that empty list;
// what parses has sane numbers.
#include <fstream>
#include <sstream>

#include "backends/slurm/slurm.h"
#include "fuzz/fuzz_check.h"
#include "nlohmann/json.hpp"

#ifndef TIDE_FUZZ_TOOL
#error "TIDE_FUZZ_TOOL is squeue or sinfo"
#endif

namespace tide::fuzz {
namespace {

constexpr std::string_view kTool = TIDE_FUZZ_TOOL;

std::string Fixture(const std::string& name) {
  std::ifstream in(StrCat(TIDE_SOURCE_DIR, "/src/backends/slurm/testdata/", name));
  std::stringstream s;
  s << in.rdbuf();
  if (s.str().empty()) Fail("the recorded reply can be read", name);
  return s.str();
}

// squeue and sinfo answer: the fuzzed tool with the input, the other with its recording.
class Replies final : public CommandRunner {
 public:
  Replies() : squeue_(Fixture("squeue_lab.json")), sinfo_(Fixture("sinfo_lab.json")) {}
  std::string input;
  Result<CommandResult> Run(const std::vector<std::string>& argv, const std::string&, Duration) override {
    const bool fuzzed = argv.at(0) == kTool;
    if (argv.at(0) != "squeue" && argv.at(0) != "sinfo") Fail("a query runs only squeue and sinfo", argv.at(0));
    return CommandResult{0, fuzzed ? input : (argv[0] == "squeue" ? squeue_ : sinfo_), ""};
  }

 private:
  std::string squeue_, sinfo_;
};

}  // namespace
}  // namespace tide::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tide;
  using namespace tide::fuzz;
  static Replies* runner = new Replies();
  static backends::SlurmCommands* slurm = new backends::SlurmCommands(backends::SlurmOptions{}, runner);
  runner->input = std::string(AsText(data, size));
  const bool jobs = kTool == "squeue";
  const bool parses = jobs ? backends::ParseSqueueJson(runner->input).ok() : backends::ParseSinfoJson(runner->input).ok();
  auto view = slurm->Query();
  if (!view.ok()) {
    CheckMessage(view.status());
    if (Message(view.status()).find(kTool) == std::string_view::npos) Fail("the error names the tool", Message(view.status()));
    return 0;
  }
  if (!parses) Fail("a reply that does not parse fails the query", runner->input);
  if (jobs && view->jobs.empty() && !IsEmptyList(runner->input, "jobs")) {
    Fail("no jobs only from an empty \"jobs\" list", runner->input);
  }
  if (!jobs && view->nodes.empty() && !IsEmptyList(runner->input, "nodes")) {
    Fail("no nodes only from an empty \"nodes\" list", runner->input);
  }
  for (const auto& j : view->jobs) {
    if (j.gpus < 0 || j.gpus_per_node < 0) Fail("a job's GPUs are not negative", StrCat("job ", j.id));
  }
  for (const auto& n : view->nodes) {
    if (n.name.empty() || n.gpus < 0 || n.gpus_used < 0) Fail("a node has a name and GPUs >= 0", n.name);
  }
  return 0;
}
