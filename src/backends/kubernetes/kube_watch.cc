#include "backends/kubernetes/kube_watch.h"

#include <algorithm>
#include <condition_variable>

#include "backends/kubernetes/kube_client.h"
#include "core/strings.h"
#include "nlohmann/json.hpp"

namespace tide::backends::kube {
namespace {

using json = nlohmann::json;

// Where each type lives in the API.
struct ResourceInfo {
  std::string_view group_version;
  std::string_view resource;
  bool namespaced;
};
template <typename T>
ResourceInfo Info();
template <>
ResourceInfo Info<Pod>() { return {"", "pods", true}; }
template <>
ResourceInfo Info<Node>() { return {"", "nodes", false}; }
template <>
ResourceInfo Info<PodDisruptionBudget>() { return {"policy/v1", "poddisruptionbudgets", true}; }
template <>
ResourceInfo Info<PriorityClass>() { return {"scheduling.k8s.io/v1", "priorityclasses", false}; }
template <>
ResourceInfo Info<PodGroup>() { return {"scheduling.x-k8s.io/v1alpha1", "podgroups", true}; }
template <>
ResourceInfo Info<VolcanoPodGroup>() { return {"scheduling.volcano.sh/v1beta1", "podgroups", true}; }

Result<Pod> Parse(const json& j, Pod*) { return ParsePod(j); }
Result<Node> Parse(const json& j, Node*) { return ParseNode(j); }
Result<PodDisruptionBudget> Parse(const json& j, PodDisruptionBudget*) { return ParsePodDisruptionBudget(j); }
Result<PriorityClass> Parse(const json& j, PriorityClass*) { return ParsePriorityClass(j); }
Result<PodGroup> Parse(const json& j, PodGroup*) { return ParsePodGroup(j); }
Result<VolcanoPodGroup> Parse(const json& j, VolcanoPodGroup*) {
  TIDE_ASSIGN_OR_RETURN(PodGroup g, ParsePodGroup(j));
  VolcanoPodGroup v;
  static_cast<PodGroup&>(v) = std::move(g);
  return v;
}

std::string StringAt(const json& j, std::string_view a, std::string_view b) {
  if (!j.is_object()) return "";
  auto x = j.find(a);
  if (x == j.end() || !x->is_object()) return "";
  auto y = x->find(b);
  return y != x->end() && y->is_string() ? y->get<std::string>() : "";
}

// namespace/name straight from the JSON, for objects that cannot be parsed.
std::string RawKey(const json& j) {
  const std::string ns = StringAt(j, "metadata", "namespace");
  const std::string name = StringAt(j, "metadata", "name");
  return ns.empty() ? name : StrCat(ns, "/", name);
}

}  // namespace

bool RealSleeper::Sleep(Duration d, std::stop_token stop) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  cv.wait_for(lock, stop, std::chrono::seconds(d.count()), [] { return false; });
  return !stop.stop_requested();
}

InformerBase::InformerBase(Transport* transport, const Clock* clock, Sleeper* sleeper, std::string what,
                           std::string collection, InformerOptions options)
    : transport_(transport),
      clock_(clock),
      sleeper_(sleeper),
      what_(std::move(what)),
      collection_(std::move(collection)),
      options_(std::move(options)) {}

void InformerBase::Contact() { state_.last_contact = clock_->Now(); }

SyncState InformerBase::State() const {
  std::lock_guard lock(mu_);
  return state_;
}

bool InformerBase::Synced() const {
  std::lock_guard lock(mu_);
  return state_.listed && state_.healthy && clock_->Now() - state_.last_contact <= options_.max_staleness;
}

StepResult InformerBase::Fail(Status error) {
  std::lock_guard lock(mu_);
  state_.healthy = false;
  state_.consecutive_failures++;
  state_.last_error = std::string(Message(error));
  state_.last_error_time = clock_->Now();
  Duration wait = options_.initial_backoff;
  for (int i = 1; i < state_.consecutive_failures && wait < options_.max_backoff; ++i) wait *= 2;
  StepResult r;
  r.kind = StepResult::Kind::kFailed;
  r.error = std::move(error);
  r.wait = std::min(wait, options_.max_backoff);
  return r;
}

StepResult InformerBase::List() {
  Client client(transport_);
  ListOptions lo;
  lo.label_selector = options_.label_selector;
  lo.limit = options_.page_size;
  auto page = client.ListAll(collection_, lo);
  if (!page.ok()) return Fail(page.status());
  StepResult r;
  std::lock_guard lock(mu_);
  ReplaceAll(page->items, &r.vanished);
  state_.resource_version = page->resource_version;
  state_.listed = true;
  state_.healthy = true;
  state_.consecutive_failures = 0;
  state_.lists++;
  state_.version++;
  Contact();
  relist_ = false;
  r.kind = state_.lists > 1 ? StepResult::Kind::kRelisted : StepResult::Kind::kListed;
  return r;
}

