// List+watch caches ("informers"), one per resource type: list (paged) once,
// then keep the view with a watch from the list's resourceVersion; never
// list everything on every loop. The rules (docs/design/kubernetes-client.md):
//   - ADDED/MODIFIED/DELETED update a map keyed by namespace/name (typed
//     objects; an object that cannot be read is kept out of the map and
//     listed in `unreadable`, naming the field);
//   - BOOKMARK advances the resourceVersion, nothing else;
//   - an ERROR event or HTTP 410 Gone: list again, replace the whole map,
//     and report the keys that vanished;
//   - any other failure: back off (initial, doubling, up to max) and resume
//     the watch from the last resourceVersion; a success resets the back-off;
//   - Synced() only when listed at least once, the last attempt succeeded,
//     and the last contact is within max_staleness, so the controller never
//     acts on a stale view.
//
// Threading: Step() and Run() from one thread at a time (Run on a background
// thread is the usual use); Snapshot(), Get(), State() and Synced() from any
// thread (a mutex guards the state). Unit tests drive Step() by hand with a
// fake transport and a ManualClock, and never sleep.
#ifndef TIDE_BACKENDS_KUBERNETES_KUBE_WATCH_H_
#define TIDE_BACKENDS_KUBERNETES_KUBE_WATCH_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "backends/kubernetes/kube_http.h"
#include "backends/kubernetes/kube_objects.h"
#include "core/status.h"
#include "core/time.h"
#include "nlohmann/json_fwd.hpp"

namespace tide::backends::kube {

// Waits, or returns early when stopped. Injected so tests never sleep.
class Sleeper {
 public:
  virtual ~Sleeper() = default;
  // False when `stop` was requested before `d` passed.
  virtual bool Sleep(Duration d, std::stop_token stop) = 0;
};

// Sleeps on a condition variable that a stop request wakes. Thread-safe.
class RealSleeper final : public Sleeper {
 public:
  bool Sleep(Duration d, std::stop_token stop) override;
};

struct InformerOptions {
  std::string namespace_name;  // empty: all namespaces
  std::string label_selector;
  int page_size = 500;  // the list's `limit`
  // The watch's timeoutSeconds: the server ends the stream after it and the
  // informer opens a new one from the last resourceVersion.
  Duration watch_timeout = Seconds(300);
  Duration initial_backoff = Seconds(1);
  Duration max_backoff = Seconds(30);
  // Synced() is false once the last contact (a list, a watch opened, an
  // event, a bookmark, a watch ended by the server) is older than this.
  // Must exceed watch_timeout, or a quiet but healthy watch reads as stale.
  Duration max_staleness = Seconds(360);
};

// What the informer knows of its own health.
struct SyncState {
  bool listed = false;   // a list has succeeded at least once
  bool healthy = false;  // the last list or watch attempt succeeded (or is open)
  std::string resource_version;
  Timestamp last_contact = kInfinitePast;
  Timestamp last_error_time = kInfinitePast;
  std::string last_error;  // "" when none yet
  int consecutive_failures = 0;
  int64_t lists = 0;    // how many lists have completed (1 + relists)
  uint64_t version = 0;  // bumped on every change to the map: copy only when it moved
};

// The outcome of one Step().
struct StepResult {
  enum class Kind { kListed, kRelisted, kWatched, kFailed };
  Kind kind = Kind::kFailed;
  Status error;               // for kFailed
  Duration wait = Seconds(0);  // how long to wait before the next Step (the back-off)
  std::vector<std::string> vanished;  // on a relist: keys that were in the map and are gone
  int events = 0;  // watch events applied (bookmarks not counted)
};

// The protocol, independent of the object type. Informer<T> keeps the map.
class InformerBase {
 public:
  // `what` names the resource in messages ("pods"); `collection` is its
  // path (CollectionPath). The transport, clock and sleeper must outlive it.
  InformerBase(Transport* transport, const Clock* clock, Sleeper* sleeper, std::string what, std::string collection,
               InformerOptions options);
  virtual ~InformerBase() = default;
  InformerBase(const InformerBase&) = delete;
  InformerBase& operator=(const InformerBase&) = delete;

  // One step: a (paged) list when none has succeeded or a relist is due,
  // else one watch, which blocks until the server ends it (timeoutSeconds),
  // a 410 or ERROR event, a failure, or `stop`.
  StepResult Step(std::stop_token stop = {});
  // Steps until `stop`, sleeping each StepResult::wait.
  void Run(std::stop_token stop);

  SyncState State() const;
  // Listed, healthy, and in contact within max_staleness of `clock->Now()`.
  bool Synced() const;
  const std::string& what() const { return what_; }

 protected:
  // Both are called with mu_ held.
  // Replaces every object with `items`; appends the keys that vanished.
  virtual void ReplaceAll(const std::vector<nlohmann::json>& items, std::vector<std::string>* vanished) = 0;
  // Applies one event: `deleted` removes, else adds or replaces.
  virtual void Apply(const nlohmann::json& object, bool deleted) = 0;

  // The state, for subclasses that hold mu_ already.
  const SyncState& StateLocked() const { return state_; }

  mutable std::mutex mu_;

 private:
  StepResult List();
  StepResult WatchOnce(std::stop_token stop);
  StepResult Fail(Status error);  // records it and computes the back-off
  void Contact();                 // mu_ held

  Transport* transport_;
  const Clock* clock_;
  Sleeper* sleeper_;
  std::string what_;
  std::string collection_;
  InformerOptions options_;
  bool relist_ = true;  // only touched by the stepping thread
  SyncState state_;     // guarded by mu_
};

// A list+watch cache of T (Pod, Node, PodDisruptionBudget, PriorityClass,
// PodGroup, VolcanoPodGroup), keyed by Key(meta).
template <typename T>
class Informer final : public InformerBase {
 public:
  struct View {
    std::map<std::string, T> objects;
    std::map<std::string, std::string> unreadable;  // key -> why it could not be read
    SyncState state;
  };

  Informer(Transport* transport, const Clock* clock, Sleeper* sleeper, InformerOptions options = {});

  // A copy of everything, under the lock. Compare state.version to skip
  // copies when nothing changed.
  View Snapshot() const;
  std::optional<T> Get(const std::string& key) const;
  uint64_t version() const;

 private:
  void ReplaceAll(const std::vector<nlohmann::json>& items, std::vector<std::string>* vanished) override;
  void Apply(const nlohmann::json& object, bool deleted) override;
  void Put(const nlohmann::json& object);

  std::map<std::string, T> objects_;
  std::map<std::string, std::string> unreadable_;
};

using PodInformer = Informer<Pod>;
using NodeInformer = Informer<Node>;
using PodDisruptionBudgetInformer = Informer<PodDisruptionBudget>;
using PriorityClassInformer = Informer<PriorityClass>;
using PodGroupInformer = Informer<PodGroup>;
using VolcanoPodGroupInformer = Informer<VolcanoPodGroup>;

}  // namespace tide::backends::kube

#endif  // TIDE_BACKENDS_KUBERNETES_KUBE_WATCH_H_
