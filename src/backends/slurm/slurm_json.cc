// Parsing of the Slurm client tools' JSON (openapi v0.0.38, Slurm 22.05) and
// of Slurm's compact notations (host lists, gres strings).
//
// Every nlohmann::json exception is caught here and becomes InvalidArgument:
// none leaves this file.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/slurm/slurm.h"
#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::backends {
namespace {

using json = nlohmann::json;

// A host list that expands to more names than this is refused: no real
// cluster has that many nodes, and a typo ("n[1-99999999]") must not
// exhaust memory.
constexpr size_t kMaxHosts = 100000;

// Slurm's INFINITE and NO_VAL for 32-bit fields, which some versions print
// as plain numbers instead of null.
constexpr int64_t kSlurmNoVal32 = 0xFFFFFFFE;

Status HostlistError(std::string_view list, std::string_view what) {
  return absl::InvalidArgumentError(StrCat("host list \"", list, "\": ", what));
}

// Whole-string unsigned decimal, at most 18 digits; false otherwise.
bool ParseDigits(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

// Splits at `sep` where not inside brackets or parentheses. Assumes the
// brackets were checked; a stray closer just lowers the depth.
std::vector<std::string_view> SplitTopLevel(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '[' || c == '(') {
      ++depth;
    } else if ((c == ']' || c == ')') && depth > 0) {
      --depth;
    } else if (c == sep && depth == 0) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(s.substr(start));
  return out;
}

// Expands one host expression without top-level commas, e.g. "r[1-2]n[01-02]",
// appending to `out`. `list` is the whole input, for messages.
Status ExpandHost(std::string_view host, std::string_view list, std::vector<std::string>* out) {
  const size_t open = host.find('[');
  if (open == std::string_view::npos) {
    if (host.find(']') != std::string_view::npos) return HostlistError(list, "']' without '['");
    out->emplace_back(host);
    return OkStatus();
  }
  const size_t close = host.find(']', open);
  if (close == std::string_view::npos) return HostlistError(list, "'[' without ']'");
  const std::string_view prefix = host.substr(0, open);
  const std::string_view ranges = host.substr(open + 1, close - open - 1);
  if (prefix.find(']') != std::string_view::npos) return HostlistError(list, "']' without '['");
  if (ranges.find('[') != std::string_view::npos) return HostlistError(list, "nested '['");
  if (ranges.empty()) return HostlistError(list, "empty brackets");

  // The suffix may hold more bracket groups: expand it once, then combine.
  std::vector<std::string> suffixes;
  TIDE_RETURN_IF_ERROR(ExpandHost(host.substr(close + 1), list, &suffixes));

  for (std::string_view range : Split(ranges, ',')) {
    range = StripWhitespace(range);
    const size_t dash = range.find('-');
    const std::string_view lo_text = range.substr(0, dash);
    const std::string_view hi_text = dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
    uint64_t lo = 0, hi = 0;
    if (!ParseDigits(lo_text, &lo) || !ParseDigits(hi_text, &hi)) {
      return HostlistError(list, StrCat("bad range \"", range, "\""));
    }
    if (hi < lo) return HostlistError(list, StrCat("range \"", range, "\" runs backwards"));
    if (hi - lo + 1 > kMaxHosts || (hi - lo + 1) * suffixes.size() + out->size() > kMaxHosts) {
      return HostlistError(list, StrCat("more than ", kMaxHosts, " hosts"));
    }
    // The low bound's spelling sets the width: "08-10" -> 08 09 10.
    const size_t width = lo_text.size();
    for (uint64_t v = lo; v <= hi; ++v) {
      std::string number = std::to_string(v);
      if (number.size() < width) number.insert(0, width - number.size(), '0');
      for (const auto& suffix : suffixes) out->push_back(StrCat(prefix, number, suffix));
    }
  }
  return OkStatus();
}

// ---- JSON field access. `where` names the record ("job 17", "node gpu1").

Status FieldError(std::string_view where, std::string_view key, std::string_view what) {
  return absl::InvalidArgumentError(StrCat(where, ": field ", key, ": ", what));
}

Status TypeError(std::string_view where, std::string_view key, std::string_view expected, const json& got) {
  return FieldError(where, key, StrCat("expected ", expected, ", got ", got.type_name()));
}

// The member `key`, or nullptr when it is absent or null.
const json* Find(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

// An integer; nullopt when absent, null, or an unset / infinite
// {"set": ..., "infinite": ..., "number": N} object (newer schemas).
Result<std::optional<int64_t>> GetInt(const json& obj, std::string_view key, std::string_view where) {
  const json* v = Find(obj, key);
  if (v == nullptr) return std::optional<int64_t>();
  if (v->is_object()) {
    if (const json* set = Find(*v, "set"); set != nullptr && set->is_boolean() && !set->get<bool>()) {
      return std::optional<int64_t>();
    }
    if (const json* inf = Find(*v, "infinite"); inf != nullptr && inf->is_boolean() && inf->get<bool>()) {
      return std::optional<int64_t>();
    }
    const json* number = Find(*v, "number");
    if (number == nullptr) return TypeError(where, key, "an integer", *v);
    v = number;
  }
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return FieldError(where, key, StrCat("integer ", u, " out of range"));
    }
    return std::optional<int64_t>(static_cast<int64_t>(u));
  }
  if (v->is_number_integer()) return std::optional<int64_t>(v->get<int64_t>());
  if (v->is_number_float()) {
    const double d = v->get<double>();
    if (d > -9e18 && d < 9e18 && d == static_cast<double>(static_cast<int64_t>(d))) {
      return std::optional<int64_t>(static_cast<int64_t>(d));
    }
    return FieldError(where, key, StrCat("expected an integer, got ", v->dump()));
  }
  return TypeError(where, key, "an integer", *v);
}

