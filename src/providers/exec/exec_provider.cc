#include "providers/exec/exec_provider.h"

#include <set>
#include <string_view>

#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::providers {
namespace {

using json = nlohmann::json;

// Enough of a failing command's output to say why; the rest is noise.
constexpr size_t kMaxDetail = 2000;

// Control bytes escaped (Shown): a reply may hold anything.
std::string Excerpt(std::string_view text) { return Shown(StripWhitespace(text), kMaxDetail); }

// A reply's problem, named by the command and the field ("instances[2].id").
Status BadReply(const std::vector<std::string>& argv, std::string_view field, std::string_view what) {
  return absl::UnavailableError(StrCat(FormatArgv(argv), ": reply field \"", Shown(field), "\" ", Shown(what, 400)));
}

Result<std::string> String(const std::vector<std::string>& argv, const json& obj, std::string_view prefix,
                           const char* field, bool required) {
  const std::string name = StrCat(prefix, field);
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) {
    if (required) return BadReply(argv, name, "is missing");
    return std::string();
  }
  if (!it->is_string()) return BadReply(argv, name, StrCat("is not a string: ", it->dump()));
  std::string s = it->get<std::string>();
  if (required && s.empty()) return BadReply(argv, name, "is empty");
  return s;
}

// Integer Unix seconds; nullopt-like `fallback` when absent and optional.
Result<Timestamp> Time(const std::vector<std::string>& argv, const json& obj, std::string_view prefix,
                       const char* field, bool required, Timestamp fallback) {
  const std::string name = StrCat(prefix, field);
  auto it = obj.find(field);
  if (it == obj.end() || it->is_null()) {
    if (required) return BadReply(argv, name, "is missing");
    return fallback;
  }
  if (!it->is_number_integer()) return BadReply(argv, name, StrCat("is not integer Unix seconds: ", it->dump()));
  return FromUnixSeconds(it->get<int64_t>());
}

Result<Instance> ParseInstance(const std::vector<std::string>& argv, const json& obj, std::string_view prefix) {
  if (!obj.is_object()) {
    return BadReply(argv, prefix.empty() ? "(top level)" : prefix.substr(0, prefix.size() - 1),
                    "is not an object");
  }
  Instance i;
  TIDE_ASSIGN_OR_RETURN(i.id, String(argv, obj, prefix, "id", true));
  TIDE_ASSIGN_OR_RETURN(i.node, String(argv, obj, prefix, "node", true));
  TIDE_ASSIGN_OR_RETURN(i.pool, String(argv, obj, prefix, "pool", false));
  TIDE_ASSIGN_OR_RETURN(i.idempotency_key, String(argv, obj, prefix, "idempotency_key", false));
  TIDE_ASSIGN_OR_RETURN(i.state, String(argv, obj, prefix, "state", true));
  if (i.state != "pending" && i.state != "running" && i.state != "terminating") {
    return BadReply(argv, StrCat(prefix, "state"),
                    StrCat("is \"", i.state, "\"; want pending, running or terminating"));
  }
  TIDE_ASSIGN_OR_RETURN(i.created, Time(argv, obj, prefix, "created", false, Timestamp{}));
  return i;
}

Status Unconfigured(std::string_view command) {
  return absl::InvalidArgumentError(StrCat("exec provider: no ", command, " command configured"));
}

}  // namespace

ExecProvider::ExecProvider(Options options, CommandRunner* runner) : options_(std::move(options)), runner_(runner) {}

namespace {

// Runs `argv` with `input`; a non-zero exit or a failure to run is
// Unavailable with the command and its stderr, a command cut by its timeout
// DeadlineExceeded (what it did before it was killed is unknown).
Result<std::string> RunChecked(CommandRunner* runner, const std::vector<std::string>& argv, const json& input,
                               Duration timeout) {
  Result<CommandResult> r = runner->Run(argv, input.dump() + "\n", timeout);
  if (!r.ok()) {
    const std::string command = FormatArgv(argv);
    const std::string_view why = Message(r.status());
    const absl::StatusCode code = absl::IsDeadlineExceeded(r.status()) ? absl::StatusCode::kDeadlineExceeded
                                                                       : absl::StatusCode::kUnavailable;
    // SystemCommandRunner's messages name the command already.
    return Status(code, why.starts_with(command) ? std::string(why) : StrCat(command, ": ", why));
  }
  if (r->exit_code != 0) {
    std::string detail = Excerpt(r->err);
    if (detail.empty()) detail = Excerpt(r->out);
    std::string message = StrCat(FormatArgv(argv), ": exit status ", r->exit_code);
    if (!detail.empty()) StrAppend(&message, ": ", detail);
    return absl::UnavailableError(message);
  }
  return std::move(r->out);
}

Result<json> RunJson(CommandRunner* runner, const std::vector<std::string>& argv, const json& input,
                     Duration timeout) {
  TIDE_ASSIGN_OR_RETURN(std::string out, RunChecked(runner, argv, input, timeout));
  json reply = json::parse(out, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded()) {
    const std::string shown = Excerpt(out);
    return absl::UnavailableError(
        StrCat(FormatArgv(argv), ": reply is not JSON: ", shown.empty() ? "(empty output)" : shown));
  }
  if (!reply.is_object()) {
    return absl::UnavailableError(StrCat(FormatArgv(argv), ": reply is not a JSON object: ", Excerpt(reply.dump())));
  }
  return reply;
}

}  // namespace

