// LocalProvider's records on disk and its use of them. Starting, finding and
// stopping the processes is core/process.h's (DetachedProcess, ProcessId);
// the files are core/files.h's.
#include "providers/local/local_provider.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "core/files.h"
#include "core/process.h"
#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::providers {
namespace fs = std::filesystem;
using json = nlohmann::json;

// What is on disk for one instance.
struct local_internal::Record {
  std::string id;
  std::string node;
  std::string pool;
  std::string idempotency_key;
  std::string instance_type;
  model::Tier tier = model::Tier::kOnDemand;  // TierName on disk
  std::string region;
  Timestamp created{};
  Timestamp boot_at{};
  ProcessId process;     // pid and /proc/<pid>/stat start time
  std::string launcher;  // what /proc/<pid>/exe shows until the exec ("pending")
  std::vector<std::string> argv;
  std::string path;  // the record file (not stored in it)
};

namespace {

using Record = local_internal::Record;

constexpr std::string_view kRecordSuffix = ".json";

std::string InstancesDir(const std::string& state_dir) { return StrCat(state_dir, "/instances"); }
std::string InterruptionsDir(const std::string& state_dir) { return StrCat(state_dir, "/interruptions"); }
std::string LogsDir(const std::string& state_dir) { return StrCat(state_dir, "/logs"); }

// Node names become file names: no '/', no leading '.', nothing a shell or
// scontrol would split.
bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > 200 || name.front() == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
}

Status CheckNode(std::string_view action, const std::string& node) {
  if (ValidName(node)) return OkStatus();
  return absl::InvalidArgumentError(
      StrCat("local provider: ", action, ": bad node name \"", node, "\" (want letters, digits, '-', '_', '.')"));
}

// A failure of core/files or core/process, said to be the local provider's.
Status Ours(const Status& s, std::string_view context = "") {
  if (s.ok()) return s;
  return Status(s.code(), StrCat("local provider: ", context, Message(s)));
}
template <typename T>
Result<T> Ours(Result<T> r) {
  if (r.ok()) return r;
  return Ours(r.status());
}

// SIGKILL to the process group the instance leads (its slurmstepds and job
// steps too, as when a VM goes away) and to the process itself.
void KillInstance(const ProcessId& p) {
  SignalProcessGroup(p.pid, SIGKILL);
  SignalProcess(p, SIGKILL);
}

// ---- records ---------------------------------------------------------------

std::string EncodeRecord(const Record& r) {
  json j = {{"id", r.id},
            {"node", r.node},
            {"pool", r.pool},
            {"idempotency_key", r.idempotency_key},
            {"instance_type", r.instance_type},
            {"tier", std::string(model::TierName(r.tier))},
            {"region", r.region},
            {"created", ToUnixSeconds(r.created)},
            {"boot_at", ToUnixSeconds(r.boot_at)},
            {"pid", r.process.pid},
            {"start_time", r.process.start_time},
            {"launcher", r.launcher},
            {"argv", r.argv}};
  return j.dump(2) + "\n";
}

Status BadFile(const std::string& path, std::string_view what) {
  return absl::UnavailableError(StrCat("local provider: ", path, ": ", what));
}

