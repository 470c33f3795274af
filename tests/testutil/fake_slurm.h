// FakeSlurm: a CommandRunner that plays Slurm's client tools for tests of
// the Slurm backend and of the controller over it. squeue and sinfo answer
// with the JSON of `view` (the v0.0.38 schema the backend reads); scontrol
// and scancel are recorded in a short form ("drain gpu1 <reason>",
// "undrain gpu1", "power_down gpu1", "requeue 7", "cancel 7",
// "signal 7 USR1") and succeed. With apply_node_commands, drains and
// undrains also change `view` as slurmctld would (the DRAIN flag and the
// reason), so that a later squeue/sinfo shows them. cut_replies_at cuts
// squeue's and sinfo's replies short.
#ifndef TIDE_TESTUTIL_FAKE_SLURM_H_
#define TIDE_TESTUTIL_FAKE_SLURM_H_

#include <string>
#include <utility>
#include <vector>

#include "backends/slurm/slurm.h"
#include "core/process.h"
#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::testing {

// A Slurm node as sinfo would show it.
inline backends::SlurmNode SlurmNode(std::string name, std::string state, std::vector<std::string> flags = {},
                                     int used = 0, std::string reason = "") {
  backends::SlurmNode n;
  n.name = std::move(name);
  n.state = std::move(state);
  n.flags = std::move(flags);
  n.gpus = 8;
  n.gpus_used = used;
  n.reason = std::move(reason);
  n.partitions = {"gpu"};
  return n;
}

inline backends::SlurmJob SlurmJob(int64_t id, std::string state, int gpus, std::vector<std::string> nodes = {},
                                   std::string partition = "gpu") {
  backends::SlurmJob j;
  j.id = id;
  j.state = std::move(state);
  j.partition = std::move(partition);
  j.gpus_per_node = gpus;
  j.gpus = gpus;
  j.nodes = std::move(nodes);
  j.submit = FromUnixSeconds(1'800'000'000);
  j.start = j.nodes.empty() ? Timestamp{} : FromUnixSeconds(1'800'000'100);
  j.state_reason = j.nodes.empty() ? "Resources" : "None";
  return j;
}

class FakeSlurm final : public CommandRunner {
 public:
  backends::SlurmView view;
  Status query_error = OkStatus();  // what squeue fails with, if not OK
  std::vector<std::string> calls;   // every command, short form; "squeue", "sinfo" too
  bool apply_node_commands = false;  // drain and undrain change `view`
  // squeue's and sinfo's replies are cut after this many bytes (a reply cut
  // short); npos: whole.
  size_t cut_replies_at = std::string::npos;

  Result<CommandResult> Run(const std::vector<std::string>& argv, const std::string& input,
                            Duration timeout) override {
    const std::string tool = argv.empty() ? "" : argv[0].substr(argv[0].rfind('/') + 1);
    if (tool == "squeue") {
      calls.push_back("squeue");
      if (!query_error.ok()) return query_error;
      return CommandResult{0, Squeue().substr(0, cut_replies_at), ""};
    }
    if (tool == "sinfo") {
      calls.push_back("sinfo");
      return CommandResult{0, Sinfo().substr(0, cut_replies_at), ""};
    }
    calls.push_back(Short(tool, argv));
    if (apply_node_commands && tool == "scontrol") Apply(argv);
    return CommandResult{0, "", ""};
  }

  // The commands that act (not squeue or sinfo).
  std::vector<std::string> Actions() const {
    std::vector<std::string> out;
    for (const auto& c : calls) {
      if (c != "squeue" && c != "sinfo") out.push_back(c);
    }
    return out;
  }

 private:
  // scontrol update nodename=N state=DRAIN|UNDRAIN [reason=R] on `view`.
  void Apply(const std::vector<std::string>& argv) {
    const std::string state = Value(argv, "state");
    if (state != "DRAIN" && state != "UNDRAIN") return;
    for (auto& n : view.nodes) {
      if (n.name != Value(argv, "nodename")) continue;
      std::erase(n.flags, "DRAIN");
      n.reason.clear();
      if (state == "DRAIN") {
        n.flags.push_back("DRAIN");
        n.reason = Value(argv, "reason");
      }
    }
  }
  static std::string Value(const std::vector<std::string>& argv, std::string_view key) {
    for (const auto& a : argv) {
      if (a.rfind(StrCat(key, "="), 0) == 0) return a.substr(key.size() + 1);
    }
    return "";
  }
  static std::string Short(const std::string& tool, const std::vector<std::string>& argv) {
    if (tool == "scontrol" && argv.size() > 1 && argv[1] == "requeue") return StrCat("requeue ", argv.back());
    if (tool == "scontrol") {
      const std::string node = Value(argv, "nodename");
      const std::string state = Value(argv, "state");
      if (state == "DRAIN") return StrCat("drain ", node, " ", Value(argv, "reason"));
      if (state == "UNDRAIN") return StrCat("undrain ", node);
      if (state == "POWER_DOWN") return StrCat("power_down ", node);
      if (state == "POWER_DOWN_FORCE") return StrCat("power_down_force ", node);
      if (state == "POWER_UP") return StrCat("power_up ", node);
    }
    if (tool == "scancel" && argv.size() == 4) return StrCat("signal ", argv[3], " ", Value(argv, "--signal"));
    if (tool == "scancel") return StrCat("cancel ", argv.back());
    return StrJoin(argv, " ");
  }
  std::string Squeue() const {
    nlohmann::json jobs = nlohmann::json::array();
    for (const auto& j : view.jobs) {
      nlohmann::json o = {{"job_id", j.id},
                          {"job_state", j.state},
                          {"name", j.name},
                          {"partition", j.partition},
                          {"qos", j.qos},
                          {"account", j.account},
                          {"comment", j.comment},
                          {"user_name", j.user},
                          {"state_reason", j.state_reason},
                          {"nodes", StrJoin(j.nodes, ",")},
                          {"node_count", j.node_count},
                          {"submit_time", ToUnixSeconds(j.submit)},
                          {"start_time", ToUnixSeconds(j.start)},
                          {"restart_cnt", j.restarts},
                          {"requeue", j.requeue}};
      if (j.gpus_per_node > 0) o["tres_per_node"] = StrCat("gres:gpu:", j.gpus_per_node);
      if (j.gpus_per_node == 0 && j.gpus > 0) o["tres_per_job"] = StrCat("gres:gpu:", j.gpus);
      o["time_limit"] = j.time_limit.count() > 0 ? nlohmann::json(j.time_limit.count() / 60) : nlohmann::json();
      jobs.push_back(o);
    }
    return nlohmann::json{{"jobs", jobs}}.dump();
  }
  std::string Sinfo() const {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : view.nodes) {
      nodes.push_back({{"name", n.name},
                       {"state", n.state},
                       {"state_flags", n.flags},
                       {"gres", StrCat("gpu:", n.gpus)},
                       {"gres_used", StrCat("gpu:", n.gpus_used)},
                       {"reason", n.reason},
                       {"partitions", n.partitions}});
    }
    return nlohmann::json{{"nodes", nodes}}.dump();
  }
};

}  // namespace tide::testing

#endif  // TIDE_TESTUTIL_FAKE_SLURM_H_
