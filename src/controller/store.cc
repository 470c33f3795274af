#include "controller/store.h"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "core/strings.h"

namespace tide::controller {
namespace {

constexpr std::array<std::string_view, 8> kActionKinds = {"create",     "delete", "drain",   "undrain",
                                                          "power_down", "signal", "requeue", "cancel"};
constexpr std::array<std::string_view, 3> kFinalActionStates = {"done", "failed", "abandoned"};
constexpr std::array<std::string_view, 3> kLiveInstanceStates = {"booting", "ready", "releasing"};
constexpr std::array<std::string_view, 2> kGoneInstanceStates = {"deleted", "lost"};
constexpr std::array<std::string_view, 3> kTiers = {"reserved", "on-demand", "spot"};
constexpr std::array<std::string_view, 4> kJobEventKinds = {"signalled", "requeued", "cancelled", "interrupted"};

// The schema of version 1, as it was written: a fresh store runs it and
// then every later step. The CHECK constraints repeat the argument
// validation below: they are the backstop that keeps a bug from writing a
// row the recovery logic cannot interpret.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE actions (
  key TEXT PRIMARY KEY NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('create', 'delete', 'drain', 'undrain', 'power_down', 'signal',
                                     'requeue', 'cancel')),
  node TEXT NOT NULL,
  job INTEGER NOT NULL,
  pool TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed', 'abandoned')),
  created INTEGER NOT NULL,
  updated INTEGER NOT NULL,
  detail TEXT NOT NULL
);
CREATE INDEX actions_pending ON actions (created) WHERE state = 'pending';
CREATE INDEX actions_created ON actions (created);

CREATE TABLE instances (
  id TEXT PRIMARY KEY NOT NULL,
  node TEXT NOT NULL,
  pool TEXT NOT NULL,
  tier TEXT NOT NULL CHECK (tier IN ('reserved', 'on-demand', 'spot')),
  price_per_hour REAL NOT NULL CHECK (price_per_hour >= 0),
  idempotency_key TEXT NOT NULL,
  created INTEGER NOT NULL,
  deleted INTEGER,  -- NULL while the instance is live
  state TEXT NOT NULL CHECK (state IN ('booting', 'ready', 'releasing', 'deleted', 'lost')),
  CHECK ((deleted IS NULL) = (state IN ('booting', 'ready', 'releasing')))
);
CREATE INDEX instances_live_node ON instances (node) WHERE deleted IS NULL;

-- One closed entry per gone instance: the primary key is what makes a
-- repeated MarkInstanceDeleted harmless.
CREATE TABLE ledger (
  instance_id TEXT PRIMARY KEY NOT NULL REFERENCES instances (id),
  tier TEXT NOT NULL,
  price_per_hour REAL NOT NULL,
  start_at INTEGER NOT NULL,
  end_at INTEGER NOT NULL,
  cost REAL NOT NULL CHECK (cost >= 0)
);

CREATE TABLE decisions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  at INTEGER NOT NULL,
  kind TEXT NOT NULL,
  reason TEXT NOT NULL,
  detail TEXT NOT NULL,
  dry_run INTEGER NOT NULL CHECK (dry_run IN (0, 1))
);

CREATE TABLE job_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('signalled', 'requeued', 'cancelled', 'interrupted')),
  at INTEGER NOT NULL,
  lost_gpu_seconds REAL NOT NULL CHECK (lost_gpu_seconds >= 0),
  detail TEXT NOT NULL
);
CREATE INDEX job_events_job ON job_events (job, at, id);
CREATE INDEX job_events_kind ON job_events (kind);

CREATE TABLE counters (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE kv (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;
)sql";

// Version 2: the live status page's history (RecordSample). IF NOT EXISTS
// makes the upgrade of a version 1 file safe to repeat.
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE IF NOT EXISTS samples (
  at INTEGER PRIMARY KEY NOT NULL,
  demand_gpus REAL NOT NULL CHECK (demand_gpus >= 0),
  running_gpus REAL NOT NULL CHECK (running_gpus >= 0),
  capacity_reserved REAL NOT NULL CHECK (capacity_reserved >= 0),
  capacity_on_demand REAL NOT NULL CHECK (capacity_on_demand >= 0),
  capacity_spot REAL NOT NULL CHECK (capacity_spot >= 0),
  util_gpus REAL CHECK (util_gpus >= 0),  -- NULL: no utilization source
  pending_jobs INTEGER NOT NULL CHECK (pending_jobs >= 0),
  running_jobs INTEGER NOT NULL CHECK (running_jobs >= 0),
  cost_rate_reserved REAL NOT NULL CHECK (cost_rate_reserved >= 0),
  cost_rate_on_demand REAL NOT NULL CHECK (cost_rate_on_demand >= 0),
  cost_rate_spot REAL NOT NULL CHECK (cost_rate_spot >= 0),
  spot_interruptions INTEGER NOT NULL CHECK (spot_interruptions >= 0),
  lost_work_gpu_hours REAL NOT NULL CHECK (lost_work_gpu_hours >= 0)
);
CREATE TABLE IF NOT EXISTS sample_pending (
  at INTEGER NOT NULL REFERENCES samples (at) ON DELETE CASCADE,
  class TEXT NOT NULL,
  jobs INTEGER NOT NULL CHECK (jobs >= 0),
  PRIMARY KEY (at, class)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS job_starts (
  job INTEGER NOT NULL,
  submit INTEGER NOT NULL,
  start INTEGER NOT NULL,
  class TEXT NOT NULL,
  PRIMARY KEY (job, submit)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS job_starts_start ON job_starts (start);
)sql";

template <size_t N>
bool OneOf(std::string_view v, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), v) != set.end();
}