Result<Instance> ExecProvider::Create(const CreateRequest& request, Timestamp now) {
  const auto& argv = options_.create;
  if (argv.empty()) return Unconfigured("create");
  const json input = {{"pool", request.pool},
                      {"node", request.node},
                      {"instance_type", request.instance_type},
                      {"tier", std::string(model::TierName(request.tier))},
                      {"region", request.region},
                      {"idempotency_key", request.idempotency_key}};
  TIDE_ASSIGN_OR_RETURN(json reply, RunJson(runner_, argv, input, options_.timeout));
  TIDE_ASSIGN_OR_RETURN(Instance i, ParseInstance(argv, reply, ""));
  if (i.node != request.node) {
    return BadReply(argv, "node", StrCat("is \"", i.node, "\"; asked for node \"", request.node, "\""));
  }
  if (!i.idempotency_key.empty() && i.idempotency_key != request.idempotency_key) {
    return BadReply(argv, "idempotency_key",
                    StrCat("is \"", i.idempotency_key, "\"; sent \"", request.idempotency_key, "\""));
  }
  if (i.pool.empty()) i.pool = request.pool;
  if (i.idempotency_key.empty()) i.idempotency_key = request.idempotency_key;
  return i;
}

Status ExecProvider::Delete(const std::string& instance_id, const std::string& idempotency_key, Timestamp now) {
  if (options_.delete_.empty()) return Unconfigured("delete");
  const json input = {{"id", instance_id}, {"idempotency_key", idempotency_key}};
  return RunChecked(runner_, options_.delete_, input, options_.timeout).status();
}

Result<std::vector<Instance>> ExecProvider::List(Timestamp now) {
  const auto& argv = options_.list;
  if (argv.empty()) return Unconfigured("list");
  TIDE_ASSIGN_OR_RETURN(json reply, RunJson(runner_, argv, json::object(), options_.timeout));
  auto it = reply.find("instances");
  if (it == reply.end()) return BadReply(argv, "instances", "is missing");
  if (!it->is_array()) return BadReply(argv, "instances", "is not an array");
  std::vector<Instance> out;
  std::set<std::string> ids;
  for (size_t k = 0; k < it->size(); ++k) {
    const std::string prefix = StrCat("instances[", k, "].");
    TIDE_ASSIGN_OR_RETURN(Instance i, ParseInstance(argv, (*it)[k], prefix));
    if (!ids.insert(i.id).second) return BadReply(argv, StrCat(prefix, "id"), StrCat("repeats \"", i.id, "\""));
    out.push_back(std::move(i));
  }
  return out;
}

Result<std::vector<Interruption>> ExecProvider::Interruptions(Timestamp now) {
  const auto& argv = options_.interruptions;
  std::vector<Interruption> out;
  if (argv.empty()) return out;
  TIDE_ASSIGN_OR_RETURN(json reply, RunJson(runner_, argv, json::object(), options_.timeout));
  auto it = reply.find("interruptions");
  if (it == reply.end()) return BadReply(argv, "interruptions", "is missing");
  if (!it->is_array()) return BadReply(argv, "interruptions", "is not an array");
  for (size_t k = 0; k < it->size(); ++k) {
    const std::string prefix = StrCat("interruptions[", k, "].");
    const json& obj = (*it)[k];
    if (!obj.is_object()) return BadReply(argv, StrCat("interruptions[", k, "]"), "is not an object");
    Interruption n;
    TIDE_ASSIGN_OR_RETURN(n.instance_id, String(argv, obj, prefix, "id", true));
    TIDE_ASSIGN_OR_RETURN(n.node, String(argv, obj, prefix, "node", true));
    TIDE_ASSIGN_OR_RETURN(n.at, Time(argv, obj, prefix, "at", true, Timestamp{}));
    if (n.at >= now) out.push_back(std::move(n));
  }
  return out;
}

}  // namespace tide::providers
