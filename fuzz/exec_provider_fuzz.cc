// The exec provider's replies: what the user's cloud commands print on
// stdout (docs/providers.md). The first byte picks the call (create, list,
// interruptions, delete) and the command's exit status; the rest is stdout.
//
// Properties: a reply that does not parse is an error that names the command
// and is printable; a garbage reply never reads as "no instances" or "no
// interruptions"; a create never returns an instance for another node, or
// one without an id.
#include "fuzz/fuzz_check.h"
#include "nlohmann/json.hpp"
#include "providers/exec/exec_provider.h"

namespace tide::fuzz {
namespace {

class Stdout final : public CommandRunner {
 public:
  std::string out;
  int exit_code = 0;
  Result<CommandResult> Run(const std::vector<std::string>&, const std::string&, Duration) override {
    return CommandResult{exit_code, out, exit_code == 0 ? "" : out};
  }
};

// True if every notice in the reply's list is for a time before `now` (such
// notices are dropped: the instance is gone already).
bool AllPast(std::string_view text, Timestamp now) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("interruptions") || !j["interruptions"].is_array()) return false;
  for (const auto& n : j["interruptions"]) {
    if (!n.is_object() || !n.contains("at") || !n["at"].is_number_integer()) return false;
    if (n["at"].get<int64_t>() >= ToUnixSeconds(now)) return false;
  }
  return true;
}

}  // namespace
}  // namespace tide::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tide;
  using namespace tide::fuzz;
  if (size == 0) return 0;
  static Stdout* runner = new Stdout();
  static providers::ExecProvider* provider = [] {
    providers::ExecProvider::Options o;
    o.create = {"cloud", "create"};
    o.delete_ = {"cloud", "delete"};
    o.list = {"cloud", "list"};
    o.interruptions = {"cloud", "interruptions"};
    return new providers::ExecProvider(o, runner);
  }();
  const int call = data[0] % 4;
  runner->exit_code = (data[0] / 4) % 8 == 7 ? 1 : 0;
  runner->out = std::string(AsText(data + 1, size - 1));
  const Timestamp now = FromUnixSeconds(1'800'000'000);
  const char* names[] = {"cloud create", "cloud list", "cloud interruptions", "cloud delete"};
  Status error = OkStatus();
  if (call == 0) {
    providers::CreateRequest r;
    r.pool = "gpu";
    r.node = "gpu-7";
    r.instance_type = "a100x8";
    r.idempotency_key = "create-gpu-7-1";
    auto i = provider->Create(r, now);
    if (i.ok() && (i->id.empty() || i->node != r.node)) {
      Fail("a create returns an instance with an id, for the node asked for", StrCat(i->id, " ", i->node));
    }
    error = i.status();
  } else if (call == 1) {
    auto list = provider->List(now);
    if (list.ok() && list->empty() && !IsEmptyList(runner->out, "instances")) {
      Fail("no instances only from an empty \"instances\" list", runner->out);
    }
    if (list.ok()) {
      for (const auto& i : *list) {
        if (i.id.empty() || i.node.empty()) Fail("a listed instance has an id and a node", runner->out);
      }
    }
    error = list.status();
  } else if (call == 2) {
    auto notices = provider->Interruptions(now);
    if (notices.ok() && notices->empty() && !IsEmptyList(runner->out, "interruptions") &&
        !AllPast(runner->out, now)) {
      Fail("no interruptions only from an empty list, or one of notices already past", runner->out);
    }
    error = notices.status();
  } else {
    error = provider->Delete("i-123", "delete-gpu-7-1", now);
  }
  if (!error.ok()) CheckMessage(error, names[call]);
  if (runner->exit_code != 0 && error.ok()) Fail("a command that exits 1 is an error", names[call]);
  return 0;
}