std::string OptString(const json& j, const char* field) {
  auto it = j.find(field);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

Result<Record> ParseRecordText(const std::string& path, const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return BadFile(path, "instance record is not a JSON object");
  Record r;
  r.path = path;
  for (const char* f : {"id", "node"}) {
    auto it = j.find(f);
    if (it == j.end() || !it->is_string() || it->get<std::string>().empty()) {
      return BadFile(path, StrCat("field \"", f, "\" missing or not a string"));
    }
  }
  for (const char* f : {"pid", "start_time", "created"}) {
    auto it = j.find(f);
    if (it == j.end() || !it->is_number_integer()) {
      return BadFile(path, StrCat("field \"", f, "\" missing or not an integer"));
    }
  }
  r.id = j["id"].get<std::string>();
  r.node = j["node"].get<std::string>();
  r.pool = OptString(j, "pool");
  r.idempotency_key = OptString(j, "idempotency_key");
  r.instance_type = OptString(j, "instance_type");
  if (const std::string tier = OptString(j, "tier"); !tier.empty()) {
    Result<model::Tier> t = model::ParseTier(tier);
    if (!t.ok()) return BadFile(path, StrCat("field \"tier\": ", Message(t.status())));
    r.tier = *t;
  }
  r.region = OptString(j, "region");
  r.launcher = OptString(j, "launcher");
  r.process.pid = j["pid"].get<int64_t>();
  r.process.start_time = j["start_time"].get<uint64_t>();
  r.created = FromUnixSeconds(j["created"].get<int64_t>());
  r.boot_at = r.created;
  if (auto it = j.find("boot_at"); it != j.end() && it->is_number_integer()) {
    r.boot_at = FromUnixSeconds(it->get<int64_t>());
  }
  if (auto it = j.find("argv"); it != j.end() && it->is_array()) {
    for (const auto& a : *it) {
      if (a.is_string()) r.argv.push_back(a.get<std::string>());
    }
  }
  return r;
}

Result<Record> ReadRecord(const std::string& path) {
  TIDE_ASSIGN_OR_RETURN(std::string text, Ours(ReadFile(path)));
  return ParseRecordText(path, text);
}

struct PlannedInterruption {
  std::string node;
  std::string instance_id;
  Timestamp at{};
  std::string path;
};

Result<std::vector<PlannedInterruption>> LoadInterruptions(const std::string& state_dir) {
  TIDE_ASSIGN_OR_RETURN(std::vector<std::string> files, Ours(ListFiles(InterruptionsDir(state_dir), kRecordSuffix)));
  std::vector<PlannedInterruption> out;
  for (const auto& path : files) {
    std::string text;
    {
      Result<std::string> t = Ours(ReadFile(path));
      if (!t.ok()) {
        std::error_code ec;
        if (!fs::exists(path, ec)) continue;  // carried out by another reader meanwhile
        return t.status();
      }
      text = std::move(*t);
    }
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return BadFile(path, "interruption is not a JSON object");
    auto at = j.find("at");
    if (at == j.end() || !at->is_number_integer()) return BadFile(path, "field \"at\" missing or not an integer");
    PlannedInterruption r;
    r.node = OptString(j, "node");
    r.instance_id = OptString(j, "instance_id");
    r.at = FromUnixSeconds(at->get<int64_t>());
    r.path = path;
    if (r.node.empty()) return BadFile(path, "field \"node\" missing or not a string");
    out.push_back(std::move(r));
  }
  return out;
}

Instance ToInstance(const Record& r, Timestamp now) {
  Instance i;
  i.id = r.id;
  i.node = r.node;
  i.pool = r.pool;
  i.idempotency_key = r.idempotency_key;
  i.created = r.created;
  // Until the exec the process still runs tide's image; a record without
  // the launcher's path, or an unreadable /proc/<pid>/exe, falls back to
  // the boot clock.
  const std::string exe = ProcessExecutable(r.process.pid);
  const bool booted = !exe.empty() && !r.launcher.empty() ? exe != r.launcher : now >= r.boot_at;
  i.state = booted ? "running" : "pending";
  return i;
}

}  // namespace

LocalProvider::LocalProvider(Options options) : options_(std::move(options)) {}

std::vector<std::string> LocalProvider::Argv(const std::string& node) const {
  if (!options_.command_override.empty()) return options_.command_override;
  std::vector<std::string> argv = {options_.slurmd, "-D", "-b"};
  if (!options_.slurm_conf.empty()) {
    argv.push_back("-f");
    argv.push_back(options_.slurm_conf);
  }
  argv.push_back("-N");
  argv.push_back(node);
  argv.insert(argv.end(), options_.slurmd_args.begin(), options_.slurmd_args.end());
  return argv;
}

Result<std::vector<local_internal::Record>> LocalProvider::LoadRecords() const {
  TIDE_ASSIGN_OR_RETURN(std::vector<std::string> files,
                        Ours(ListFiles(InstancesDir(options_.state_dir), kRecordSuffix)));
  std::vector<Record> out;
  for (const auto& path : files) {
    Result<Record> r = ReadRecord(path);
    if (!r.ok()) {
      std::error_code ec;
      if (!fs::exists(path, ec)) continue;  // removed between the listing and the read
      return r.status();
    }
    out.push_back(std::move(*r));
  }
  std::sort(out.begin(), out.end(), [](const Record& a, const Record& b) { return a.id < b.id; });
  return out;
}