// A count that fits an int and is not negative; `fallback` when absent.
Result<int> GetCount(const json& obj, std::string_view key, std::string_view where, int fallback) {
  TIDE_ASSIGN_OR_RETURN(std::optional<int64_t> v, GetInt(obj, key, where));
  if (!v) return fallback;
  if (*v < 0 || *v > std::numeric_limits<int>::max()) {
    return FieldError(where, key, StrCat("count ", *v, " out of range"));
  }
  return static_cast<int>(*v);
}

// A string; "" when absent or null.
Result<std::string> GetString(const json& obj, std::string_view key, std::string_view where) {
  const json* v = Find(obj, key);
  if (v == nullptr) return std::string();
  if (!v->is_string()) return TypeError(where, key, "a string", *v);
  return v->get<std::string>();
}

Result<std::optional<bool>> GetBool(const json& obj, std::string_view key, std::string_view where) {
  const json* v = Find(obj, key);
  if (v == nullptr) return std::optional<bool>();
  if (v->is_boolean()) return std::optional<bool>(v->get<bool>());
  return TypeError(where, key, "a boolean", *v);
}

// An array of strings; empty when absent or null.
Result<std::vector<std::string>> GetStrings(const json& obj, std::string_view key, std::string_view where) {
  std::vector<std::string> out;
  const json* v = Find(obj, key);
  if (v == nullptr) return out;
  if (!v->is_array()) return TypeError(where, key, "an array of strings", *v);
  for (const auto& item : *v) {
    if (!item.is_string()) return TypeError(where, key, "an array of strings", item);
    out.push_back(item.get<std::string>());
  }
  return out;
}

// A state: a string in v0.0.38, an array of strings (base state first,
// then flags) in newer schemas. Empty when absent.
Result<std::vector<std::string>> GetState(const json& obj, std::string_view key, std::string_view where) {
  const json* v = Find(obj, key);
  if (v != nullptr && v->is_string()) return std::vector<std::string>{v->get<std::string>()};
  if (v != nullptr && !v->is_array()) return TypeError(where, key, "a string", *v);
  return GetStrings(obj, key, where);
}

