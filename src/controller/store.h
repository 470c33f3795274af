// The live controller's durable state: one SQLite file (state.db) that lets a
// controller killed at any instant (kill -9, power loss) restart and carry on
// without buying twice, leaking or forgetting an instance, or losing cost.
//
// The protocol the store supports:
//   * Every side effect on the world is an action with an idempotency key.
//     The controller calls BeginAction *before* it asks the provider or the
//     workload manager to act, passing the same key to the provider. After a
//     crash, PendingActions lists exactly the actions whose outcome is
//     unknown; the controller asks the provider about each key and then
//     commits or abandons it. A second BeginAction with the same key fails
//     with AlreadyExists, so a retried decision can never start a second buy.
//   * A create's outcome is recorded with CommitCreate, which marks the action
//     done and stores the instance in one transaction: there is no instant at
//     which the store says "done" without knowing the instance, or knows the
//     instance while the action still looks pending.
//   * An instance leaves the live set only through MarkInstanceDeleted, which
//     closes its billed interval and writes its ledger entry in the same
//     transaction, exactly once.
//
// Cost: the store keeps what was billed (BilledIntervals: each instance's
// tier and price per hour as bought, from its creation to its deletion, or
// open while live); cost::Ledger sums it (controller/live_cost.h), as it does
// for the simulator. The `ledger` table is a durable record of each gone
// instance's interval and cost, written at deletion; no total is read from it.
//
// Durability: WAL journal, synchronous=FULL (every commit is fsynced before
// the call returns), foreign keys on, busy_timeout 5000 ms. Every write
// method is one transaction: it happens entirely or not at all.
//
// History: RecordSample keeps what each successful loop saw (a sample) and
// each job's first start, for the live status page (GET /, docs/live.md);
// the caller bounds it with keep_since (the controller keeps 7 days).
//
// Times are stored as unix seconds; an instance's `deleted` of
// kInfiniteFuture is stored as NULL (live). Tiers are stored as
// model::TierName spells them ("reserved", "on-demand", "spot"). Jobs are
// known by the workload manager's job key, a string (a Slurm job id in
// decimal, a Kubernetes "namespace/name"); "" is no job.
//
// Errors: SQLite failures come back as "<path>: <sqlite message> (in <what>)"
// with code Unavailable for a locked/busy database or an I/O error (retry
// later), FailedPrecondition for a file that is not a tide store, is corrupt,
// or has a newer schema (an operator must act), NotFound if the file cannot
// be opened, and Internal otherwise. Bad arguments are InvalidArgument and
// name the record (action key, instance id).
//
// Thread-safety: none. A Store is used from one thread (the controller's
// loop); callers that share one must serialise every call. One process should
// own a state file at a time.
//
// The implementation is split by job: store.cc (opening), store_journal.cc
// (actions, instances, billed intervals), store_log.cc (decisions, job
// events, counters, values), store_history.cc (the status page's history),
// over controller/sqlite.h and controller/store_schema.h.
#ifndef TIDE_CONTROLLER_STORE_H_
#define TIDE_CONTROLLER_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/store_schema.h"
#include "core/status.h"
#include "core/time.h"
#include "model/cluster.h"