void LocalProvider::Forget(const Record& record, std::string_view reason, Timestamp now) const {
  std::error_code ec;
  fs::remove(record.path, ec);
  AppendLine(StrCat(options_.state_dir, "/terminated.log"), StrCat(FormatTimestamp(now), " ", record.id,
                                                                   " node=", record.node, " pid=",
                                                                   record.process.pid, " ", reason));
}

Status LocalProvider::CarryOutInterruptions(Timestamp now) {
  TIDE_ASSIGN_OR_RETURN(std::vector<PlannedInterruption> planned, LoadInterruptions(options_.state_dir));
  for (const auto& rc : planned) {
    if (rc.at > now) continue;
    TIDE_ASSIGN_OR_RETURN(std::vector<Record> records, LoadRecords());
    for (const auto& r : records) {
      const bool target = rc.instance_id.empty() ? r.node == rc.node : r.id == rc.instance_id;
      if (!target) continue;
      if (IsRunning(r.process)) {
        KillInstance(r.process);
        interrupted_.push_back(r.node);
        Forget(r, "interrupted (spot)", now);
      } else {
        Forget(r, "ended before its interruption", now);
      }
    }
    std::error_code ec;
    fs::remove(rc.path, ec);
  }
  return OkStatus();
}

Result<std::vector<local_internal::Record>> LocalProvider::Refresh(Timestamp now) {
  if (options_.state_dir.empty()) return absl::InvalidArgumentError("local provider: state_dir is not set");
  TIDE_RETURN_IF_ERROR(CarryOutInterruptions(now));
  TIDE_ASSIGN_OR_RETURN(std::vector<Record> records, LoadRecords());
  std::vector<Record> live;
  for (auto& r : records) {
    if (IsRunning(r.process)) {
      live.push_back(std::move(r));
    } else {
      Forget(r, "process ended", now);
    }
  }
  return live;
}

Result<Instance> LocalProvider::Create(const CreateRequest& request, Timestamp now) {
  TIDE_RETURN_IF_ERROR(CheckNode("create", request.node));
  TIDE_ASSIGN_OR_RETURN(std::vector<Record> records, Refresh(now));
  if (!request.idempotency_key.empty()) {
    for (const auto& r : records) {
      if (r.idempotency_key == request.idempotency_key) return ToInstance(r, now);
    }
  }
  for (const auto& r : records) {
    if (r.node == request.node) return ToInstance(r, now);
  }

  const std::string context = StrCat("create node ", request.node, ": ");
  DetachedOptions start;
  start.argv = Argv(request.node);
  start.start_delay = request.boot_delay;
  // Checked before anything is made on disk (Start checks again).
  if (FindExecutable(start.argv[0]).empty()) {
    return absl::NotFoundError(StrCat("local provider: ", context, start.argv[0], " is not an executable file"));
  }
  TIDE_RETURN_IF_ERROR(Ours(MakeDirs(InstancesDir(options_.state_dir)), context));
  if (options_.log_output) {
    TIDE_RETURN_IF_ERROR(Ours(MakeDirs(LogsDir(options_.state_dir)), context));
    start.log_path = StrCat(LogsDir(options_.state_dir), "/", request.node, ".log");
  }

  Record r;
  r.node = request.node;
  r.pool = request.pool;
  r.idempotency_key = request.idempotency_key;
  r.instance_type = request.instance_type;
  r.tier = request.tier;
  r.region = request.region;
  r.created = now;
  r.boot_at = now + std::max(Duration::zero(), request.boot_delay);
  r.launcher = ProcessExecutable(getpid());
  r.argv = start.argv;

  // The process waits until its record is written: no instance ever runs
  // that a restarted tide could not find.
  Result<DetachedProcess> process = DetachedProcess::Start(start);
  if (!process.ok()) return Ours(process.status(), context);
  r.process = process->id();
  r.id = StrCat("local-", request.node, "-", ToUnixSeconds(now), "-", r.process.pid);
  r.path = StrCat(InstancesDir(options_.state_dir), "/", r.id, kRecordSuffix);
  // On failure the handle goes unreleased: the process exits without exec.
  TIDE_RETURN_IF_ERROR(Ours(WriteFileAtomically(r.path, EncodeRecord(r)), context));
  // A process that is gone already is dropped by the next List, like any
  // instance that died.
  process->Release().IgnoreError();
  return ToInstance(r, now);
}

