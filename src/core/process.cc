// SystemCommandRunner: fork + execvpe with three pipes, driven by poll so a
// child that fills its stdout while we are still writing its stdin cannot
// deadlock us. DetachedProcess: a double fork, the grandchild held on a pipe
// until Release. The /proc readers that tell a process from a later one with
// the same pid.
//
// Decisions the header leaves open (SystemCommandRunner):
// - A program that cannot be started (not on PATH, not executable) is
//   Unavailable naming the command and errno's text, not exit status 127:
//   the exec error travels back over a close-on-exec pipe, so "could not
//   run it" never looks like "it ran and said 127".
// - A timeout <= 0 is InvalidArgument (it would kill every command at once).
// - Only the child is waited for: a grandchild that keeps stdout open holds
//   the run until the timeout, which then kills the whole process group.
// - A run cut by its timeout is DeadlineExceeded, not Unavailable: what the
//   program did before it was killed is unknown, and a caller that asked it
//   to change something (a cloud's create) must find out later rather than
//   take it as not done.
#include "core/process.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>
#include <utility>

#include "core/strings.h"

extern char** environ;

namespace tide {
namespace {

// Closes a descriptor once; -1 means "already closed".
void CloseFd(int* fd) {
  if (*fd >= 0) {
    close(*fd);
    *fd = -1;
  }
}

// The descriptors of one run, closed whatever path Run leaves by.
struct Pipes {
  int in_r = -1, in_w = -1;
  int out_r = -1, out_w = -1;
  int err_r = -1, err_w = -1;
  int exec_r = -1, exec_w = -1;  // carries execvpe's errno back to the parent
  ~Pipes() {
    for (int* fd : {&in_r, &in_w, &out_r, &out_w, &err_r, &err_w, &exec_r, &exec_w}) CloseFd(fd);
  }
};

Status MakePipe(int* r, int* w) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::UnavailableError(StrCat("pipe: ", std::strerror(errno)));
  *r = fds[0];
  *w = fds[1];
  return OkStatus();
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

// "NAME" of "NAME=value".
std::string_view EnvName(std::string_view entry) { return entry.substr(0, entry.find('=')); }

// The inherited environment with `extra` added; an extra entry replaces an
// inherited one of the same name. Built before fork: the child may not
// allocate.
std::vector<std::string> BuildEnv(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::any_of(extra.begin(), extra.end(),
                                      [&](const std::string& x) { return EnvName(x) == EnvName(entry); });
    if (!replaced) env.emplace_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> CPointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Makes `fd` the child's descriptor `target`, without close-on-exec.
void DupTo(int fd, int target) {
  if (fd == target) {
    fcntl(fd, F_SETFD, 0);
  } else {
    dup2(fd, target);
  }
}

// Runs in the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void ExecChild(const Pipes& p, char* const* argv, char* const* envp) {
  setpgid(0, 0);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    signal(sig, SIG_DFL);  // a SIG_IGN of ours (SIGPIPE, say) would survive exec
  }
  sigset_t empty;
  sigemptyset(&empty);
  sigprocmask(SIG_SETMASK, &empty, nullptr);
  DupTo(p.in_r, STDIN_FILENO);
  DupTo(p.out_w, STDOUT_FILENO);
  DupTo(p.err_w, STDERR_FILENO);
  // Descriptors other code opened without O_CLOEXEC stay ours.
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  execvpe(argv[0], argv, envp);
  const int e = errno;
  ssize_t ignored = write(p.exec_w, &e, sizeof e);
  (void)ignored;
  _exit(127);
}

// write() that turns a closed reader into EPIPE instead of killing the whole
// program with SIGPIPE, without touching the process-wide disposition.
ssize_t WriteNoSigpipe(int fd, const char* data, size_t len) {
  sigset_t pipe_set, old_mask, pending;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);
  sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE);
  const ssize_t n = write(fd, data, len);
  const int e = errno;
  if (n < 0 && e == EPIPE && !was_pending) {
    const timespec zero{0, 0};
    sigtimedwait(&pipe_set, nullptr, &zero);  // consume the SIGPIPE we caused
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  errno = e;
  return n;
}

// Reads what is there; false at end of file or on a hard error.
bool Drain(int fd, std::string* into) {
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      into->append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
}

int ExitCode(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 128;
}

using SteadyClock = std::chrono::steady_clock;

int MillisLeft(SteadyClock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 1000 * 1000));
}

