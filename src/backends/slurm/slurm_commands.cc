// SlurmCommands: every observation and action is one run of a Slurm client
// tool through the CommandRunner, argv only (a reason or name with spaces
// stays one argument and no shell sees it).
#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "backends/slurm/slurm.h"
#include "core/strings.h"

namespace tide::backends {
namespace {

// Enough of a failing command's stderr to say why; the rest is noise.
constexpr size_t kMaxDetail = 2000;

bool HasBlank(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

// A node name (or host list) that scontrol reads as one nodename= value.
Status CheckNode(std::string_view action, const std::string& node) {
  if (node.empty()) return absl::InvalidArgumentError(StrCat(action, ": empty node name"));
  if (HasBlank(node) || Contains(node, "=")) {
    return absl::InvalidArgumentError(StrCat(action, ": bad node name \"", node, "\""));
  }
  return OkStatus();
}

Status CheckJob(std::string_view action, int64_t job) {
  if (job <= 0) return absl::InvalidArgumentError(StrCat(action, ": bad job id ", job));
  return OkStatus();
}

// True when any of the comma-separated `names` is in `wanted`.
bool AnyIn(std::string_view names, const std::set<std::string, std::less<>>& wanted) {
  for (std::string_view n : Split(names, ',')) {
    if (wanted.count(StripWhitespace(n))) return true;
  }
  return false;
}

// Re-labels a parse error with the command that produced the text.
Status InCommand(const std::vector<std::string>& argv, const Status& s) {
  return Status(s.code(), StrCat(FormatArgv(argv), ": ", Message(s)));
}

}  // namespace

Result<std::string> SlurmCommands::RunChecked(const std::vector<std::string>& argv) {
  Result<CommandResult> r = runner_->Run(argv, "", options_.timeout);
  const std::string command = FormatArgv(argv);
  if (!r.ok()) {
    // Whatever went wrong starting it, Slurm did not answer: retry later. A
    // command cut by its timeout stays DeadlineExceeded: an scontrol killed
    // mid-way may or may not have changed the node.
    // The command is named once (SystemCommandRunner names it already).
    const std::string_view why = Message(r.status());
    const absl::StatusCode code = absl::IsDeadlineExceeded(r.status()) ? absl::StatusCode::kDeadlineExceeded
                                                                       : absl::StatusCode::kUnavailable;
    if (why.substr(0, command.size()) == command) return Status(code, std::string(why));
    return Status(code, StrCat(command, ": ", why));
  }
  if (r->exit_code != 0) {
    std::string_view detail = StripWhitespace(r->err);
    if (detail.empty()) detail = StripWhitespace(r->out);
    std::string message = StrCat(command, ": exit status ", r->exit_code);
    if (!detail.empty()) StrAppend(&message, ": ", detail.substr(0, kMaxDetail));
    if (detail.size() > kMaxDetail) message += "...";
    return absl::UnavailableError(message);
  }
  return std::move(r->out);
}

Result<SlurmView> SlurmCommands::Query() {
  const std::set<std::string, std::less<>> wanted(options_.partitions.begin(), options_.partitions.end());
  SlurmView obs;

  std::vector<std::string> squeue = {options_.squeue, "--json"};
  if (!options_.partitions.empty()) {
    squeue.push_back(StrCat("--partition=", StrJoin(options_.partitions, ",")));
  }
  TIDE_ASSIGN_OR_RETURN(std::string jobs_text, RunChecked(squeue));
  Result<std::vector<SlurmJob>> jobs = ParseSqueueJson(jobs_text);
  if (!jobs.ok()) return InCommand(squeue, jobs.status());
  for (auto& j : *jobs) {
    // squeue filters already; this keeps the contract if it did not.
    if (wanted.empty() || AnyIn(j.partition, wanted)) obs.jobs.push_back(std::move(j));
  }

  // sinfo --json ignores --partition (22.05), so the nodes are filtered here.
  const std::vector<std::string> sinfo = {options_.sinfo, "--json"};
  TIDE_ASSIGN_OR_RETURN(std::string nodes_text, RunChecked(sinfo));
  Result<std::vector<SlurmNode>> nodes = ParseSinfoJson(nodes_text);
  if (!nodes.ok()) return InCommand(sinfo, nodes.status());
  for (auto& n : *nodes) {
    const bool in = wanted.empty() || std::any_of(n.partitions.begin(), n.partitions.end(),
                                                  [&](const std::string& p) { return wanted.count(p) > 0; });
    if (in) obs.nodes.push_back(std::move(n));
  }
  return obs;
}

Status SlurmCommands::Drain(const std::string& node, const std::string& reason) {
  TIDE_RETURN_IF_ERROR(CheckNode("drain", node));
  // scontrol refuses to drain without a reason.
  if (StripWhitespace(reason).empty()) {
    return absl::InvalidArgumentError(StrCat("drain ", node, ": a reason is required"));
  }
  return RunChecked({options_.scontrol, "update", StrCat("nodename=", node), "state=DRAIN",
                     StrCat("reason=", reason)})
      .status();
}

Status SlurmCommands::Undrain(const std::string& node) {
  TIDE_RETURN_IF_ERROR(CheckNode("undrain", node));
  return RunChecked({options_.scontrol, "update", StrCat("nodename=", node), "state=UNDRAIN"}).status();
}

Status SlurmCommands::PowerUp(const std::string& node) {
  TIDE_RETURN_IF_ERROR(CheckNode("power up", node));
  return RunChecked({options_.scontrol, "update", StrCat("nodename=", node), "state=POWER_UP"}).status();
}

Status SlurmCommands::PowerDown(const std::string& node, bool force) {
  TIDE_RETURN_IF_ERROR(CheckNode("power down", node));
  return RunChecked({options_.scontrol, "update", StrCat("nodename=", node),
                     force ? "state=POWER_DOWN_FORCE" : "state=POWER_DOWN"})
      .status();
}

Status SlurmCommands::Requeue(int64_t job) {
  TIDE_RETURN_IF_ERROR(CheckJob("requeue", job));
  return RunChecked({options_.scontrol, "requeue", StrCat(job)}).status();
}

Status SlurmCommands::Cancel(int64_t job) {
  TIDE_RETURN_IF_ERROR(CheckJob("cancel", job));
  return RunChecked({options_.scancel, StrCat(job)}).status();
}

Status SlurmCommands::Signal(int64_t job, const std::string& signal) {
  TIDE_RETURN_IF_ERROR(CheckJob("signal", job));
  if (signal.empty() || HasBlank(signal) || Contains(signal, "=")) {
    return absl::InvalidArgumentError(StrCat("signal job ", job, ": bad signal \"", signal, "\""));
  }
  // --batch: the batch script traps the checkpoint signal; without it only
  // the steps would get it.
  return RunChecked({options_.scancel, "--batch", StrCat("--signal=", signal), StrCat(job)}).status();
}

}  // namespace tide::backends