Status LocalProvider::Delete(const std::string& instance_id, const std::string& idempotency_key, Timestamp now) {
  if (options_.state_dir.empty()) return absl::InvalidArgumentError("local provider: state_dir is not set");
  if (!ValidName(instance_id)) return OkStatus();  // not an id of ours
  const std::string path = StrCat(InstancesDir(options_.state_dir), "/", instance_id, kRecordSuffix);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (ec) return absl::UnavailableError(StrCat("local provider: delete ", instance_id, ": ", ec.message()));
    return OkStatus();
  }
  TIDE_ASSIGN_OR_RETURN(Record r, ReadRecord(path));
  if (IsRunning(r.process)) {
    SignalProcess(r.process, SIGTERM);
    WaitUntilGone(r.process, options_.stop_grace);
    // Whatever is left in its group goes, as with a VM that is switched off.
    if (IsRunning(r.process)) {
      KillInstance(r.process);
    } else {
      SignalProcessGroup(r.process.pid, SIGKILL);
    }
    if (!WaitUntilGone(r.process, Seconds(1))) {
      return absl::UnavailableError(StrCat("local provider: delete ", instance_id, ": pid ", r.process.pid,
                                           " survived SIGKILL; record kept"));
    }
  }
  Forget(r, "deleted", now);
  // An interruption announced for this instance has nothing left to take.
  fs::remove(StrCat(InterruptionsDir(options_.state_dir), "/", r.node, kRecordSuffix), ec);
  return OkStatus();
}

Result<std::vector<Instance>> LocalProvider::List(Timestamp now) {
  TIDE_ASSIGN_OR_RETURN(std::vector<Record> records, Refresh(now));
  std::vector<Instance> out;
  out.reserve(records.size());
  for (const auto& r : records) out.push_back(ToInstance(r, now));
  return out;
}

Result<std::vector<Interruption>> LocalProvider::Interruptions(Timestamp now) {
  TIDE_ASSIGN_OR_RETURN(std::vector<Record> records, Refresh(now));
  TIDE_ASSIGN_OR_RETURN(std::vector<PlannedInterruption> planned, LoadInterruptions(options_.state_dir));
  std::vector<Interruption> out;
  for (const auto& rc : planned) {
    if (rc.at <= now) continue;  // carried out by another process between the two reads
    for (const auto& r : records) {
      const bool target = rc.instance_id.empty() ? r.node == rc.node : r.id == rc.instance_id;
      if (target) out.push_back({r.id, r.node, rc.at});
    }
  }
  std::sort(out.begin(), out.end(), [](const Interruption& a, const Interruption& b) { return a.node < b.node; });
  return out;
}

Status LocalProvider::InjectInterruption(const std::string& node, Duration notice, Timestamp now) {
  return InjectInterruptionInDir(options_.state_dir, node, notice, now);
}

Status LocalProvider::InjectInterruptionInDir(const std::string& state_dir, const std::string& node, Duration notice,
                                              Timestamp now) {
  if (state_dir.empty()) return absl::InvalidArgumentError("local provider: state_dir is not set");
  TIDE_RETURN_IF_ERROR(CheckNode("interrupt", node));
  if (notice < Duration::zero()) {
    return absl::InvalidArgumentError(
        StrCat("local provider: interrupt node ", node, ": negative notice ", notice.count(), " s"));
  }
  // The newest record for the node: an interruption is aimed at one instance,
  // so it cannot hit a later instance of the same node.
  TIDE_ASSIGN_OR_RETURN(std::vector<std::string> files, Ours(ListFiles(InstancesDir(state_dir), kRecordSuffix)));
  std::optional<Record> target;
  for (const auto& path : files) {
    Result<Record> r = ReadRecord(path);
    if (!r.ok() || r->node != node) continue;
    if (!target.has_value() || r->created >= target->created) target = std::move(*r);
  }
  if (!target.has_value()) {
    return absl::NotFoundError(StrCat("local provider: interrupt: no instance for node ", node, " in ", state_dir));
  }
  TIDE_RETURN_IF_ERROR(Ours(MakeDirs(InterruptionsDir(state_dir))));
  const json j = {{"node", node}, {"instance_id", target->id}, {"at", ToUnixSeconds(now + notice)}};
  return Ours(WriteFileAtomically(StrCat(InterruptionsDir(state_dir), "/", node, kRecordSuffix), j.dump() + "\n"));
}

std::vector<std::string> LocalProvider::TakeInterrupted() {
  std::vector<std::string> out;
  out.swap(interrupted_);
  return out;
}

}  // namespace tide::providers