template <size_t N>
Status NotOneOf(std::string_view thing, std::string_view field, std::string_view v,
                const std::array<std::string_view, N>& set) {
  return absl::InvalidArgumentError(StrCat(thing, ": ", field, " '", v, "' is not one of ", StrJoin(set, ", ")));
}

// What a caller should do about SQLite result `rc` (core/status.h).
absl::StatusCode CodeFor(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_PROTOCOL:
      return absl::StatusCode::kUnavailable;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return absl::StatusCode::kFailedPrecondition;
    case SQLITE_CANTOPEN:
      return absl::StatusCode::kNotFound;
    default:
      return absl::StatusCode::kInternal;
  }
}

Status ValidateLiveInstance(const InstanceRecord& r) {
  if (r.id.empty()) return absl::InvalidArgumentError("instance with an empty id");
  const std::string thing = StrCat("instance ", r.id);
  if (!OneOf(r.tier, kTiers)) return NotOneOf(thing, "tier", r.tier, kTiers);
  if (!OneOf(r.state, kLiveInstanceStates)) {
    return absl::InvalidArgumentError(StrCat(thing, ": state '", r.state, "' is not one of ",
                                             StrJoin(kLiveInstanceStates, ", "),
                                             " (an instance leaves the live set through MarkInstanceDeleted)"));
  }
  if (r.deleted != kInfiniteFuture) {
    return absl::InvalidArgumentError(
        StrCat(thing, ": a live instance has no deletion time (use MarkInstanceDeleted)"));
  }
  if (!std::isfinite(r.price_per_hour) || r.price_per_hour < 0) {
    return absl::InvalidArgumentError(StrCat(thing, ": price_per_hour ", r.price_per_hour, " is not >= 0"));
  }
  return OkStatus();
}

// The price of `seconds` of an instance at `price_per_hour`.
double CostOf(double price_per_hour, int64_t seconds) {
  return seconds <= 0 ? 0.0 : price_per_hour * static_cast<double>(seconds) / 3600.0;
}

Status AddToTier(CostByTier* cost, std::string_view tier, double amount) {
  if (tier == "reserved") {
    cost->reserved += amount;
  } else if (tier == "on-demand") {
    cost->on_demand += amount;
  } else if (tier == "spot") {
    cost->spot += amount;
  } else {
    return absl::InternalError(StrCat("state.db holds unknown tier '", tier, "'"));
  }
  return OkStatus();
}

}  // namespace

// A cached prepared statement, borrowed for one use. Binds are positional in
// call order; the destructor resets it (releasing any read lock it holds) and
// returns it to the cache.
class Store::Statement {
 public:
  Statement(const Store* store, CachedStatement* cached, std::string_view what)
      : store_(store), cached_(cached), what_(what) {}
  Statement(Statement&& o) noexcept
      : store_(o.store_),
        cached_(std::exchange(o.cached_, nullptr)),
        what_(std::move(o.what_)),
        next_(o.next_),
        bind_rc_(o.bind_rc_) {}
  Statement& operator=(Statement&&) = delete;
  ~Statement() {
    if (cached_ == nullptr) return;
    sqlite3_reset(cached_->stmt);
    sqlite3_clear_bindings(cached_->stmt);
    cached_->in_use = false;
  }

  Statement& BindInt(int64_t v) { return Check(sqlite3_bind_int64(stmt(), next_++, v)); }
  Statement& BindReal(double v) { return Check(sqlite3_bind_double(stmt(), next_++, v)); }
  Statement& BindTime(Timestamp t) { return BindInt(ToUnixSeconds(t)); }
  Statement& BindNull() { return Check(sqlite3_bind_null(stmt(), next_++)); }
  Statement& BindText(std::string_view v) {
    return Check(sqlite3_bind_text(stmt(), next_++, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }

  // True with a row to read, false when finished.
  Result<bool> Step() {
    if (bind_rc_ != SQLITE_OK) return store_->SqliteError(bind_rc_, what_);
    const int rc = sqlite3_step(stmt());
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return store_->SqliteError(rc, what_);
  }
  // Steps a statement that returns no rows to completion.
  Status Run() {
    TIDE_ASSIGN_OR_RETURN(const bool row, Step());
    if (row) return absl::InternalError(StrCat(store_->path_, ": unexpected row (in ", what_, ")"));
    return OkStatus();
  }

  bool IsNull(int col) { return sqlite3_column_type(stmt(), col) == SQLITE_NULL; }
  int64_t Int(int col) { return sqlite3_column_int64(stmt(), col); }
  double Real(int col) { return sqlite3_column_double(stmt(), col); }
  Timestamp Time(int col) { return FromUnixSeconds(Int(col)); }
  std::string Text(int col) {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt(), col));
    return p == nullptr ? std::string() : std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt(), col)));
  }

 private:
  sqlite3_stmt* stmt() const { return cached_->stmt; }
  Statement& Check(int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
    return *this;
  }

  const Store* store_;
  CachedStatement* cached_;
  std::string what_;
  int next_ = 1;
  int bind_rc_ = SQLITE_OK;
};

