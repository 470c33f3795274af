// FakeCloudRunner: a cloud behind ExecProvider's four commands, kept in
// memory. It answers the JSON protocol of providers/exec/exec_provider.h the
// way a well-behaved cloud CLI (or the user's wrapper around one) must:
// create returns the instance it made before when it sees an idempotency key
// again, and delete of an instance that is gone exits 0. The command is
// chosen by argv[0]: "create", "delete", "list" or "interruptions".
#ifndef TIDE_TESTS_CONTRACT_FAKE_CLOUD_RUNNER_H_
#define TIDE_TESTS_CONTRACT_FAKE_CLOUD_RUNNER_H_

#include <map>
#include <string>
#include <vector>

#include "core/process.h"
#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::contract {

class FakeCloudRunner final : public CommandRunner {
 public:
  Result<CommandResult> Run(const std::vector<std::string>& argv, const std::string& input,
                            Duration timeout) override {
    using json = nlohmann::json;
    if (argv.empty()) return absl::InvalidArgumentError("fake cloud: empty argv");
    const json in = json::parse(input, nullptr, /*allow_exceptions=*/false);
    if (in.is_discarded()) return CommandResult{2, "", "fake cloud: input is not JSON\n"};
    const std::string& command = argv[0];
    if (command == "create") {
      const std::string key = in.value("idempotency_key", "");
      for (const auto& [id, i] : instances_) {
        if (!key.empty() && i.value("idempotency_key", "") == key) return Reply(i);
      }
      const std::string id = StrCat("vm-", ++made_);
      json i = {{"id", id},
                {"node", in.value("node", "")},
                {"pool", in.value("pool", "")},
                {"idempotency_key", key},
                {"state", "pending"}};
      instances_[id] = i;
      return Reply(i);
    }
    if (command == "delete") {
      instances_.erase(in.value("id", ""));
      return CommandResult{};
    }
    if (command == "list") {
      json list = json::array();
      for (const auto& [id, i] : instances_) list.push_back(i);
      return Reply({{"instances", list}});
    }
    if (command == "interruptions") {
      json list = json::array();
      for (const auto& [id, at] : notices_) {
        auto i = instances_.find(id);
        if (i == instances_.end()) continue;
        list.push_back({{"id", id}, {"node", (*i).second["node"]}, {"at", at}});
      }
      return Reply({{"interruptions", list}});
    }
    return CommandResult{127, "", StrCat("fake cloud: no command ", command, "\n")};
  }

  // The cloud announces that instance `id` goes at `at` (Unix seconds).
  void Announce(const std::string& id, int64_t at) { notices_[id] = at; }

 private:
  static CommandResult Reply(const nlohmann::json& j) { return CommandResult{0, j.dump() + "\n", ""}; }

  std::map<std::string, nlohmann::json> instances_;  // by id
  std::map<std::string, int64_t> notices_;           // id -> at
  int made_ = 0;
};

}  // namespace tide::contract

#endif  // TIDE_TESTS_CONTRACT_FAKE_CLOUD_RUNNER_H_
