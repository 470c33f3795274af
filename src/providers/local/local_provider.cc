#include "providers/local/local_provider.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

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
  std::string tier;
  std::string region;
  Timestamp created{};
  Timestamp boot_at{};
  int64_t pid = 0;
  uint64_t start_time = 0;  // /proc/<pid>/stat field 22, clock ticks after boot
  std::string launcher;     // what /proc/<pid>/exe shows until the exec ("pending")
  std::vector<std::string> argv;
  std::string path;  // the record file (not stored in it)
};

namespace {

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

std::string Errno() { return std::strerror(errno); }

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::UnavailableError(StrCat("local provider: cannot read ", path, ": ", Errno()));
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::UnavailableError(StrCat("local provider: cannot read ", path));
  return ss.str();
}

// Replaces `path` with `text` in one step: readers see the old file or the
// new one, never half of it.
Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = StrCat(path, ".tmp.", getpid());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::UnavailableError(StrCat("local provider: cannot create ", tmp, ": ", Errno()));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = Errno();
      close(fd);
      unlink(tmp.c_str());
      return absl::UnavailableError(StrCat("local provider: cannot write ", tmp, ": ", why));
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    unlink(tmp.c_str());
    return absl::UnavailableError(StrCat("local provider: cannot write ", tmp, ": ", Errno()));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = Errno();
    unlink(tmp.c_str());
    return absl::UnavailableError(StrCat("local provider: cannot rename ", tmp, " to ", path, ": ", why));
  }
  return OkStatus();
}

Status MakeDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(StrCat("local provider: cannot create directory ", dir, ": ", ec.message()));
  return OkStatus();
}