// BEGIN IMMEDIATE takes the write lock up front, so a transaction that has
// begun cannot later fail for lack of it.
class Store::Transaction {
 public:
  static Result<Transaction> Begin(Store* store, std::string_view what) {
    TIDE_ASSIGN_OR_RETURN(auto begin, store->Prepare("BEGIN IMMEDIATE", what));
    TIDE_RETURN_IF_ERROR(begin.Run());
    return Transaction(store, what);
  }
  Transaction(Transaction&& o) noexcept
      : store_(o.store_), what_(std::move(o.what_)), open_(std::exchange(o.open_, false)) {}
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction() {
    // SQLite may already have rolled back on its own (I/O error, disk full).
    if (!open_ || sqlite3_get_autocommit(store_->db_) != 0) return;
    auto rollback = store_->Prepare("ROLLBACK", what_);
    if (rollback.ok()) (void)rollback->Run();
  }

  Status Commit() {
    TIDE_ASSIGN_OR_RETURN(auto commit, store_->Prepare("COMMIT", what_));
    TIDE_RETURN_IF_ERROR(commit.Run());
    open_ = false;
    return OkStatus();
  }

 private:
  Transaction(Store* store, std::string_view what) : store_(store), what_(what), open_(true) {}

  Store* store_;
  std::string what_;
  bool open_;
};

namespace {

// Reads a row of "SELECT key, kind, node, job, pool, state, created, updated, detail".
ActionRecord ReadAction(auto& s) {
  ActionRecord a;
  a.key = s.Text(0);
  a.kind = s.Text(1);
  a.node = s.Text(2);
  a.job = s.Int(3);
  a.pool = s.Text(4);
  a.state = s.Text(5);
  a.created = s.Time(6);
  a.updated = s.Time(7);
  a.detail = s.Text(8);
  return a;
}

// Reads a row of "SELECT id, node, pool, tier, price_per_hour, idempotency_key,
// created, deleted, state".
InstanceRecord ReadInstance(auto& s) {
  InstanceRecord r;
  r.id = s.Text(0);
  r.node = s.Text(1);
  r.pool = s.Text(2);
  r.tier = s.Text(3);
  r.price_per_hour = s.Real(4);
  r.idempotency_key = s.Text(5);
  r.created = s.Time(6);
  r.deleted = s.IsNull(7) ? kInfiniteFuture : s.Time(7);
  r.state = s.Text(8);
  return r;
}

}  // namespace

Store::Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

Store::~Store() {
  for (auto& [sql, cached] : statements_) sqlite3_finalize(cached.stmt);
  sqlite3_close_v2(db_);
}

namespace {

// A connection to `path` opened with `flags`; the error names the file.
Result<sqlite3*> Connect(const std::string& path, int flags) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc == SQLITE_OK) return db;
  Status error(CodeFor(rc), StrCat(path, ": ", db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc),
                                   " (in opening the state store)"));
  sqlite3_close_v2(db);
  return error;
}

}  // namespace

Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  TIDE_ASSIGN_OR_RETURN(sqlite3* db, Connect(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
  std::unique_ptr<Store> store(new Store(db, path));
  TIDE_RETURN_IF_ERROR(store->Configure());
  TIDE_RETURN_IF_ERROR(store->Migrate());
  return store;
}

Result<std::unique_ptr<Store>> Store::OpenReadOnly(const std::string& path) {
  TIDE_ASSIGN_OR_RETURN(sqlite3* db, Connect(path, SQLITE_OPEN_READONLY));
  std::unique_ptr<Store> store(new Store(db, path));
  sqlite3_extended_result_codes(db, 1);
  if (const int rc = sqlite3_busy_timeout(db, 5000); rc != SQLITE_OK) {
    return store->SqliteError(rc, "setting busy_timeout");
  }
  TIDE_RETURN_IF_ERROR(store->CheckVersion());
  return store;
}

Status Store::CheckVersion() {
  auto s = Prepare("SELECT MAX(version) FROM schema_version", "reading schema_version");
  if (!s.ok()) {
    if (s.status().code() != absl::StatusCode::kInternal) return s.status();
    return absl::FailedPreconditionError(StrCat(path_, ": not a tide state file (no schema_version)"));
  }
  TIDE_ASSIGN_OR_RETURN(const bool row, s->Step());
  const std::optional<int64_t> version = row && !s->IsNull(0) ? std::optional<int64_t>(s->Int(0)) : std::nullopt;
  if (version != kSchemaVersion) {
    return absl::FailedPreconditionError(
        StrCat(path_, ": schema version ", version ? StrCat(*version) : std::string("none"), "; this tide reads ",
               kSchemaVersion, " (the controller upgrades the file when it opens it)"));
  }
  return OkStatus();
}

Status Store::Configure() {
  sqlite3_extended_result_codes(db_, 1);
  if (const int rc = sqlite3_busy_timeout(db_, 5000); rc != SQLITE_OK) return SqliteError(rc, "setting busy_timeout");
  {
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("PRAGMA journal_mode = WAL", "setting journal_mode"));
    TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
    const std::string mode = row ? s.Text(0) : "";
    // An in-memory database reports "memory"; it has no file to protect.
    if (mode != "wal" && mode != "memory") {
      return absl::FailedPreconditionError(
          StrCat(path_, ": cannot use WAL journal mode (got '", mode, "'); put the state file on a local disk"));
    }
  }
  {
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("PRAGMA synchronous = FULL", "setting synchronous"));
    TIDE_RETURN_IF_ERROR(s.Run());
  }
  {
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("PRAGMA foreign_keys = ON", "setting foreign_keys"));
    TIDE_RETURN_IF_ERROR(s.Run());
  }
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("PRAGMA foreign_keys", "reading foreign_keys"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
  if (!row || s.Int(0) != 1) {
    return absl::FailedPreconditionError(StrCat(path_, ": this SQLite cannot enforce foreign keys"));
  }
  return OkStatus();
}