StepResult InformerBase::WatchOnce(std::stop_token stop) {
  std::string rv;
  {
    std::lock_guard lock(mu_);
    rv = state_.resource_version;
  }
  std::string path = StrCat(collection_, "?watch=1&allowWatchBookmarks=true&resourceVersion=", QueryEscape(rv),
                            "&timeoutSeconds=", options_.watch_timeout.count());
  if (!options_.label_selector.empty()) StrAppend(&path, "&labelSelector=", QueryEscape(options_.label_selector));
  const std::string what = StrCat("watch ", what_);
  Status line_error;  // why the stream was ended from our side
  int events = 0;
  auto on_open = [&] {
    std::lock_guard lock(mu_);
    state_.healthy = true;
    Contact();
  };
  auto on_line = [&](std::string_view line) {
    json e = json::parse(line, nullptr, false);
    if (e.is_discarded() || !e.is_object()) {
      line_error = absl::InvalidArgumentError(
          StrCat(what, ": an event is not a JSON object: ", Shown(StripWhitespace(line), 120)));
      return false;
    }
    const std::string type = e.value("type", "");
    const auto obj = e.find("object");
    if (obj == e.end() || !obj->is_object()) {
      line_error = absl::InvalidArgumentError(StrCat(what, ": ", type, " event without an object"));
      return false;
    }
    if (type == "ERROR") {
      const int code = obj->value("code", 0);
      Reply reply{code, obj->dump()};
      line_error = StatusFromReply(reply, StrCat(what, " from resourceVersion ", rv, ": ERROR event"));
      return false;
    }
    const std::string next_rv = StringAt(*obj, "metadata", "resourceVersion");
    std::lock_guard lock(mu_);
    if (type == "BOOKMARK") {
      if (!next_rv.empty()) state_.resource_version = next_rv;
    } else if (type == "ADDED" || type == "MODIFIED" || type == "DELETED") {
      Apply(*obj, type == "DELETED");
      if (!next_rv.empty()) state_.resource_version = next_rv;
      state_.version++;
      events++;
    } else {
      line_error = absl::InvalidArgumentError(StrCat(what, ": unknown event type '", type, "'"));
      return false;
    }
    state_.healthy = true;
    state_.consecutive_failures = 0;
    Contact();
    return true;
  };
  Status s = transport_->Watch(path, on_line, stop, on_open);
  if (!line_error.ok()) s = line_error;
  if (IsGone(s)) {
    // The resourceVersion is too old: the events in between are lost, so
    // only a new list can say what exists.
    relist_ = true;
    StepResult r = List();
    r.events += events;
    return r;
  }
  if (!s.ok() && !(absl::IsCancelled(s) && stop.stop_requested())) {
    StepResult r = Fail(std::move(s));
    r.events = events;
    return r;
  }
  StepResult r;
  r.kind = StepResult::Kind::kWatched;
  r.events = events;
  if (s.ok()) {  // the server ended the stream: that is contact too
    std::lock_guard lock(mu_);
    state_.healthy = true;
    state_.consecutive_failures = 0;
    Contact();
  }
  return r;
}

StepResult InformerBase::Step(std::stop_token stop) {
  if (relist_) return List();
  return WatchOnce(stop);
}

void InformerBase::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    StepResult r = Step(stop);
    if (stop.stop_requested()) break;
    if (r.wait > Seconds(0) && !sleeper_->Sleep(r.wait, stop)) break;
  }
}

template <typename T>
Informer<T>::Informer(Transport* transport, const Clock* clock, Sleeper* sleeper, InformerOptions options)
    : InformerBase(transport, clock, sleeper, std::string(Info<T>().resource),
                   CollectionPath(Info<T>().group_version, Info<T>().resource,
                                  Info<T>().namespaced ? options.namespace_name : ""),
                   options) {}

template <typename T>
typename Informer<T>::View Informer<T>::Snapshot() const {
  std::lock_guard lock(mu_);
  return View{objects_, unreadable_, StateLocked()};
}

template <typename T>
std::optional<T> Informer<T>::Get(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return std::nullopt;
  return it->second;
}

template <typename T>
uint64_t Informer<T>::version() const {
  return State().version;
}

template <typename T>
void Informer<T>::Put(const json& object) {
  auto parsed = Parse(object, static_cast<T*>(nullptr));
  if (!parsed.ok()) {
    const std::string key = RawKey(object);
    objects_.erase(key);
    unreadable_[key] = std::string(Message(parsed.status()));
    return;
  }
  std::string key = Key(parsed->meta);
  unreadable_.erase(key);
  objects_.insert_or_assign(std::move(key), std::move(*parsed));
}

template <typename T>
void Informer<T>::ReplaceAll(const std::vector<json>& items, std::vector<std::string>* vanished) {
  std::map<std::string, T> before = std::move(objects_);
  objects_.clear();
  unreadable_.clear();
  for (const json& item : items) Put(item);
  for (const auto& [key, obj] : before) {
    if (!objects_.contains(key) && !unreadable_.contains(key)) vanished->push_back(key);
  }
}

template <typename T>
void Informer<T>::Apply(const json& object, bool deleted) {
  if (!deleted) {
    Put(object);
    return;
  }
  const std::string key = RawKey(object);
  objects_.erase(key);
  unreadable_.erase(key);
}

template class Informer<Pod>;
template class Informer<Node>;
template class Informer<PodDisruptionBudget>;
template class Informer<PriorityClass>;
template class Informer<PodGroup>;
template class Informer<VolcanoPodGroup>;

}  // namespace tide::backends::kube
