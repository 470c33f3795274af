// SystemCommandRunner: fork + execvpe with three pipes, driven by poll so a
// child that fills its stdout while we are still writing its stdin cannot
// deadlock us.
//
// Decisions the header leaves open:
// - A program that cannot be started (not on PATH, not executable) is
//   Unavailable naming the command and errno's text, not exit status 127:
//   the exec error travels back over a close-on-exec pipe, so "could not
//   run it" never looks like "it ran and said 127".
// - A timeout <= 0 is InvalidArgument (it would kill every command at once).
// - Only the child is waited for: a grandchild that keeps stdout open holds
//   the run until the timeout, which then kills the whole process group.
#include "core/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>

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
  kill(-pid, SIGKILL);
  kill(pid, SIGKILL);  // in case setpgid had not happened yet
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
  return absl::UnavailableError(
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

}  // namespace tide