Status Store::Migrate() {
  TIDE_ASSIGN_OR_RETURN(auto txn, Transaction::Begin(this, "creating the schema"));
  TIDE_RETURN_IF_ERROR(
      ExecScript("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)", "creating schema_version"));
  std::optional<int64_t> version;
  {
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT MAX(version) FROM schema_version", "reading schema_version"));
    TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (row && !s.IsNull(0)) version = s.Int(0);
  }
  if (!version.has_value()) {
    TIDE_RETURN_IF_ERROR(ExecScript(kSchemaV1, "creating the schema"));
    TIDE_RETURN_IF_ERROR(ExecScript(kSchemaV2, "creating the schema (version 2)"));
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("INSERT INTO schema_version (version) VALUES (?)", "writing schema_version"));
    TIDE_RETURN_IF_ERROR(s.BindInt(kSchemaVersion).Run());
  } else if (*version > kSchemaVersion) {
    return absl::FailedPreconditionError(StrCat(path_, ": schema version ", *version,
                                                " was written by a newer tide; this one reads version ", kSchemaVersion,
                                                ". Upgrade tide or use another state file"));
  } else if (*version < 1) {
    // Version 1 is the first; anything lower was never written by tide.
    return absl::FailedPreconditionError(
        StrCat(path_, ": unknown schema version ", *version, "; this is not a tide state file"));
  } else if (*version < kSchemaVersion) {
    // 1 -> 2 adds tables and changes none: in the same transaction as the
    // version, so a crash leaves the file at version 1 or 2, never between.
    TIDE_RETURN_IF_ERROR(ExecScript(kSchemaV2, "upgrading the schema to version 2"));
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("UPDATE schema_version SET version = ?", "writing schema_version"));
    TIDE_RETURN_IF_ERROR(s.BindInt(kSchemaVersion).Run());
  }
  return txn.Commit();
}

Status Store::SqliteError(int rc, std::string_view what) const {
  return Status(CodeFor(rc), StrCat(path_, ": ", sqlite3_errmsg(db_), " (in ", what, ")"));
}

Result<Store::Statement> Store::Prepare(const char* sql, std::string_view what) {
  auto [it, inserted] = statements_.try_emplace(sql);
  CachedStatement& cached = it->second;
  if (inserted) {
    const int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &cached.stmt, nullptr);
    if (rc != SQLITE_OK) {
      Status error = SqliteError(rc, what);
      statements_.erase(it);
      return error;
    }
  }
  if (cached.in_use) {
    return absl::InternalError(StrCat(path_, ": statement already in use (in ", what, "): ", sql));
  }
  cached.in_use = true;
  return Statement(this, &cached, what);
}

Status Store::ExecScript(const char* sql, std::string_view what) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return OkStatus();
  Status error(CodeFor(rc), StrCat(path_, ": ", message != nullptr ? message : sqlite3_errstr(rc), " (in ", what, ")"));
  sqlite3_free(message);
  return error;
}

// --- Actions -----------------------------------------------------------------

Status Store::BeginAction(const ActionRecord& a) {
  if (a.key.empty()) return absl::InvalidArgumentError("action with an empty idempotency key");
  if (!OneOf(a.kind, kActionKinds)) return NotOneOf(StrCat("action ", a.key), "kind", a.kind, kActionKinds);
  {
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("INSERT INTO actions (key, kind, node, job, pool, state, created, updated, "
                                          "detail) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?) "
                                          "ON CONFLICT (key) DO NOTHING",
                                          "BeginAction"));
    TIDE_RETURN_IF_ERROR(s.BindText(a.key)
                             .BindText(a.kind)
                             .BindText(a.node)
                             .BindInt(a.job)
                             .BindText(a.pool)
                             .BindTime(a.created)
                             .BindTime(a.created)
                             .BindText(a.detail)
                             .Run());
  }
  if (sqlite3_changes(db_) == 1) return OkStatus();
  TIDE_ASSIGN_OR_RETURN(auto existing, GetAction(a.key));
  return absl::AlreadyExistsError(
      StrCat("action ", a.key, " already exists",
             existing.has_value() ? StrCat(" (", existing->kind, ", ", existing->state, ")") : std::string()));
}

Status Store::FinishAction(const std::string& key, const std::string& state, const std::string& detail, Timestamp now) {
  if (!OneOf(state, kFinalActionStates))
    return NotOneOf(StrCat("action ", key), "final state", state, kFinalActionStates);
  TIDE_ASSIGN_OR_RETURN(auto txn, Transaction::Begin(this, "FinishAction"));
  std::string kind, current;
  {
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT kind, state FROM actions WHERE key = ?", "FinishAction"));
    TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(key).Step());
    if (!row) return absl::NotFoundError(StrCat("action ", key, " not found"));
    kind = s.Text(0);
    current = s.Text(1);
  }
  if (current == state) return OkStatus();
  if (current != "pending") {
    return absl::FailedPreconditionError(
        StrCat("action ", key, " is already ", current, "; not changing it to ", state));
  }
  if (kind == "create" && state == "done") {
    return absl::FailedPreconditionError(StrCat("action ", key, " is a create; record its instance with CommitCreate"));
  }
  {
    TIDE_ASSIGN_OR_RETURN(
        auto s, Prepare("UPDATE actions SET state = ?, detail = ?, updated = ? WHERE key = ?", "FinishAction"));
    TIDE_RETURN_IF_ERROR(s.BindText(state).BindText(detail).BindTime(now).BindText(key).Run());
  }
  return txn.Commit();
}

