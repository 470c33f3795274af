#include "controller/sqlite.h"

#include <sqlite3.h>

#include <utility>

#include "core/strings.h"

namespace tide::controller {

absl::StatusCode SqliteCode(int rc) {
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

// --- Connection ----------------------------------------------------------------

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::Open(const std::string& path, Mode mode,
                                                                 int busy_timeout_ms) {
  const int flags = mode == Mode::kReadOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status error(SqliteCode(rc), StrCat(path, ": ", db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc),
                                        " (in opening the state store)"));
    sqlite3_close_v2(db);
    return error;
  }
  std::unique_ptr<SqliteConnection> conn(new SqliteConnection(db, path));
  sqlite3_extended_result_codes(db, 1);
  if (const int busy = sqlite3_busy_timeout(db, busy_timeout_ms); busy != SQLITE_OK) {
    return conn->Error(busy, "setting busy_timeout");
  }
  return conn;
}

SqliteConnection::~SqliteConnection() {
  for (auto& [sql, cached] : statements_) sqlite3_finalize(cached.stmt);
  sqlite3_close_v2(db_);
}

Result<SqliteStatement> SqliteConnection::Prepare(const char* sql, std::string_view what) {
  auto [it, inserted] = statements_.try_emplace(sql);
  Cached& cached = it->second;
  if (inserted) {
    const int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &cached.stmt, nullptr);
    if (rc != SQLITE_OK) {
      Status error = Error(rc, what);
      statements_.erase(it);
      return error;
    }
  }
  if (cached.in_use) {
    return absl::InternalError(StrCat(path_, ": statement already in use (in ", what, "): ", sql));
  }
  cached.in_use = true;
  return SqliteStatement(this, &cached, what);
}

Status SqliteConnection::ExecScript(const char* sql, std::string_view what) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return OkStatus();
  Status error(SqliteCode(rc),
               StrCat(path_, ": ", message != nullptr ? message : sqlite3_errstr(rc), " (in ", what, ")"));
  sqlite3_free(message);
  return error;
}

Status SqliteConnection::Error(int rc, std::string_view what) const {
  return Status(SqliteCode(rc), StrCat(path_, ": ", sqlite3_errmsg(db_), " (in ", what, ")"));
}

int64_t SqliteConnection::Changes() const { return sqlite3_changes64(db_); }

bool SqliteConnection::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

// --- Statement -------------------------------------------------------------------

SqliteStatement::SqliteStatement(SqliteStatement&& o) noexcept
    : db_(o.db_),
      cached_(std::exchange(o.cached_, nullptr)),
      what_(std::move(o.what_)),
      next_(o.next_),
      bind_rc_(o.bind_rc_) {}

SqliteStatement::~SqliteStatement() {
  if (cached_ == nullptr) return;
  sqlite3_reset(cached_->stmt);
  sqlite3_clear_bindings(cached_->stmt);
  cached_->in_use = false;
}

SqliteStatement& SqliteStatement::Check(int rc) {
  if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
  return *this;
}

SqliteStatement& SqliteStatement::BindInt(int64_t v) { return Check(sqlite3_bind_int64(stmt(), next_++, v)); }

SqliteStatement& SqliteStatement::BindReal(double v) { return Check(sqlite3_bind_double(stmt(), next_++, v)); }

SqliteStatement& SqliteStatement::BindText(std::string_view v) {
  return Check(sqlite3_bind_text(stmt(), next_++, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
}

SqliteStatement& SqliteStatement::BindNull() { return Check(sqlite3_bind_null(stmt(), next_++)); }

Result<bool> SqliteStatement::Step() {
  if (bind_rc_ != SQLITE_OK) return db_->Error(bind_rc_, what_);
  const int rc = sqlite3_step(stmt());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error(rc, what_);
}

Status SqliteStatement::Run() {
  TIDE_ASSIGN_OR_RETURN(const bool row, Step());
  if (row) return absl::InternalError(StrCat(db_->path(), ": unexpected row (in ", what_, ")"));
  return OkStatus();
}

bool SqliteStatement::IsNull(int col) const { return sqlite3_column_type(stmt(), col) == SQLITE_NULL; }

int64_t SqliteStatement::Int(int col) const { return sqlite3_column_int64(stmt(), col); }

double SqliteStatement::Real(int col) const { return sqlite3_column_double(stmt(), col); }

std::string SqliteStatement::Text(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt(), col));
  return p == nullptr ? std::string() : std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt(), col)));
}

// --- Transaction -----------------------------------------------------------------

Result<SqliteTransaction> SqliteTransaction::Begin(SqliteConnection* db, std::string_view what) {
  TIDE_ASSIGN_OR_RETURN(auto begin, db->Prepare("BEGIN IMMEDIATE", what));
  TIDE_RETURN_IF_ERROR(begin.Run());
  return SqliteTransaction(db, what);
}

SqliteTransaction::SqliteTransaction(SqliteTransaction&& o) noexcept
    : db_(o.db_), what_(std::move(o.what_)), open_(std::exchange(o.open_, false)) {}

SqliteTransaction::~SqliteTransaction() {
  // SQLite may already have rolled back on its own (I/O error, disk full).
  if (!open_ || !db_->InTransaction()) return;
  auto rollback = db_->Prepare("ROLLBACK", what_);
  if (rollback.ok()) (void)rollback->Run();
}

Status SqliteTransaction::Commit() {
  TIDE_ASSIGN_OR_RETURN(auto commit, db_->Prepare("COMMIT", what_));
  TIDE_RETURN_IF_ERROR(commit.Run());
  open_ = false;
  return OkStatus();
}

}  // namespace tide::controller