// The *.json files in `dir`, sorted; none when the directory does not exist.
Result<std::vector<std::string>> JsonFiles(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    if (ec) return absl::UnavailableError(StrCat("local provider: cannot read directory ", dir, ": ", ec.message()));
    return out;
  }
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > kRecordSuffix.size() && name.ends_with(kRecordSuffix)) out.push_back(it->path().string());
  }
  if (ec) return absl::UnavailableError(StrCat("local provider: cannot read directory ", dir, ": ", ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

void AppendLine(const std::string& path, const std::string& line) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;  // the log is for people; losing a line must not fail a call
  const std::string text = line + "\n";
  ssize_t ignored = write(fd, text.data(), text.size());
  (void)ignored;
  close(fd);
}

// ---- /proc ---------------------------------------------------------------

struct ProcStat {
  char state = '?';
  uint64_t start_time = 0;
};

std::optional<ProcStat> ReadProcStat(int64_t pid) {
  if (pid <= 0) return std::nullopt;
  std::ifstream in(StrCat("/proc/", pid, "/stat"));
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
  const size_t close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return std::nullopt;
  std::istringstream rest(text.substr(close_paren + 1));
  ProcStat st;
  std::string field;
  rest >> st.state;  // field 3
  for (int f = 4; f < 22 && rest >> field; ++f) {
  }
  if (!(rest >> st.start_time)) return std::nullopt;  // field 22
  return st;
}

// The process is the one we started and has not ended (a zombie has ended:
// nobody may be reaping it, since its parent is init).
bool Alive(int64_t pid, uint64_t start_time) {
  const std::optional<ProcStat> st = ReadProcStat(pid);
  return st.has_value() && st->start_time == start_time && st->state != 'Z' && st->state != 'X';
}

// The program image of `pid` ("/proc/<pid>/exe"), empty if unreadable.
std::string ExeOf(const std::string& proc_path) {
  char buf[PATH_MAX];
  const ssize_t n = readlink(proc_path.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string exe(buf, static_cast<size_t>(n));
  constexpr std::string_view kDeleted = " (deleted)";  // the binary was replaced since
  if (exe.ends_with(kDeleted)) exe.resize(exe.size() - kDeleted.size());
  return exe;
}

// Waits up to `limit` for the process to end; true if it did.
bool WaitGone(int64_t pid, uint64_t start_time, Duration limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (!Alive(pid, start_time)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    const timespec pause{0, 20 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
}

// SIGKILL to the process group the instance leads (its slurmstepds and job
// steps too, as when a VM goes away) and to the process itself.
void KillInstance(int64_t pid) {
  kill(static_cast<pid_t>(-pid), SIGKILL);
  kill(static_cast<pid_t>(pid), SIGKILL);
}

// ---- records ---------------------------------------------------------------

std::string EncodeRecord(const std::string& id, const std::string& node,
                         const CreateRequest& request, Timestamp created, Timestamp boot_at, int64_t pid,
                         uint64_t start_time, const std::string& launcher, const std::vector<std::string>& argv) {
  json j = {{"id", id},
            {"node", node},
            {"pool", request.pool},
            {"idempotency_key", request.idempotency_key},
            {"instance_type", request.instance_type},
            {"tier", std::string(model::TierName(request.tier))},
            {"region", request.region},
            {"created", ToUnixSeconds(created)},
            {"boot_at", ToUnixSeconds(boot_at)},
            {"pid", pid},
            {"start_time", start_time},
            {"launcher", launcher},
            {"argv", argv}};
  return j.dump(2) + "\n";
}

// A program named without '/' is looked up on PATH, like execvp does; ""
// when it is not an executable regular file.
std::string ResolveProgram(const std::string& program) {
  auto executable = [](const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) return executable(program) ? program : "";
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  for (std::string_view dir : Split(path, ':', /*skip_empty=*/true)) {
    std::string candidate = StrCat(dir, "/", program);
    if (executable(candidate)) return candidate;
  }
  return "";
}

// ---- launching -------------------------------------------------------------

// Async-signal-safe: decimal digits of `v` into `buf`, returns the length.
size_t FormatUnsigned(unsigned v, char* buf) {
  char tmp[16];
  size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0 && n < sizeof tmp);
  for (size_t i = 0; i < n; ++i) buf[i] = tmp[n - 1 - i];
  return n;
}

void WriteAll(int fd, const char* s, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

struct Launched {
  pid_t pid = -1;
  uint64_t start_time = 0;
  int go_fd = -1;  // writing one byte releases the instance; closing it unwritten ends it
};

// Everything the detached process needs, prepared before fork: between fork
// and exec only async-signal-safe calls happen.
struct LaunchPlan {
  std::vector<std::string> argv;
  std::string exe;  // resolved argv[0]
  std::string log;  // "" for /dev/null
  Duration boot_delay{};
};

// The grandchild: waits for the go byte, sleeps the boot delay, execs.
[[noreturn]] void RunInstance(int null_fd, int out_fd, int go_r, const char* exe, char* const* argv,
                              time_t delay_s) {
  setpgid(0, 0);  // its own group: Delete and interruptions kill the group
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) signal(sig, SIG_DFL);
  }
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);
  dup2(null_fd, STDIN_FILENO);
  dup2(out_fd, STDOUT_FILENO);
  dup2(out_fd, STDERR_FILENO);
  char go = 0;
  ssize_t r;
  do {
    r = read(go_r, &go, 1);
  } while (r < 0 && errno == EINTR);
  if (r != 1) _exit(0);  // the parent could not record us: we never existed
  close_range(3, ~0U, 0);
  timespec left{delay_s, 0};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
  execv(exe, argv);
  const int e = errno;
  static constexpr char kPrefix[] = "tide local provider: exec failed, errno ";
  char num[16];
  const size_t n = FormatUnsigned(static_cast<unsigned>(e), num);
  WriteAll(STDERR_FILENO, kPrefix, sizeof kPrefix - 1);
  WriteAll(STDERR_FILENO, num, n);
  WriteAll(STDERR_FILENO, "\n", 1);
  _exit(127);
}

// Double fork: the intermediate child starts a new session and exits, so the
// instance is no child of ours (it outlives tide and init reaps it). Its pid
// comes back over a pipe; the instance waits on a second pipe until the
// caller has recorded it.
Result<Launched> Launch(const LaunchPlan& plan) {
  std::vector<std::string> args = plan.argv;
  std::vector<char*> c_argv;
  for (auto& a : args) c_argv.push_back(a.data());
  c_argv.push_back(nullptr);
  const time_t delay_s = static_cast<time_t>(std::max<int64_t>(0, plan.boot_delay.count()));

  const int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) return absl::UnavailableError(StrCat("local provider: cannot open /dev/null: ", Errno()));
  int out_fd = null_fd;
  if (!plan.log.empty()) {
    out_fd = open(plan.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (out_fd < 0) {
      const std::string why = Errno();
      close(null_fd);
      return absl::UnavailableError(StrCat("local provider: cannot open log ", plan.log, ": ", why));
    }
  }
  int pid_pipe[2] = {-1, -1};
  int go_pipe[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd : {null_fd, out_fd, pid_pipe[0], pid_pipe[1], go_pipe[0], go_pipe[1]}) {
      if (fd >= 0) close(fd);
    }
  };
  if (out_fd == null_fd) out_fd = -1;  // one descriptor, closed once
  if (pipe2(pid_pipe, O_CLOEXEC) != 0 || pipe2(go_pipe, O_CLOEXEC) != 0) {
    const std::string why = Errno();
    close_all();
    return absl::UnavailableError(StrCat("local provider: pipe: ", why));
  }
  const int child_out = out_fd >= 0 ? out_fd : null_fd;

  const pid_t middle = fork();
  if (middle < 0) {
    const std::string why = Errno();
    close_all();
    return absl::UnavailableError(StrCat("local provider: fork: ", why));
  }
  if (middle == 0) {
    setsid();
    const pid_t instance = _Fork();
    if (instance == 0) {
      close(pid_pipe[1]);
      close(go_pipe[1]);  // else a dead parent would never look like one
      RunInstance(null_fd, child_out, go_pipe[0], plan.exe.c_str(), c_argv.data(), delay_s);
    }
    WriteAll(pid_pipe[1], reinterpret_cast<const char*>(&instance), sizeof instance);
    _exit(instance > 0 ? 0 : 1);
  }

  close(pid_pipe[1]);
  pid_pipe[1] = -1;
  close(go_pipe[0]);
  go_pipe[0] = -1;
  int status;
  while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  pid_t instance = -1;
  ssize_t got;
  do {
    got = read(pid_pipe[0], &instance, sizeof instance);
  } while (got < 0 && errno == EINTR);
  Launched out;
  out.go_fd = go_pipe[1];
  go_pipe[1] = -1;
  close_all();
  if (got != static_cast<ssize_t>(sizeof instance) || instance <= 0) {
    close(out.go_fd);
    return absl::UnavailableError(StrCat("local provider: could not start ", FormatArgv(plan.argv)));
  }
  out.pid = instance;
  // The instance is blocked on the go pipe, so it is there to be read.
  const std::optional<ProcStat> st = ReadProcStat(instance);
  if (!st.has_value()) {
    close(out.go_fd);
    kill(instance, SIGKILL);
    return absl::UnavailableError(StrCat("local provider: cannot read /proc/", instance, "/stat of ",
                                         FormatArgv(plan.argv)));
  }
  out.start_time = st->start_time;
  return out;
}