namespace tide::controller {

// One side effect on the world, keyed by its idempotency key.
struct ActionRecord {
  std::string key{};    // idempotency key, primary key; non-empty
  std::string kind{};   // "create", "delete", "drain", "undrain", "power_down", "signal", "requeue", "cancel"
  std::string node{};   // the node acted on ("" if none, e.g. a create before the node is named)
  std::string job{};    // the job acted on: the workload manager's job key ("" if none)
  std::string pool{};   // the node pool ("" if none)
  std::string state{};  // "pending", "done", "failed", "abandoned"
  Timestamp created{}, updated{};
  std::string detail{};  // free text: the provider's reply, the error, the instance id
};

// One cloud instance tide bought (or adopted), live or gone.
struct InstanceRecord {
  std::string id{};    // the provider's instance id, primary key; non-empty
  std::string node{};  // the workload manager's node name
  std::string pool{};
  model::Tier tier = model::Tier::kOnDemand;  // stored as model::TierName spells it
  double price_per_hour = 0;                  // currency units per hour, >= 0
  std::string idempotency_key{};              // the create action's key ("" for an adopted instance)
  Timestamp created{};                        // when billing started
  Timestamp deleted = kInfiniteFuture;        // when billing stopped; kInfiniteFuture while live
  std::string state{};                        // live: "booting", "ready", "releasing"; gone: "deleted", "lost"
};

// One entry of the decision log.
struct DecisionRecord {
  int64_t seq = 0;  // assigned by the store, increasing, never reused
  Timestamp at{};
  std::string kind{};
  std::string reason{};
  std::string detail{};
  bool dry_run = false;
};

// Something that happened to a job because of tide.
struct JobEvent {
  std::string job{};   // the workload manager's job key
  std::string kind{};  // "signalled", "requeued", "cancelled", "interrupted"
  Timestamp at{};
  double lost_gpu_seconds = 0;  // work thrown away by this event, GPU-seconds, >= 0
  std::string detail{};
};

// An amount by tier: money, GPUs, a price per hour.
struct ByTier {
  double reserved = 0, on_demand = 0, spot = 0;
  double total() const { return reserved + on_demand + spot; }
};
// Money spent, by tier, in the instances' price units.
using CostByTier = ByTier;

// What one successful loop saw, for the live status page's timeline
// (docs/live.md, "Live status page"). Levels hold from `at` until the next
// sample; the last two fields are running totals.
struct SampleRecord {
  Timestamp at{};           // one sample per second at most
  double demand_gpus = 0;   // GPUs asked for by pending and running jobs
  double running_gpus = 0;  // GPUs held by running jobs
  ByTier capacity_gpus{};   // GPUs of the instances tide pays for (booting included)
  // Utilization-weighted GPUs of running jobs; nullopt without a
  // utilization source (live.metrics).
  std::optional<double> util_gpus{};
  int64_t pending_jobs = 0;
  int64_t running_jobs = 0;
  // Pending jobs by priority class name; classes with none may be left out.
  std::vector<std::pair<std::string, int64_t>> pending_by_class{};
  ByTier cost_rate{};              // the price per hour of those instances, currency units
  int64_t spot_interruptions = 0;  // since the store began
  double lost_work_gpu_hours = 0;  // since the store began
};

// A job's first start, for the wait distribution.
struct JobStartRecord {
  std::string job{};  // the workload manager's job key
  Timestamp submit{};
  Timestamp start{};
  std::string priority_class{};  // its class name
};

// What was billed for one instance: from `start` (its creation) to `end`
// (its deletion; kInfiniteFuture while it is live), at the tier and price
// per hour it was bought at.
struct BilledInterval {
  std::string instance_id{};
  model::Tier tier = model::Tier::kOnDemand;
  double price_per_hour = 0;  // currency units per hour, >= 0
  Timestamp start{};
  Timestamp end = kInfiniteFuture;
};

class Store {
 public:
  // Opens (creating if absent) the store at `path` and its schema; ":memory:"
  // gives a private in-memory store for tests. Returns FailedPrecondition
  // naming the file if it is not a SQLite database, was written by a newer
  // tide (schema_version above this build's), or cannot be put in WAL mode.
  // The file is for tide's user only: created with mode 0600 (SQLite gives
  // its -wal, -shm and -journal files the same), and an existing file, or
  // one of those, that group or others may use is narrowed to 0600;
  // FailedPrecondition naming the file if that cannot be done.
  static Result<std::unique_ptr<Store>> Open(const std::string& path);
  // Opens an existing store at `path` for reading only, as a second
  // connection beside the writer's (WAL lets it read while the writer
  // writes): for the HTTP server's threads. It never creates or upgrades the
  // schema: NotFound if the file does not exist, FailedPrecondition naming
  // the file if its schema version is not this build's. Every write method
  // then fails.
  static Result<std::unique_ptr<Store>> OpenReadOnly(const std::string& path);

  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();  // closes the file; nothing is lost if this never runs

  // --- Actions ---------------------------------------------------------------

  // Records `a` as pending (a.state is ignored; updated = a.created). Call it
  // before acting. Returns AlreadyExists naming the key, and changes nothing,
  // if an action with a.key exists in any state; InvalidArgument for an empty
  // key or an unknown kind.
  Status BeginAction(const ActionRecord& a);
  // Moves pending action `key` to `state` ("done", "failed" or "abandoned")
  // with `detail`, updated = now. Finishing again with the same state is a
  // no-op; a different state is FailedPrecondition (an outcome is never
  // rewritten). A create cannot be finished "done" here (FailedPrecondition):
  // use CommitCreate so the instance is stored with it. NotFound if no such key.
  Status FinishAction(const std::string& key, const std::string& state, const std::string& detail, Timestamp now);
  // The action with `key`, or nullopt.
  Result<std::optional<ActionRecord>> GetAction(const std::string& key);
  // Every pending action, oldest first: after a restart, the ones to resolve.
  Result<std::vector<ActionRecord>> PendingActions();
  // The `limit` most recently created actions, newest first. limit >= 0.
  Result<std::vector<ActionRecord>> RecentActions(int limit);

  // --- Instances -------------------------------------------------------------

