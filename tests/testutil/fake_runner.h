// FakeRunner: a CommandRunner for tests. It records every command and
// answers from a script; with the script used up it answers exit 0 and no
// output.
#ifndef TIDE_TESTUTIL_FAKE_RUNNER_H_
#define TIDE_TESTUTIL_FAKE_RUNNER_H_

#include <deque>
#include <string>
#include <vector>

#include "core/process.h"

namespace tide::testing {

class FakeRunner final : public CommandRunner {
 public:
  struct Call {
    std::vector<std::string> argv;
    std::string input;
    Duration timeout;
  };

  Result<CommandResult> Run(const std::vector<std::string>& argv, const std::string& input,
                            Duration timeout) override {
    calls.push_back({argv, input, timeout});
    if (replies.empty()) return CommandResult{};
    Result<CommandResult> r = std::move(replies.front());
    replies.pop_front();
    return r;
  }

  void Reply(int exit_code, std::string out, std::string err = "") {
    replies.push_back(CommandResult{exit_code, std::move(out), std::move(err)});
  }
  void Fail(Status s) { replies.push_back(std::move(s)); }

  std::vector<std::vector<std::string>> Argvs() const {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : calls) out.push_back(c.argv);
    return out;
  }

  std::vector<Call> calls;
  std::deque<Result<CommandResult>> replies;
};

}  // namespace tide::testing

#endif  // TIDE_TESTUTIL_FAKE_RUNNER_H_