Result<std::optional<ActionRecord>> Store::GetAction(const std::string& key) {
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT key, kind, node, job, pool, state, created, updated, detail "
                                        "FROM actions WHERE key = ?",
                                        "GetAction"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(key).Step());
  if (!row) return std::optional<ActionRecord>();
  return std::optional<ActionRecord>(ReadAction(s));
}

Result<std::vector<ActionRecord>> Store::PendingActions() {
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT key, kind, node, job, pool, state, created, updated, detail "
                                        "FROM actions WHERE state = 'pending' ORDER BY created, rowid",
                                        "PendingActions"));
  std::vector<ActionRecord> out;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    out.push_back(ReadAction(s));
  }
  return out;
}

Result<std::vector<ActionRecord>> Store::RecentActions(int limit) {
  if (limit < 0) return absl::InvalidArgumentError(StrCat("RecentActions: limit ", limit, " is negative"));
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT key, kind, node, job, pool, state, created, updated, detail "
                                        "FROM actions ORDER BY created DESC, rowid DESC LIMIT ?",
                                        "RecentActions"));
  s.BindInt(limit);
  std::vector<ActionRecord> out;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    out.push_back(ReadAction(s));
  }
  return out;
}

// --- Instances ---------------------------------------------------------------

Status Store::PutInstanceRow(const InstanceRecord& r, std::string_view what) {
  {
    // The WHERE keeps a gone instance gone: its ledger entry is closed, and
    // reviving the row would count its cost twice.
    TIDE_ASSIGN_OR_RETURN(
        auto s, Prepare("INSERT INTO instances (id, node, pool, tier, price_per_hour, idempotency_key, created, "
                        "deleted, state) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?) "
                        "ON CONFLICT (id) DO UPDATE SET node = excluded.node, pool = excluded.pool, "
                        "tier = excluded.tier, price_per_hour = excluded.price_per_hour, "
                        "idempotency_key = excluded.idempotency_key, created = excluded.created, "
                        "state = excluded.state WHERE instances.deleted IS NULL",
                        what));
    TIDE_RETURN_IF_ERROR(s.BindText(r.id)
                             .BindText(r.node)
                             .BindText(r.pool)
                             .BindText(r.tier)
                             .BindReal(r.price_per_hour)
                             .BindText(r.idempotency_key)
                             .BindTime(r.created)
                             .BindText(r.state)
                             .Run());
  }
  if (sqlite3_changes(db_) == 1) return OkStatus();
  return absl::FailedPreconditionError(
      StrCat("instance ", r.id, " is already deleted or lost; a gone instance is not brought back"));
}

Status Store::PutInstance(const InstanceRecord& r) {
  TIDE_RETURN_IF_ERROR(ValidateLiveInstance(r));
  return PutInstanceRow(r, "PutInstance");
}

Status Store::MarkInstanceDeleted(const std::string& id, Timestamp at, const std::string& state) {
  if (!OneOf(state, kGoneInstanceStates)) return NotOneOf(StrCat("instance ", id), "state", state, kGoneInstanceStates);
  if (at >= kInfiniteFuture) {
    return absl::InvalidArgumentError(StrCat("instance ", id, ": deletion time is not finite"));
  }
  TIDE_ASSIGN_OR_RETURN(auto txn, Transaction::Begin(this, "MarkInstanceDeleted"));
  std::string tier;
  double price = 0;
  Timestamp created{};
  {
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT tier, price_per_hour, created, deleted FROM instances WHERE id = ?",
                                          "MarkInstanceDeleted"));
    TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(id).Step());
    if (!row) return absl::NotFoundError(StrCat("instance ", id, " not found"));
    if (!s.IsNull(3)) return OkStatus();  // already gone: the first deletion stands
    tier = s.Text(0);
    price = s.Real(1);
    created = s.Time(2);
  }
  {
    TIDE_ASSIGN_OR_RETURN(auto s,
                          Prepare("UPDATE instances SET deleted = ?, state = ? WHERE id = ?", "MarkInstanceDeleted"));
    TIDE_RETURN_IF_ERROR(s.BindTime(at).BindText(state).BindText(id).Run());
  }
  {
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("INSERT INTO ledger (instance_id, tier, price_per_hour, start_at, end_at, "
                                          "cost) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (instance_id) DO NOTHING",
                                          "MarkInstanceDeleted"));
    TIDE_RETURN_IF_ERROR(s.BindText(id)
                             .BindText(tier)
                             .BindReal(price)
                             .BindTime(created)
                             .BindTime(at)
                             .BindReal(CostOf(price, (at - created).count()))
                             .Run());
  }
  return txn.Commit();
}

