// Running other programs: the Slurm client tools, a cloud's command-line
// tool, slurmd. Always an argv array, never a shell command line, so no
// string from a config, a reply or a job name is ever interpreted by a
// shell.
#ifndef TIDE_CORE_PROCESS_H_
#define TIDE_CORE_PROCESS_H_

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
  // non-zero exit means). Unavailable if the program cannot be started or
  // does not finish within `timeout` (it is then killed, with its process
  // group); InvalidArgument if argv is empty.
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

// "scontrol update nodename=gpu1" for log lines and error messages: each
// argument that holds a space or quote is single-quoted.
std::string FormatArgv(const std::vector<std::string>& argv);

}  // namespace tide

#endif  // TIDE_CORE_PROCESS_H_
