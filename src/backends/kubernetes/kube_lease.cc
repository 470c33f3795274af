#include "backends/kubernetes/kube_lease.h"

#include <unistd.h>

#include <cstdlib>

#include "backends/kubernetes/kube_client.h"
#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::backends::kube {
namespace {

using json = nlohmann::json;

// A MicroTime, as the API server writes it: RFC 3339 with six decimals.
std::string MicroTime(Timestamp t) {
  std::string s = FormatTimestamp(t);  // "...T09:00:00Z"
  s.insert(s.size() - 1, ".000000");
  return s;
}

std::string StringField(const json& j, std::string_view key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t IntField(const json& j, std::string_view key, int64_t otherwise) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : otherwise;
}

}  // namespace

std::string DefaultIdentity() {
  if (const char* pod = std::getenv("POD_NAME"); pod != nullptr && *pod != '\0') return pod;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') return StrCat("tide-", getpid());
  return StrCat(host, "-", getpid());
}

LeaseElector::LeaseElector(LeaseOptions options, Transport* transport, const Clock* clock, Sleeper* sleeper)
    : options_(std::move(options)), transport_(transport), clock_(clock), sleeper_(sleeper) {}

std::string LeaseElector::Path() const {
  return StrCat(CollectionPath("coordination.k8s.io/v1", "leases", options_.namespace_name), "/", options_.name);
}

Result<Reply> LeaseElector::Write(const std::string& resource_version, const std::string& holder, Timestamp acquire,
                                  Timestamp renew, int64_t transitions, Duration duration) {
  json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", {{"name", options_.name}, {"namespace", options_.namespace_name}}},
                {"spec",
                 {{"holderIdentity", holder},
                  {"leaseDurationSeconds", duration.count()},
                  {"acquireTime", MicroTime(acquire)},
                  {"renewTime", MicroTime(renew)},
                  {"leaseTransitions", transitions}}}};
  if (resource_version.empty()) {
    return transport_->Request("POST", CollectionPath("coordination.k8s.io/v1", "leases", options_.namespace_name),
                               lease.dump());
  }
  lease["metadata"]["resourceVersion"] = resource_version;
  return transport_->Request("PUT", Path(), lease.dump());
}

void LeaseElector::Hold(Timestamp now) {
  if (holder_ != options_.identity || renewed_ == kInfinitePast) since_ = now;
  holder_ = options_.identity;
  renewed_ = now;
  last_error_.clear();
}

Status LeaseElector::TryOnce() {
  const Timestamp now = clock_->Now();
  const std::string what = StrCat("Lease ", options_.namespace_name, "/", options_.name);
  auto fail = [&](Status s) {
    std::lock_guard lock(mu_);
    last_error_ = std::string(Message(s));
    return s;
  };
  Result<Reply> got = transport_->Request("GET", Path());
  if (!got.ok()) return fail(got.status());
  if (got->status == 404) {
    // Nobody has ever held it: create it, held by this replica.
    Result<Reply> made = Write("", options_.identity, now, now, 0, options_.duration);
    if (!made.ok()) return fail(made.status());
    if (made->status == 409) return OkStatus();  // another replica created it first: read it next time
    if (Status s = StatusFromReply(*made, StrCat("create ", what)); !s.ok()) return fail(s);
    json j = json::parse(made->body, nullptr, false);
    std::lock_guard lock(mu_);
    resource_version_ = j.is_object() ? StringField(j.value("metadata", json::object()), "resourceVersion") : "";
    acquired_ = now;
    transitions_ = 0;
    Hold(now);
    return OkStatus();
  }
  if (Status s = StatusFromReply(*got, StrCat("get ", what)); !s.ok()) return fail(s);
  json j = json::parse(got->body, nullptr, false);
  if (!j.is_object() || !j.contains("spec") || !j["spec"].is_object()) {
    return fail(absl::InvalidArgumentError(StrCat(what, ": the reply is not a Lease with a spec")));
  }
  const json& spec = j["spec"];
  const std::string holder = StringField(spec, "holderIdentity");
  const std::string version = StringField(j.value("metadata", json::object()), "resourceVersion");
  const Duration length = Seconds(IntField(spec, "leaseDurationSeconds", options_.duration.count()));
  const int64_t transitions = IntField(spec, "leaseTransitions", 0);
  const std::string record = StrCat(holder, "|", StringField(spec, "renewTime"), "|", version);

  std::unique_lock lock(mu_);
  if (record != observed_) {
    if (holder != holder_) since_ = now;
    observed_ = record;
    observed_at_ = now;
  }
  holder_ = holder;
  resource_version_ = version;
  const bool mine = holder == options_.identity;
  // Another's Lease may be taken only once it has gone unrenewed for its
  // length, on this replica's clock; an empty holder has been released.
  if (!mine && !holder.empty() && now < observed_at_ + length) {
    last_error_.clear();
    return OkStatus();
  }
  const Timestamp acquire = mine ? acquired_ : now;
  const int64_t next_transitions = mine ? transitions : transitions + 1;
  lock.unlock();
  Result<Reply> put = Write(version, options_.identity, acquire == kInfinitePast ? now : acquire, now,
                            next_transitions, options_.duration);
  if (!put.ok()) return fail(put.status());
  if (put->status == 409) return OkStatus();  // it changed under us: someone else renewed or took it
  if (Status s = StatusFromReply(*put, StrCat(mine ? "renew " : "take ", what)); !s.ok()) return fail(s);
  json written = json::parse(put->body, nullptr, false);
  lock.lock();
  resource_version_ =
      written.is_object() ? StringField(written.value("metadata", json::object()), "resourceVersion") : "";
  if (!mine) acquired_ = now;
  transitions_ = next_transitions;
  Hold(now);
  return OkStatus();
}

void LeaseElector::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    (void)TryOnce();  // its error is in View(); Leading() lapses by itself
    if (!sleeper_->Sleep(options_.retry, stop)) break;
  }
}

bool LeaseElector::Leading() const {
  std::lock_guard lock(mu_);
  return holder_ == options_.identity && renewed_ != kInfinitePast &&
         clock_->Now() - renewed_ < options_.renew_deadline;
}

LeadershipView LeaseElector::View() const {
  LeadershipView v;
  v.lock = StrCat("Lease ", options_.namespace_name, "/", options_.name);
  v.identity = options_.identity;
  v.leading = Leading();
  std::lock_guard lock(mu_);
  v.holder = holder_;
  v.since = since_;
  v.last_error = last_error_;
  return v;
}

void LeaseElector::Release() {
  std::unique_lock lock(mu_);
  if (holder_ != options_.identity || resource_version_.empty()) return;
  const std::string version = resource_version_;
  const Timestamp acquire = acquired_;
  const int64_t transitions = transitions_;
  lock.unlock();
  const Timestamp now = clock_->Now();
  // As client-go releases: no holder, a one-second length.
  Result<Reply> put = Write(version, "", acquire == kInfinitePast ? now : acquire, now, transitions, Seconds(1));
  lock.lock();
  if (put.ok() && put->status / 100 == 2) {
    holder_.clear();
    renewed_ = kInfinitePast;
  }
}

}  // namespace tide::backends::kube