Result<std::vector<InstanceRecord>> Store::Instances(bool include_deleted) {
  constexpr const char* kAll =
      "SELECT id, node, pool, tier, price_per_hour, idempotency_key, created, deleted, state FROM instances "
      "ORDER BY created, rowid";
  constexpr const char* kLive =
      "SELECT id, node, pool, tier, price_per_hour, idempotency_key, created, deleted, state FROM instances "
      "WHERE deleted IS NULL ORDER BY created, rowid";
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare(include_deleted ? kAll : kLive, "Instances"));
  std::vector<InstanceRecord> out;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    out.push_back(ReadInstance(s));
  }
  return out;
}

Result<std::optional<InstanceRecord>> Store::InstanceByNode(const std::string& node) {
  TIDE_ASSIGN_OR_RETURN(
      auto s, Prepare("SELECT id, node, pool, tier, price_per_hour, idempotency_key, created, deleted, state "
                      "FROM instances WHERE node = ? AND deleted IS NULL ORDER BY created DESC, rowid DESC LIMIT 1",
                      "InstanceByNode"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(node).Step());
  if (!row) return std::optional<InstanceRecord>();
  return std::optional<InstanceRecord>(ReadInstance(s));
}

Status Store::CommitCreate(const std::string& action_key, const InstanceRecord& r, Timestamp now) {
  InstanceRecord rec = r;
  if (rec.idempotency_key.empty()) rec.idempotency_key = action_key;
  if (rec.idempotency_key != action_key) {
    return absl::InvalidArgumentError(StrCat("instance ", r.id, ": idempotency key ", r.idempotency_key,
                                             " does not match create action ", action_key));
  }
  TIDE_RETURN_IF_ERROR(ValidateLiveInstance(rec));
  TIDE_ASSIGN_OR_RETURN(auto txn, Transaction::Begin(this, "CommitCreate"));
  std::string kind, state;
  {
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT kind, state FROM actions WHERE key = ?", "CommitCreate"));
    TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(action_key).Step());
    if (!row) return absl::NotFoundError(StrCat("action ", action_key, " not found"));
    kind = s.Text(0);
    state = s.Text(1);
  }
  if (kind != "create") {
    return absl::FailedPreconditionError(StrCat("action ", action_key, " is a ", kind, ", not a create"));
  }
  if (state == "done") {
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT idempotency_key FROM instances WHERE id = ?", "CommitCreate"));
    TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(rec.id).Step());
    if (row && s.Text(0) == action_key) return OkStatus();  // committed before
    return absl::FailedPreconditionError(
        StrCat("action ", action_key, " is already done with another instance than ", rec.id));
  }
  if (state != "pending") {
    return absl::FailedPreconditionError(
        StrCat("action ", action_key, " is ", state, "; record instance ", rec.id, " with PutInstance to adopt it"));
  }
  TIDE_RETURN_IF_ERROR(PutInstanceRow(rec, "CommitCreate"));
  {
    TIDE_ASSIGN_OR_RETURN(
        auto s, Prepare("UPDATE actions SET state = 'done', detail = ?, updated = ? WHERE key = ?", "CommitCreate"));
    TIDE_RETURN_IF_ERROR(s.BindText(StrCat("instance ", rec.id)).BindTime(now).BindText(action_key).Run());
  }
  return txn.Commit();
}

// --- Decisions, job events, counters, values ----------------------------------

Status Store::AppendDecisions(const std::vector<DecisionRecord>& d) {
  if (d.empty()) return OkStatus();
  TIDE_ASSIGN_OR_RETURN(auto txn, Transaction::Begin(this, "AppendDecisions"));
  for (const DecisionRecord& r : d) {
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("INSERT INTO decisions (at, kind, reason, detail, dry_run) "
                                          "VALUES (?, ?, ?, ?, ?)",
                                          "AppendDecisions"));
    TIDE_RETURN_IF_ERROR(
        s.BindTime(r.at).BindText(r.kind).BindText(r.reason).BindText(r.detail).BindInt(r.dry_run ? 1 : 0).Run());
  }
  return txn.Commit();
}

Result<std::vector<DecisionRecord>> Store::RecentDecisions(int limit) {
  if (limit < 0) return absl::InvalidArgumentError(StrCat("RecentDecisions: limit ", limit, " is negative"));
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT seq, at, kind, reason, detail, dry_run FROM decisions "
                                        "ORDER BY seq DESC LIMIT ?",
                                        "RecentDecisions"));
  s.BindInt(limit);
  std::vector<DecisionRecord> out;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    out.push_back(DecisionRecord{.seq = s.Int(0),
                                 .at = s.Time(1),
                                 .kind = s.Text(2),
                                 .reason = s.Text(3),
                                 .detail = s.Text(4),
                                 .dry_run = s.Int(5) != 0});
  }
  return out;
}

Status Store::AddJobEvent(const JobEvent& e) {
  const std::string thing = StrCat("job ", e.job, " event");
  if (!OneOf(e.kind, kJobEventKinds)) return NotOneOf(thing, "kind", e.kind, kJobEventKinds);
  if (!std::isfinite(e.lost_gpu_seconds) || e.lost_gpu_seconds < 0) {
    return absl::InvalidArgumentError(StrCat(thing, ": lost_gpu_seconds ", e.lost_gpu_seconds, " is not >= 0"));
  }
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("INSERT INTO job_events (job, kind, at, lost_gpu_seconds, detail) "
                                        "VALUES (?, ?, ?, ?, ?)",
                                        "AddJobEvent"));
  return s.BindInt(e.job).BindText(e.kind).BindTime(e.at).BindReal(e.lost_gpu_seconds).BindText(e.detail).Run();
}