void KillGroup(pid_t pid) {
  SignalProcessGroup(pid, SIGKILL);
  kill(pid, SIGKILL);  // in case setpgid had not happened yet (our child: its pid is not reused)
}

pid_t WaitBlocking(pid_t pid, int* status) {
  pid_t r;
  do {
    r = waitpid(pid, status, 0);
  } while (r < 0 && errno == EINTR);
  return r;
}

}  // namespace

Result<CommandResult> SystemCommandRunner::Run(const std::vector<std::string>& argv, const std::string& input,
                                               Duration timeout) {
  if (argv.empty()) return absl::InvalidArgumentError("run: empty argv");
  const std::string command = FormatArgv(argv);
  if (timeout <= Duration::zero()) {
    return absl::InvalidArgumentError(StrCat(command, ": timeout must be positive, got ", timeout.count(), " s"));
  }

  // Everything the child needs, allocated before fork.
  std::vector<std::string> args = argv;
  std::vector<std::string> env = BuildEnv(extra_env_);
  std::vector<char*> c_argv = CPointers(args);
  std::vector<char*> c_env = CPointers(env);

  Pipes p;
  for (auto [r, w] :
       {std::pair{&p.in_r, &p.in_w}, {&p.out_r, &p.out_w}, {&p.err_r, &p.err_w}, {&p.exec_r, &p.exec_w}}) {
    if (Status s = MakePipe(r, w); !s.ok()) return absl::UnavailableError(StrCat(command, ": ", Message(s)));
  }

  const pid_t pid = fork();
  if (pid < 0) return absl::UnavailableError(StrCat(command, ": fork: ", std::strerror(errno)));
  if (pid == 0) ExecChild(p, c_argv.data(), c_env.data());

  setpgid(pid, pid);  // both sides set it, so a kill(-pid) right after fork finds the group
  CloseFd(&p.in_r);
  CloseFd(&p.out_w);
  CloseFd(&p.err_w);
  CloseFd(&p.exec_w);

  // Blocks until exec succeeds (end of file: the pipe was close-on-exec) or
  // the child reports why it failed.
  int exec_errno = 0;
  ssize_t got;
  do {
    got = read(p.exec_r, &exec_errno, sizeof exec_errno);
  } while (got < 0 && errno == EINTR);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    int status;
    WaitBlocking(pid, &status);
    return absl::UnavailableError(StrCat(command, ": cannot start: ", std::strerror(exec_errno)));
  }

  const auto deadline = SteadyClock::now() + timeout;
  CommandResult result;
  size_t written = 0;
  if (input.empty()) CloseFd(&p.in_w);
  SetNonBlocking(p.out_r);
  SetNonBlocking(p.err_r);
  if (p.in_w >= 0) SetNonBlocking(p.in_w);

  bool timed_out = false;
  while (p.out_r >= 0 || p.err_r >= 0 || p.in_w >= 0) {
    pollfd fds[3];
    int n = 0;
    if (p.in_w >= 0) fds[n++] = {p.in_w, POLLOUT, 0};
    if (p.out_r >= 0) fds[n++] = {p.out_r, POLLIN, 0};
    if (p.err_r >= 0) fds[n++] = {p.err_r, POLLIN, 0};
    const int left = MillisLeft(deadline);
    if (left == 0) {
      timed_out = true;
      break;
    }
    const int ready = poll(fds, static_cast<nfds_t>(n), left);
    if (ready < 0) {
      if (errno == EINTR) continue;
      KillGroup(pid);
      int status;
      WaitBlocking(pid, &status);
      return absl::UnavailableError(StrCat(command, ": poll: ", std::strerror(errno)));
    }
    for (int i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == p.in_w) {
        const ssize_t w = WriteNoSigpipe(p.in_w, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        // A child that stops reading early (EPIPE) is its own business.
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) CloseFd(&p.in_w);
      } else if (fds[i].fd == p.out_r) {
        if (!Drain(p.out_r, &result.out)) CloseFd(&p.out_r);
      } else if (fds[i].fd == p.err_r) {
        if (!Drain(p.err_r, &result.err)) CloseFd(&p.err_r);
      }
    }
  }

  // Outputs closed: the child has exited or is about to.
  int status = 0;
  while (!timed_out) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      result.exit_code = ExitCode(status);
      return result;
    }
    if (r < 0 && errno != EINTR) return absl::InternalError(StrCat(command, ": waitpid: ", std::strerror(errno)));
    if (MillisLeft(deadline) == 0) {
      timed_out = true;
      break;
    }
    const timespec pause{0, 5 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
  KillGroup(pid);
  WaitBlocking(pid, &status);
  return absl::DeadlineExceededError(
      StrCat(command, ": did not finish within ", FormatDuration(timeout), "; killed its process group"));
}