  // Inserts or updates live instance r.id. r must be live (state booting,
  // ready or releasing, deleted == kInfiniteFuture): leaving the live set is
  // MarkInstanceDeleted's job. FailedPrecondition if r.id was already deleted
  // (a gone instance is never revived); InvalidArgument for an empty id, an
  // unknown tier or state, or a negative price. Two live instances may share
  // a node name (the store never refuses to remember an instance).
  Status PutInstance(const InstanceRecord& r);
  // Sets instance `id` gone at `at` with `state` ("deleted" or "lost") and,
  // in the same transaction, appends its ledger entry (a durable record:
  // interval and price_per_hour * max(0, at - created) / 3600 s). If `id` is
  // already gone this is a no-op (the first time and state stand; one ledger
  // entry). NotFound if no such instance; InvalidArgument for a state other
  // than "deleted" or "lost" or an infinite `at`.
  Status MarkInstanceDeleted(const std::string& id, Timestamp at, const std::string& state);
  // Live instances (and gone ones too if include_deleted), oldest first.
  Result<std::vector<InstanceRecord>> Instances(bool include_deleted);
  // The live instance on `node` (the newest if there are several), or nullopt.
  Result<std::optional<InstanceRecord>> InstanceByNode(const std::string& node);
  // Records a successful create in one transaction: pending create action
  // `action_key` becomes done (detail "instance <id>", updated = now) and
  // live instance `r` is stored as by PutInstance. r.idempotency_key may be
  // empty (it is set to action_key) or must equal action_key. Committing
  // again with the same instance is a no-op. NotFound if no such action;
  // FailedPrecondition if it is not a create, or is failed/abandoned, or is
  // done with another instance.
  Status CommitCreate(const std::string& action_key, const InstanceRecord& r, Timestamp now);

  // --- Decision log, job events, counters, values ----------------------------

  // Appends `d` in one transaction, in order; each record's seq is ignored
  // and a new increasing one assigned.
  Status AppendDecisions(const std::vector<DecisionRecord>& d);
  // The `limit` newest decisions, newest (highest seq) first. limit >= 0.
  Result<std::vector<DecisionRecord>> RecentDecisions(int limit);
  // InvalidArgument for an unknown kind or a negative/non-finite lost work.
  Status AddJobEvent(const JobEvent& e);
  // The events of the job with key `job`, oldest first (by time, then
  // insertion).
  Result<std::vector<JobEvent>> JobEvents(const std::string& job);
  // Total lost_gpu_seconds over all job events (0 if none).
  Result<double> LostGpuSeconds();
  // How many job events have `kind`.
  Result<int64_t> CountJobEvents(const std::string& kind);
  // Adds `delta` (may be negative) to counter `name`, which starts at 0.
  Status AddCounter(const std::string& name, int64_t delta);
  // Counter `name`'s value; 0 if never added to.
  Result<int64_t> Counter(const std::string& name);
  // A small durable key/value map for the controller's own bookmarks.
  Status SetValue(const std::string& key, const std::string& value);
  Result<std::optional<std::string>> GetValue(const std::string& key);

  // --- History for the live status page ----------------------------------------

  // In one transaction: stores `sample` (a sample already stored at the same
  // second is kept and this one dropped), the job starts of `starts` not
  // yet stored (a job is known by its key and submit time, so a start is
  // recorded once however often it is given), and deletes the samples and
  // job starts (by start time) before `keep_since`. InvalidArgument for a
  // value that is negative or not finite, naming the sample's time or the
  // job.
  Status RecordSample(const SampleRecord& sample, const std::vector<JobStartRecord>& starts, Timestamp keep_since);
  // Samples at or after `since`, oldest first.
  Result<std::vector<SampleRecord>> Samples(Timestamp since);
  // The time of the newest sample; nullopt if there is none.
  Result<std::optional<Timestamp>> LatestSample();
  // Job starts at or after `since`, by start time.
  Result<std::vector<JobStartRecord>> JobStarts(Timestamp since);

  // --- Cost ------------------------------------------------------------------

  // Every instance's billed interval, live and gone, oldest first. Sum them
  // with cost::Ledger (LiveCost in controller/live_cost.h).
  Result<std::vector<BilledInterval>> BilledIntervals();

  // The schema version this build writes and reads (the versions are listed
  // in controller/store_schema.h); Open upgrades an older file in place.
  static constexpr int64_t kSchemaVersion = kStoreSchemaVersion;

 private:
  explicit Store(std::unique_ptr<SqliteConnection> db);

  // WAL, synchronous=FULL, foreign keys on (see Durability above).
  Status Configure();
  // The upsert behind PutInstance and CommitCreate; joins the caller's
  // transaction if one is open. `r` has been validated.
  Status PutInstanceRow(const InstanceRecord& r, std::string_view what);

  std::unique_ptr<SqliteConnection> db_;
};

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_STORE_H_
