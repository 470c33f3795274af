// Running other programs: the Slurm client tools and a cloud's command-line
// tool (CommandRunner: run and wait), and slurmd (DetachedProcess: start and
// leave running). Always an argv array, never a shell command line, so no
// string from a config, a reply or a job name is ever interpreted by a
// shell.
#ifndef TIDE_CORE_PROCESS_H_
#define TIDE_CORE_PROCESS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/time.h"

namespace tide {

struct CommandResult {
  int exit_code = 0;     // the program's exit status; 128 + N if killed by signal N
  std::string out;       // everything it wrote to stdout
  std::string err;       // everything it wrote to stderr
};

// Runs argv[0] (looked up on PATH) with the given arguments, feeding `input`
// to its stdin, and waits for it. Implementations are thread-safe.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Returns the result whatever the exit status (callers decide what a
  // non-zero exit means). Unavailable if the program cannot be started;
  // DeadlineExceeded, naming the command, if it does not finish within
  // `timeout` (it is then killed, with its process group: whatever it did
  // meanwhile is unknown); InvalidArgument if argv is empty or the timeout
  // is not positive.
  virtual Result<CommandResult> Run(const std::vector<std::string>& argv, const std::string& input,
                                    Duration timeout) = 0;
};

// fork/exec with pipes; the child gets an empty signal mask and its own
// process group. Extra environment entries ("NAME=value") are added to the
// inherited environment.
class SystemCommandRunner final : public CommandRunner {
 public:
  explicit SystemCommandRunner(std::vector<std::string> extra_env = {})
      : extra_env_(std::move(extra_env)) {}
  Result<CommandResult> Run(const std::vector<std::string>& argv, const std::string& input,
                            Duration timeout) override;

 private:
  std::vector<std::string> extra_env_;
};

// ---- processes that outlive tide ------------------------------------------
//
// The local provider's nodes are processes that must survive tide's exit and
// a kill -9 of it, and that tide finds again after a restart by pid. A pid
// alone is not enough for that: the kernel reuses pids, so a process is named
// by its pid and its start time together.

// A process as /proc tells it apart from a later one with the same pid.
struct ProcessId {
  int64_t pid = 0;
  uint64_t start_time = 0;  // /proc/<pid>/stat field 22: clock ticks after boot
};

// Fields of /proc/<pid>/stat.
struct ProcStat {
  char state = '?';         // field 3: 'R', 'S', 'Z' (zombie), ...
  uint64_t start_time = 0;  // field 22
};

// nullopt when the process does not exist (or pid <= 0, or /proc cannot be
// read). A command name holding spaces or parentheses is handled.
std::optional<ProcStat> ReadProcStat(int64_t pid);

// The process exists, has `id`'s start time, and has not ended: a zombie
// counts as ended (its parent may be init, or nobody may be reaping it).
bool IsRunning(const ProcessId& id);

// Sends `signal` to the process only while IsRunning(id), so a reused pid is
// never signalled. True if the signal was sent.
bool SignalProcess(const ProcessId& id, int signal);

// Sends `signal` to every process of the group `pgid` (kill(-pgid)). A group
// outlives its leader, so this is safe after the leader has ended (Linux does
// not hand out a pid that is still a group's id). True if any process got it.
bool SignalProcessGroup(int64_t pgid, int signal);

// Polls (every 20 ms) until IsRunning(id) is false or `limit` has passed;
// true if the process has ended. Blocks the calling thread.
bool WaitUntilGone(const ProcessId& id, Duration limit);

// The program image of `pid` (readlink of /proc/<pid>/exe, without the
// " (deleted)" of a replaced binary); "" when unreadable.
std::string ProcessExecutable(int64_t pid);

// `program` as execvp would find it: a name holding '/' is taken as is, any
// other is looked up on PATH. "" when that is not an executable regular file.
std::string FindExecutable(const std::string& program);

// What to start. Everything is prepared before fork.
struct DetachedOptions {
  // argv[0] is a path or a name looked up on PATH (FindExecutable).
  std::vector<std::string> argv;
  // stdout and stderr are appended to this file (created 0644); "" sends
  // them to /dev/null. stdin is /dev/null.
  std::string log_path;
  // After Release, the process sleeps this long, then execs argv. Until the
  // exec its image (ProcessExecutable) is still the caller's.
  Duration start_delay{};
};

// A process detached from the caller: its own session and its own process
// group (it leads it, so SignalProcessGroup(pid) reaches what it starts),
// and not a child of the caller (a double fork: init reaps it), so it
// outlives the caller. Its signal mask is empty and every disposition the
// default, whatever the caller's; it inherits no descriptor but 0, 1 and 2.
//
// Starting is two steps so that the caller can record the process before it
// runs anything: Start makes the process, which then waits; Release lets it
// sleep the delay and exec. A handle destroyed (or the caller dying) before
// Release makes the process exit without running argv.
//
// If the exec fails, the process writes "tide: exec <argv[0]> failed, errno N"
// to its log and exits with status 127. Not thread-safe per handle.
class DetachedProcess {
 public:
  // NotFound when argv[0] is not an executable file; InvalidArgument for an
  // empty argv; Unavailable when the log cannot be opened or the process
  // cannot be made (nothing is then left running).
  static Result<DetachedProcess> Start(const DetachedOptions& options);

  DetachedProcess(DetachedProcess&& other) noexcept;
  DetachedProcess& operator=(DetachedProcess&& other) noexcept;
  DetachedProcess(const DetachedProcess&) = delete;
  DetachedProcess& operator=(const DetachedProcess&) = delete;
  ~DetachedProcess();  // unreleased: the process exits without exec

  // Its pid and start time, read while it waits for Release.
  const ProcessId& id() const { return id_; }

  // Lets the process go on: it sleeps start_delay, then execs argv.
  // Unavailable if it could not be told (it has ended); a second call is
  // FailedPrecondition.
  Status Release();

 private:
  DetachedProcess(ProcessId id, int go_fd) : id_(id), go_fd_(go_fd) {}
  void Abandon();

  ProcessId id_;
  int go_fd_ = -1;  // writing one byte releases the process; closing it unwritten ends it
};

// "scontrol update nodename=gpu1" for log lines and error messages: each
// argument that holds a space or quote is single-quoted.
std::string FormatArgv(const std::vector<std::string>& argv);

}  // namespace tide

#endif  // TIDE_CORE_PROCESS_H_