std::string ToUpper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Parses the reply and returns its `array_key` array (the records).
// Unavailable when the reply carries Slurm errors: its data may be partial.
Result<json> ParseReply(std::string_view text, std::string_view array_key) {
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    return absl::InvalidArgumentError(StrCat("not valid JSON: ", Shown(e.what(), 300)));
  }
  if (!doc.is_object()) {
    return absl::InvalidArgumentError(StrCat("expected a JSON object, got ", doc.type_name()));
  }
  if (const json* errors = Find(doc, "errors"); errors != nullptr) {
    if (!errors->is_array()) return TypeError("reply", "errors", "an array", *errors);
    std::vector<std::string> messages;
    for (const auto& e : *errors) {
      std::string m;
      if (e.is_object()) {
        for (const char* k : {"description", "error"}) {
          const json* s = Find(e, k);
          if (m.empty() && s != nullptr && s->is_string()) m = s->get<std::string>();
        }
      }
      messages.push_back(m.empty() ? e.dump() : m);
    }
    if (!messages.empty()) {
      return absl::UnavailableError(StrCat("the reply reports errors: ", StrJoin(messages, "; ")));
    }
  }
  const json* records = Find(doc, array_key);
  if (records == nullptr) return FieldError("reply", array_key, "missing");
  if (!records->is_array()) return TypeError("reply", array_key, "an array", *records);
  return *records;
}

int CeilDiv(int a, int b) { return b <= 0 ? a : static_cast<int>((int64_t{a} + b - 1) / b); }

// a * b for counts, capped at INT_MAX rather than overflowing.
int CappedProduct(int a, int b) {
  return static_cast<int>(std::min<int64_t>(int64_t{a} * b, std::numeric_limits<int>::max()));
}

Result<SlurmJob> ParseJob(const json& j, size_t index) {
  SlurmJob job;
  const std::string at = StrCat("jobs[", index, "]");
  if (!j.is_object()) {
    return absl::InvalidArgumentError(StrCat(at, ": expected an object, got ", j.type_name()));
  }
  TIDE_ASSIGN_OR_RETURN(std::optional<int64_t> id, GetInt(j, "job_id", at));
  if (!id) return FieldError(at, "job_id", "missing");
  job.id = *id;
  const std::string where = StrCat("job ", job.id);

  TIDE_ASSIGN_OR_RETURN(std::vector<std::string> state, GetState(j, "job_state", where));
  if (state.empty() || state[0].empty()) return FieldError(where, "job_state", "missing");
  job.state = ToUpper(state[0]);

  TIDE_ASSIGN_OR_RETURN(job.name, GetString(j, "name", where));
  TIDE_ASSIGN_OR_RETURN(job.partition, GetString(j, "partition", where));
  TIDE_ASSIGN_OR_RETURN(job.qos, GetString(j, "qos", where));
  TIDE_ASSIGN_OR_RETURN(job.account, GetString(j, "account", where));
  TIDE_ASSIGN_OR_RETURN(job.comment, GetString(j, "comment", where));
  TIDE_ASSIGN_OR_RETURN(job.user, GetString(j, "user_name", where));
  TIDE_ASSIGN_OR_RETURN(job.state_reason, GetString(j, "state_reason", where));

  TIDE_ASSIGN_OR_RETURN(std::string nodes, GetString(j, "nodes", where));
  auto expanded = ExpandHostlist(nodes);
  if (!expanded.ok()) return FieldError(where, "nodes", Message(expanded.status()));
  job.nodes = std::move(*expanded);

  const int listed = job.nodes.empty() ? 1 : static_cast<int>(job.nodes.size());
  TIDE_ASSIGN_OR_RETURN(job.node_count, GetCount(j, "node_count", where, listed));
  if (job.node_count == 0) job.node_count = listed;

  // GPUs: per node when asked per node; otherwise the job's (or its tasks')
  // total spread over its nodes.
  TIDE_ASSIGN_OR_RETURN(std::string per_node, GetString(j, "tres_per_node", where));
  TIDE_ASSIGN_OR_RETURN(std::string per_job, GetString(j, "tres_per_job", where));
  TIDE_ASSIGN_OR_RETURN(std::string per_task, GetString(j, "tres_per_task", where));
  TIDE_ASSIGN_OR_RETURN(int tasks, GetCount(j, "tasks", where, job.node_count));
  const int node_gpus = GpusInGres(per_node);
  const int job_gpus = GpusInGres(per_job);
  const int task_gpus = GpusInGres(per_task);
  if (node_gpus > 0) {
    job.gpus_per_node = node_gpus;
    job.gpus = CappedProduct(node_gpus, job.node_count);
  } else if (job_gpus > 0) {
    job.gpus = job_gpus;
    job.gpus_per_node = CeilDiv(job_gpus, job.node_count);
  } else if (task_gpus > 0) {
    job.gpus = CappedProduct(task_gpus, std::max(tasks, 1));
    job.gpus_per_node = CeilDiv(job.gpus, job.node_count);
  }

  TIDE_ASSIGN_OR_RETURN(std::optional<int64_t> submit, GetInt(j, "submit_time", where));
  job.submit = FromUnixSeconds(submit.value_or(0));
  // A pending job's start_time is the scheduler's estimate, not a start.
  TIDE_ASSIGN_OR_RETURN(std::optional<int64_t> start, GetInt(j, "start_time", where));
  job.start = FromUnixSeconds(job.state == "PENDING" ? 0 : start.value_or(0));

  // Minutes; null (22.05's spelling of unlimited), 0 and NO_VAL/INFINITE
  // all mean no limit.
  TIDE_ASSIGN_OR_RETURN(std::optional<int64_t> limit, GetInt(j, "time_limit", where));
  if (limit && *limit < 0) return FieldError(where, "time_limit", StrCat("negative: ", *limit));
  job.time_limit = limit && *limit < kSlurmNoVal32 ? Minutes(*limit) : Duration{0};

  TIDE_ASSIGN_OR_RETURN(job.restarts, GetCount(j, "restart_cnt", where, 0));
  TIDE_ASSIGN_OR_RETURN(std::optional<bool> requeue, GetBool(j, "requeue", where));
  job.requeue = requeue.value_or(true);
  return job;
}