std::string FormatArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    const bool quote = a.empty() || std::any_of(a.begin(), a.end(), [](char c) {
                         return c == ' ' || c == '\t' || c == '\n' || c == '\'' || c == '"';
                       });
    if (!quote) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) {
      if (c == '\'') {
        out += "'\\''";  // close, escaped quote, reopen: what a shell reads back
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

// ---- /proc -----------------------------------------------------------------

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

bool IsRunning(const ProcessId& id) {
  const std::optional<ProcStat> st = ReadProcStat(id.pid);
  return st.has_value() && st->start_time == id.start_time && st->state != 'Z' && st->state != 'X';
}

bool SignalProcess(const ProcessId& id, int signal) {
  return IsRunning(id) && kill(static_cast<pid_t>(id.pid), signal) == 0;
}

bool SignalProcessGroup(int64_t pgid, int signal) {
  if (pgid <= 1) return false;  // kill(0) is our own group, kill(-1) every process we may signal
  return kill(static_cast<pid_t>(-pgid), signal) == 0;
}

bool WaitUntilGone(const ProcessId& id, Duration limit) {
  const auto deadline = SteadyClock::now() + limit;
  for (;;) {
    if (!IsRunning(id)) return true;
    if (SteadyClock::now() >= deadline) return false;
    const timespec pause{0, 20 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
}

std::string ProcessExecutable(int64_t pid) {
  char buf[PATH_MAX];
  const ssize_t n = readlink(StrCat("/proc/", pid, "/exe").c_str(), buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string exe(buf, static_cast<size_t>(n));
  constexpr std::string_view kDeleted = " (deleted)";  // the binary was replaced since
  if (exe.ends_with(kDeleted)) exe.resize(exe.size() - kDeleted.size());
  return exe;
}

std::string FindExecutable(const std::string& program) {
  auto executable = [](const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (program.empty()) return "";
  if (program.find('/') != std::string::npos) return executable(program) ? program : "";
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  for (std::string_view dir : Split(path, ':', /*skip_empty=*/true)) {
    std::string candidate = StrCat(dir, "/", program);
    if (executable(candidate)) return candidate;
  }
  return "";
}

// ---- DetachedProcess -------------------------------------------------------

namespace {

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

// Async-signal-safe; gives up on a hard error.
void WriteAll(int fd, const char* s, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, s, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

// The grandchild, between fork and exec (async-signal-safe calls only):
// waits for the go byte, sleeps the delay, execs.
[[noreturn]] void RunDetached(int null_fd, int out_fd, int go_r, const char* exe, char* const* argv,
                              time_t delay_s) {
  setpgid(0, 0);  // its own group: the caller kills the group
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
  if (r != 1) _exit(0);  // the caller could not record us: we never existed
  close_range(3, ~0U, 0);
  timespec left{delay_s, 0};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
  execv(exe, argv);
  const int e = errno;
  char num[16];
  const size_t n = FormatUnsigned(static_cast<unsigned>(e), num);
  static constexpr char kPrefix[] = "tide: exec ";
  static constexpr char kFailed[] = " failed, errno ";
  WriteAll(STDERR_FILENO, kPrefix, sizeof kPrefix - 1);
  WriteAll(STDERR_FILENO, exe, strlen(exe));
  WriteAll(STDERR_FILENO, kFailed, sizeof kFailed - 1);
  WriteAll(STDERR_FILENO, num, n);
  WriteAll(STDERR_FILENO, "\n", 1);
  _exit(127);
}

// The descriptors of one Start, closed whatever path it leaves by.
struct StartFds {
  int null_fd = -1, log_fd = -1;
  int pid_r = -1, pid_w = -1;  // the grandchild's pid, from the intermediate child
  int go_r = -1, go_w = -1;    // the go byte, to the grandchild
  ~StartFds() {
    for (int* fd : {&null_fd, &log_fd, &pid_r, &pid_w, &go_r, &go_w}) CloseFd(fd);
  }
};

}  // namespace

Result<DetachedProcess> DetachedProcess::Start(const DetachedOptions& options) {
  if (options.argv.empty()) return absl::InvalidArgumentError("start a detached process: empty argv");
  const std::string command = FormatArgv(options.argv);
  std::string exe = FindExecutable(options.argv[0]);
  if (exe.empty()) return absl::NotFoundError(StrCat(options.argv[0], " is not an executable file"));

  // Everything the children need, allocated before fork.
  std::vector<std::string> args = options.argv;
  std::vector<char*> c_argv = CPointers(args);
  const time_t delay_s = static_cast<time_t>(std::max<int64_t>(0, options.start_delay.count()));

  StartFds fds;
  fds.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (fds.null_fd < 0) return absl::UnavailableError(StrCat("cannot open /dev/null: ", std::strerror(errno)));
  if (!options.log_path.empty()) {
    fds.log_fd = open(options.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fds.log_fd < 0) {
      return absl::UnavailableError(StrCat("cannot open log ", options.log_path, ": ", std::strerror(errno)));
    }
  }
  const int child_out = fds.log_fd >= 0 ? fds.log_fd : fds.null_fd;
  for (auto [r, w] : {std::pair{&fds.pid_r, &fds.pid_w}, {&fds.go_r, &fds.go_w}}) {
    if (Status s = MakePipe(r, w); !s.ok()) return absl::UnavailableError(StrCat(command, ": ", Message(s)));
  }

  // Double fork: the intermediate child starts a new session and exits, so
  // the grandchild is no child of ours (it outlives us and init reaps it).
  const pid_t middle = fork();
  if (middle < 0) return absl::UnavailableError(StrCat(command, ": fork: ", std::strerror(errno)));
  if (middle == 0) {
    setsid();
    const pid_t grandchild = _Fork();
    if (grandchild == 0) {
      close(fds.pid_w);
      close(fds.go_w);  // else a dead caller would never look like one
      RunDetached(fds.null_fd, child_out, fds.go_r, exe.c_str(), c_argv.data(), delay_s);
    }
    // Both sides set the group, so that it is there when Start returns.
    if (grandchild > 0) setpgid(grandchild, grandchild);
    WriteAll(fds.pid_w, reinterpret_cast<const char*>(&grandchild), sizeof grandchild);
    _exit(grandchild > 0 ? 0 : 1);
  }

  CloseFd(&fds.pid_w);
  CloseFd(&fds.go_r);
  int status;
  WaitBlocking(middle, &status);
  pid_t pid = -1;
  ssize_t got;
  do {
    got = read(fds.pid_r, &pid, sizeof pid);
  } while (got < 0 && errno == EINTR);
  if (got != static_cast<ssize_t>(sizeof pid) || pid <= 0) {
    return absl::UnavailableError(StrCat(command, ": could not start it"));
  }
  // The grandchild waits on the go pipe (closing it, as returning here does,
  // ends it), so it is there to be read.
  const std::optional<ProcStat> st = ReadProcStat(pid);
  if (!st.has_value()) {
    kill(pid, SIGKILL);
    return absl::UnavailableError(StrCat(command, ": cannot read /proc/", pid, "/stat"));
  }
  DetachedProcess out(ProcessId{pid, st->start_time}, fds.go_w);
  fds.go_w = -1;
  return out;
}

DetachedProcess::DetachedProcess(DetachedProcess&& other) noexcept
    : id_(other.id_), go_fd_(std::exchange(other.go_fd_, -1)) {}

DetachedProcess& DetachedProcess::operator=(DetachedProcess&& other) noexcept {
  if (this != &other) {
    Abandon();
    id_ = other.id_;
    go_fd_ = std::exchange(other.go_fd_, -1);
  }
  return *this;
}

DetachedProcess::~DetachedProcess() { Abandon(); }

void DetachedProcess::Abandon() { CloseFd(&go_fd_); }

Status DetachedProcess::Release() {
  if (go_fd_ < 0) return absl::FailedPreconditionError(StrCat("process ", id_.pid, ": already released"));
  const char go = 'g';
  ssize_t w;
  do {
    w = WriteNoSigpipe(go_fd_, &go, 1);
  } while (w < 0 && errno == EINTR);
  const int e = errno;
  CloseFd(&go_fd_);
  if (w != 1) return absl::UnavailableError(StrCat("process ", id_.pid, ": cannot release it: ", std::strerror(e)));
  return OkStatus();
}

}  // namespace tide