Result<std::vector<JobEvent>> Store::JobEvents(int64_t job) {
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT job, kind, at, lost_gpu_seconds, detail FROM job_events "
                                        "WHERE job = ? ORDER BY at, id",
                                        "JobEvents"));
  s.BindInt(job);
  std::vector<JobEvent> out;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    out.push_back(JobEvent{
        .job = s.Int(0), .kind = s.Text(1), .at = s.Time(2), .lost_gpu_seconds = s.Real(3), .detail = s.Text(4)});
  }
  return out;
}

Result<double> Store::LostGpuSeconds() {
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT TOTAL(lost_gpu_seconds) FROM job_events", "LostGpuSeconds"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
  return row ? s.Real(0) : 0.0;
}

Result<int64_t> Store::CountJobEvents(const std::string& kind) {
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT COUNT(*) FROM job_events WHERE kind = ?", "CountJobEvents"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(kind).Step());
  return row ? s.Int(0) : int64_t{0};
}

Status Store::AddCounter(const std::string& name, int64_t delta) {
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("INSERT INTO counters (name, value) VALUES (?, ?) "
                                        "ON CONFLICT (name) DO UPDATE SET value = value + excluded.value",
                                        "AddCounter"));
  return s.BindText(name).BindInt(delta).Run();
}

Result<int64_t> Store::Counter(const std::string& name) {
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT value FROM counters WHERE name = ?", "Counter"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(name).Step());
  return row ? s.Int(0) : int64_t{0};
}

Status Store::SetValue(const std::string& key, const std::string& value) {
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("INSERT INTO kv (key, value) VALUES (?, ?) "
                                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                                        "SetValue"));
  return s.BindText(key).BindText(value).Run();
}

Result<std::optional<std::string>> Store::GetValue(const std::string& key) {
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT value FROM kv WHERE key = ?", "GetValue"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.BindText(key).Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(s.Text(0));
}

// --- History for the live status page ------------------------------------------

namespace {

// InvalidArgument naming `thing` unless every value is finite and >= 0.
Status NonNegative(std::string_view thing, std::initializer_list<std::pair<std::string_view, double>> values) {
  for (const auto& [field, v] : values) {
    if (!std::isfinite(v) || v < 0) {
      return absl::InvalidArgumentError(StrCat(thing, ": ", field, " ", v, " is not >= 0"));
    }
  }
  return OkStatus();
}

Status ValidateSample(const SampleRecord& r) {
  const std::string thing = StrCat("sample at ", FormatTimestamp(r.at));
  TIDE_RETURN_IF_ERROR(NonNegative(thing, {{"demand_gpus", r.demand_gpus},
                                           {"running_gpus", r.running_gpus},
                                           {"capacity_gpus.reserved", r.capacity_gpus.reserved},
                                           {"capacity_gpus.on-demand", r.capacity_gpus.on_demand},
                                           {"capacity_gpus.spot", r.capacity_gpus.spot},
                                           {"util_gpus", r.util_gpus.value_or(0)},
                                           {"pending_jobs", static_cast<double>(r.pending_jobs)},
                                           {"running_jobs", static_cast<double>(r.running_jobs)},
                                           {"cost_rate.reserved", r.cost_rate.reserved},
                                           {"cost_rate.on-demand", r.cost_rate.on_demand},
                                           {"cost_rate.spot", r.cost_rate.spot},
                                           {"spot_interruptions", static_cast<double>(r.spot_interruptions)},
                                           {"lost_work_gpu_hours", r.lost_work_gpu_hours}}));
  for (const auto& [name, jobs] : r.pending_by_class) {
    TIDE_RETURN_IF_ERROR(NonNegative(thing, {{StrCat("pending_jobs/", name), static_cast<double>(jobs)}}));
  }
  return OkStatus();
}

}  // namespace