// ---- parsing ---------------------------------------------------------------

Status BadFile(const std::string& path, std::string_view what) {
  return absl::UnavailableError(StrCat("local provider: ", path, ": ", what));
}

std::string OptString(const json& j, const char* field) {
  auto it = j.find(field);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

Result<local_internal::Record> ParseRecordText(const std::string& path, const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return BadFile(path, "instance record is not a JSON object");
  local_internal::Record r;
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
  r.tier = OptString(j, "tier");
  r.region = OptString(j, "region");
  r.launcher = OptString(j, "launcher");
  r.pid = j["pid"].get<int64_t>();
  r.start_time = j["start_time"].get<uint64_t>();
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

Result<local_internal::Record> ReadRecord(const std::string& path) {
  TIDE_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseRecordText(path, text);
}

struct PlannedInterruption {
  std::string node;
  std::string instance_id;
  Timestamp at{};
  std::string path;
};

Result<std::vector<PlannedInterruption>> LoadInterruptions(const std::string& state_dir) {
  TIDE_ASSIGN_OR_RETURN(std::vector<std::string> files, JsonFiles(InterruptionsDir(state_dir)));
  std::vector<PlannedInterruption> out;
  for (const auto& path : files) {
    std::string text;
    {
      Result<std::string> t = ReadFile(path);
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

Instance ToInstance(const local_internal::Record& r, Timestamp now) {
  Instance i;
  i.id = r.id;
  i.node = r.node;
  i.pool = r.pool;
  i.idempotency_key = r.idempotency_key;
  i.created = r.created;
  // Until the exec the process still runs tide's image; a record without
  // the launcher's path, or an unreadable /proc/<pid>/exe, falls back to
  // the boot clock.
  const std::string exe = ExeOf(StrCat("/proc/", r.pid, "/exe"));
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
  TIDE_ASSIGN_OR_RETURN(std::vector<std::string> files, JsonFiles(InstancesDir(options_.state_dir)));
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
  AppendLine(StrCat(options_.state_dir, "/terminated.log"),
             StrCat(FormatTimestamp(now), " ", record.id, " node=", record.node, " pid=", record.pid, " ", reason));
}

Status LocalProvider::CarryOutInterruptions(Timestamp now) {
  TIDE_ASSIGN_OR_RETURN(std::vector<PlannedInterruption> planned, LoadInterruptions(options_.state_dir));
  for (const auto& rc : planned) {
    if (rc.at > now) continue;
    TIDE_ASSIGN_OR_RETURN(std::vector<Record> records, LoadRecords());
    for (const auto& r : records) {
      const bool target = rc.instance_id.empty() ? r.node == rc.node : r.id == rc.instance_id;
      if (!target) continue;
      if (Alive(r.pid, r.start_time)) {
        KillInstance(r.pid);
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
    if (Alive(r.pid, r.start_time)) {
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

  LaunchPlan plan;
  plan.argv = Argv(request.node);
  plan.exe = ResolveProgram(plan.argv[0]);
  if (plan.exe.empty()) {
    return absl::NotFoundError(
        StrCat("local provider: create node ", request.node, ": ", plan.argv[0], " is not an executable file"));
  }
  plan.boot_delay = request.boot_delay;
  TIDE_RETURN_IF_ERROR(MakeDir(InstancesDir(options_.state_dir)));
  if (options_.log_output) {
    TIDE_RETURN_IF_ERROR(MakeDir(LogsDir(options_.state_dir)));
    plan.log = StrCat(LogsDir(options_.state_dir), "/", request.node, ".log");
  }
  const std::string launcher = ExeOf("/proc/self/exe");

  Result<Launched> launched = Launch(plan);
  if (!launched.ok()) {
    return Status(launched.status().code(), StrCat("create node ", request.node, ": ", Message(launched.status())));
  }
  const std::string id = StrCat("local-", request.node, "-", ToUnixSeconds(now), "-", launched->pid);
  const std::string path = StrCat(InstancesDir(options_.state_dir), "/", id, kRecordSuffix);
  const Timestamp boot_at = now + std::max(Duration::zero(), request.boot_delay);
  Status written = WriteFileAtomically(
      path, EncodeRecord(id, request.node, request, now, boot_at, launched->pid, launched->start_time,
                         launcher, plan.argv));
  if (!written.ok()) {
    close(launched->go_fd);  // the instance reads end of file and exits
    return Status(written.code(), StrCat("create node ", request.node, ": ", Message(written)));
  }
  WriteAll(launched->go_fd, "g", 1);
  close(launched->go_fd);

  Record r;
  r.id = id;
  r.node = request.node;
  r.pool = request.pool;
  r.idempotency_key = request.idempotency_key;
  r.created = now;
  r.boot_at = boot_at;
  r.pid = launched->pid;
  r.start_time = launched->start_time;
  r.launcher = launcher;
  r.path = path;
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
  if (Alive(r.pid, r.start_time)) {
    kill(static_cast<pid_t>(r.pid), SIGTERM);
    WaitGone(r.pid, r.start_time, options_.stop_grace);
    // Whatever is left in its group goes, as with a VM that is switched off.
    if (Alive(r.pid, r.start_time)) {
      KillInstance(r.pid);
    } else {
      kill(static_cast<pid_t>(-r.pid), SIGKILL);
    }
    if (!WaitGone(r.pid, r.start_time, Seconds(1))) {
      return absl::UnavailableError(StrCat("local provider: delete ", instance_id, ": pid ", r.pid,
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
  TIDE_ASSIGN_OR_RETURN(std::vector<std::string> files, JsonFiles(InstancesDir(state_dir)));
  std::optional<Record> target;
  for (const auto& path : files) {
    Result<Record> r = ReadRecord(path);
    if (!r.ok() || r->node != node) continue;
    if (!target.has_value() || r->created >= target->created) target = std::move(*r);
  }
  if (!target.has_value()) {
    return absl::NotFoundError(StrCat("local provider: interrupt: no instance for node ", node, " in ", state_dir));
  }
  TIDE_RETURN_IF_ERROR(MakeDir(InterruptionsDir(state_dir)));
  const json j = {{"node", node}, {"instance_id", target->id}, {"at", ToUnixSeconds(now + notice)}};
  return WriteFileAtomically(StrCat(InterruptionsDir(state_dir), "/", node, kRecordSuffix), j.dump() + "\n");
}

std::vector<std::string> LocalProvider::TakeInterrupted() {
  std::vector<std::string> out;
  out.swap(interrupted_);
  return out;
}

}  // namespace tide::providers