Result<SlurmNode> ParseNode(const json& n, size_t index) {
  SlurmNode node;
  const std::string at = StrCat("nodes[", index, "]");
  if (!n.is_object()) {
    return absl::InvalidArgumentError(StrCat(at, ": expected an object, got ", n.type_name()));
  }
  TIDE_ASSIGN_OR_RETURN(node.name, GetString(n, "name", at));
  if (node.name.empty()) return FieldError(at, "name", "missing");
  const std::string where = StrCat("node ", node.name);

  TIDE_ASSIGN_OR_RETURN(std::vector<std::string> state, GetState(n, "state", where));
  if (state.empty() || state[0].empty()) return FieldError(where, "state", "missing");
  node.state = ToLower(state[0]);
  for (size_t i = 1; i < state.size(); ++i) node.flags.push_back(ToUpper(state[i]));
  TIDE_ASSIGN_OR_RETURN(std::vector<std::string> flags, GetStrings(n, "state_flags", where));
  for (const auto& f : flags) {
    std::string upper = ToUpper(f);
    if (!node.Has(upper)) node.flags.push_back(std::move(upper));
  }

  TIDE_ASSIGN_OR_RETURN(std::string gres, GetString(n, "gres", where));
  TIDE_ASSIGN_OR_RETURN(std::string gres_used, GetString(n, "gres_used", where));
  node.gpus = GpusInGres(gres);
  node.gpus_used = GpusInGres(gres_used);
  TIDE_ASSIGN_OR_RETURN(node.reason, GetString(n, "reason", where));
  TIDE_ASSIGN_OR_RETURN(node.partitions, GetStrings(n, "partitions", where));
  return node;
}

}  // namespace