Status Store::RecordSample(const SampleRecord& r, const std::vector<JobStartRecord>& starts, Timestamp keep_since) {
  TIDE_RETURN_IF_ERROR(ValidateSample(r));
  TIDE_ASSIGN_OR_RETURN(auto txn, Transaction::Begin(this, "RecordSample"));
  bool fresh = false;
  {
    TIDE_ASSIGN_OR_RETURN(
        auto s, Prepare("INSERT INTO samples (at, demand_gpus, running_gpus, capacity_reserved, capacity_on_demand, "
                        "capacity_spot, util_gpus, pending_jobs, running_jobs, cost_rate_reserved, "
                        "cost_rate_on_demand, cost_rate_spot, spot_interruptions, lost_work_gpu_hours) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (at) DO NOTHING",
                        "RecordSample"));
    s.BindTime(r.at)
        .BindReal(r.demand_gpus)
        .BindReal(r.running_gpus)
        .BindReal(r.capacity_gpus.reserved)
        .BindReal(r.capacity_gpus.on_demand)
        .BindReal(r.capacity_gpus.spot);
    if (r.util_gpus.has_value()) {
      s.BindReal(*r.util_gpus);
    } else {
      s.BindNull();
    }
    TIDE_RETURN_IF_ERROR(s.BindInt(r.pending_jobs)
                             .BindInt(r.running_jobs)
                             .BindReal(r.cost_rate.reserved)
                             .BindReal(r.cost_rate.on_demand)
                             .BindReal(r.cost_rate.spot)
                             .BindInt(r.spot_interruptions)
                             .BindReal(r.lost_work_gpu_hours)
                             .Run());
    fresh = sqlite3_changes(db_) == 1;
  }
  // A sample already stored at this second keeps its own counts.
  for (size_t i = 0; fresh && i < r.pending_by_class.size(); ++i) {
    const auto& [name, jobs] = r.pending_by_class[i];
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("INSERT INTO sample_pending (at, class, jobs) VALUES (?, ?, ?) "
                                          "ON CONFLICT (at, class) DO UPDATE SET jobs = jobs + excluded.jobs",
                                          "RecordSample"));
    TIDE_RETURN_IF_ERROR(s.BindTime(r.at).BindText(name).BindInt(jobs).Run());
  }
  for (const JobStartRecord& j : starts) {
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("INSERT INTO job_starts (job, submit, start, class) VALUES (?, ?, ?, ?) "
                                          "ON CONFLICT (job, submit) DO NOTHING",
                                          "RecordSample"));
    TIDE_RETURN_IF_ERROR(s.BindInt(j.job).BindTime(j.submit).BindTime(j.start).BindText(j.priority_class).Run());
  }
  {
    // sample_pending goes with its samples (ON DELETE CASCADE).
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("DELETE FROM samples WHERE at < ?", "RecordSample"));
    TIDE_RETURN_IF_ERROR(s.BindTime(keep_since).Run());
  }
  {
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("DELETE FROM job_starts WHERE start < ?", "RecordSample"));
    TIDE_RETURN_IF_ERROR(s.BindTime(keep_since).Run());
  }
  return txn.Commit();
}

Result<std::vector<SampleRecord>> Store::Samples(Timestamp since) {
  std::vector<SampleRecord> out;
  {
    TIDE_ASSIGN_OR_RETURN(
        auto s, Prepare("SELECT at, demand_gpus, running_gpus, capacity_reserved, capacity_on_demand, capacity_spot, "
                        "util_gpus, pending_jobs, running_jobs, cost_rate_reserved, cost_rate_on_demand, "
                        "cost_rate_spot, spot_interruptions, lost_work_gpu_hours FROM samples WHERE at >= ? "
                        "ORDER BY at",
                        "Samples"));
    s.BindTime(since);
    while (true) {
      TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
      if (!row) break;
      SampleRecord r;
      r.at = s.Time(0);
      r.demand_gpus = s.Real(1);
      r.running_gpus = s.Real(2);
      r.capacity_gpus = {s.Real(3), s.Real(4), s.Real(5)};
      if (!s.IsNull(6)) r.util_gpus = s.Real(6);
      r.pending_jobs = s.Int(7);
      r.running_jobs = s.Int(8);
      r.cost_rate = {s.Real(9), s.Real(10), s.Real(11)};
      r.spot_interruptions = s.Int(12);
      r.lost_work_gpu_hours = s.Real(13);
      out.push_back(std::move(r));
    }
  }
  // Both lists are in time order: one pass matches them up.
  TIDE_ASSIGN_OR_RETURN(
      auto s, Prepare("SELECT at, class, jobs FROM sample_pending WHERE at >= ? ORDER BY at, class", "Samples"));
  s.BindTime(since);
  size_t i = 0;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    const Timestamp at = s.Time(0);
    while (i < out.size() && out[i].at < at) ++i;
    if (i == out.size()) break;
    if (out[i].at == at) out[i].pending_by_class.emplace_back(s.Text(1), s.Int(2));
  }
  return out;
}

Result<std::optional<Timestamp>> Store::LatestSample() {
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT MAX(at) FROM samples", "LatestSample"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
  if (!row || s.IsNull(0)) return std::optional<Timestamp>();
  return std::optional<Timestamp>(s.Time(0));
}

Result<std::vector<JobStartRecord>> Store::JobStarts(Timestamp since) {
  TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT job, submit, start, class FROM job_starts WHERE start >= ? "
                                        "ORDER BY start, job",
                                        "JobStarts"));
  s.BindTime(since);
  std::vector<JobStartRecord> out;
  while (true) {
    TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
    if (!row) break;
    out.push_back(
        JobStartRecord{.job = s.Int(0), .submit = s.Time(1), .start = s.Time(2), .priority_class = s.Text(3)});
  }
  return out;
}

// --- Cost ----------------------------------------------------------------------

Result<CostByTier> Store::Cost(Timestamp now) {
  // One connection, one thread: nothing can be deleted between the two
  // reads, so each instance is counted exactly once (ledger or live).
  CostByTier cost;
  {
    TIDE_ASSIGN_OR_RETURN(auto s, Prepare("SELECT tier, TOTAL(cost) FROM ledger GROUP BY tier", "Cost"));
    while (true) {
      TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
      if (!row) break;
      TIDE_RETURN_IF_ERROR(AddToTier(&cost, s.Text(0), s.Real(1)));
    }
  }
  {
    TIDE_ASSIGN_OR_RETURN(auto s,
                          Prepare("SELECT tier, price_per_hour, created FROM instances WHERE deleted IS NULL", "Cost"));
    while (true) {
      TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
      if (!row) break;
      TIDE_RETURN_IF_ERROR(AddToTier(&cost, s.Text(0), CostOf(s.Real(1), (now - s.Time(2)).count())));
    }
  }
  return cost;
}

}  // namespace tide::controller