bool SlurmNode::Has(std::string_view flag) const {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

bool SlurmNode::Drained() const { return Has("DRAIN") || state == "drained" || state == "draining"; }

bool SlurmNode::PoweredDown() const { return Has("POWERED_DOWN") && !Has("POWERING_UP"); }

bool SlurmNode::Responding() const {
  // "future" and "unknown" are nodes whose slurmd has not registered yet.
  if (state == "down" || state == "future" || state == "unknown") return false;
  return !Has("POWERED_DOWN") && !Has("POWERING_UP") && !Has("NOT_RESPONDING");
}

bool SlurmNode::Allocated() const {
  return state == "allocated" || state == "mixed" || state == "completing" || Has("COMPLETING");
}

Result<std::vector<std::string>> ExpandHostlist(std::string_view list) {
  std::vector<std::string> out;
  int depth = 0;
  for (char c : list) {
    if (c == '[' && ++depth > 1) return HostlistError(list, "nested '['");
    if (c == ']' && --depth < 0) return HostlistError(list, "']' without '['");
  }
  if (depth != 0) return HostlistError(list, "'[' without ']'");
  // Blanks between names separate them, as commas do.
  std::string normalized(list);
  depth = 0;
  for (char& c : normalized) {
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    if (depth == 0 && std::isspace(static_cast<unsigned char>(c))) c = ',';
  }
  for (std::string_view host : SplitTopLevel(normalized, ',')) {
    host = StripWhitespace(host);
    if (host.empty()) continue;
    TIDE_RETURN_IF_ERROR(ExpandHost(host, list, &out));
  }
  return out;
}

int GpusInGres(std::string_view text) {
  // Tres spellings ("gres/gpu=4,gres/gpu:a100=4") give the total and then
  // each type again: the untyped total wins when present. Gres spellings
  // ("gpu:a100:4,gpu:v100:2") list each type once and are summed.
  int64_t tres_total = 0, tres_typed = 0, gres = 0;
  bool saw_tres_total = false;
  for (std::string_view item : SplitTopLevel(text, ',')) {
    item = StripWhitespace(item);
    item = item.substr(0, item.find('('));  // "(IDX:0-7)", "(S:0-1)"
    for (std::string_view prefix : {"gres:", "gres/"}) {
      if (item.substr(0, prefix.size()) == prefix) item.remove_prefix(prefix.size());
    }
    uint64_t n = 0;
    if (const size_t eq = item.find('='); eq != std::string_view::npos) {
      const std::string_view name_type = item.substr(0, eq);
      const size_t colon = name_type.find(':');
      if (name_type.substr(0, colon) != "gpu") continue;
      if (!ParseDigits(StripWhitespace(item.substr(eq + 1)), &n)) continue;
      if (colon == std::string_view::npos) {
        tres_total += static_cast<int64_t>(n);
        saw_tres_total = true;
      } else {
        tres_typed += static_cast<int64_t>(n);
      }
      continue;
    }
    const std::vector<std::string_view> parts = Split(item, ':');
    if (parts[0] != "gpu") continue;
    // name[:type]:count; without a count Slurm means one.
    gres += ParseDigits(parts.back(), &n) ? static_cast<int64_t>(n) : 1;
  }
  const int64_t total = saw_tres_total ? tres_total + gres : tres_typed + gres;
  return static_cast<int>(std::min<int64_t>(total, std::numeric_limits<int>::max()));
}

Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text) {
  try {
    TIDE_ASSIGN_OR_RETURN(json records, ParseReply(text, "jobs"));
    std::vector<SlurmJob> jobs;
    jobs.reserve(records.size());
    for (size_t i = 0; i < records.size(); ++i) {
      TIDE_ASSIGN_OR_RETURN(SlurmJob job, ParseJob(records[i], i));
      jobs.push_back(std::move(job));
    }
    return jobs;
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(StrCat("unexpected JSON: ", Shown(e.what(), 300)));
  }
}

Result<std::vector<SlurmNode>> ParseSinfoJson(std::string_view text) {
  try {
    TIDE_ASSIGN_OR_RETURN(json records, ParseReply(text, "nodes"));
    std::vector<SlurmNode> nodes;
    std::map<std::string, size_t, std::less<>> index_of;
    for (size_t i = 0; i < records.size(); ++i) {
      TIDE_ASSIGN_OR_RETURN(SlurmNode node, ParseNode(records[i], i));
      auto it = index_of.find(node.name);
      if (it == index_of.end()) {
        index_of.emplace(node.name, nodes.size());
        nodes.push_back(std::move(node));
        continue;
      }
      // The same node again, for another partition.
      auto& partitions = nodes[it->second].partitions;
      for (auto& p : node.partitions) {
        if (std::find(partitions.begin(), partitions.end(), p) == partitions.end()) partitions.push_back(p);
      }
    }
    return nodes;
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(StrCat("unexpected JSON: ", Shown(e.what(), 300)));
  }
}

}  // namespace tide::backends
