// A small wrapper over one SQLite connection, for the state store
// (controller/store.h): a cache of prepared statements, typed binds and
// column reads, BEGIN IMMEDIATE transactions, and SQLite result codes mapped
// to Status codes.
//
// Errors read "<path>: <sqlite message> (in <what>)", with a code that says
// what the caller should do (SqliteCode): Unavailable for a busy or locked
// database, an I/O error or a full disk (retry later); FailedPrecondition for
// a file that is not a database, is corrupt, read-only or not permitted (an
// operator must act); NotFound for a file that cannot be opened; Internal
// otherwise.
//
// Thread-safety: none. A connection, and every statement and transaction
// taken from it, is used from one thread.
#ifndef TIDE_CONTROLLER_SQLITE_H_
#define TIDE_CONTROLLER_SQLITE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/status.h"
#include "core/time.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tide::controller {

// The Status code for SQLite result code `rc` (primary or extended).
absl::StatusCode SqliteCode(int rc);

class SqliteStatement;

class SqliteConnection {
 public:
  enum class Mode { kReadWriteCreate, kReadOnly };

  // Opens `path` (":memory:" for a private in-memory database) with extended
  // result codes and a busy timeout of `busy_timeout_ms`. The error names the
  // file.
  static Result<std::unique_ptr<SqliteConnection>> Open(const std::string& path, Mode mode, int busy_timeout_ms);

  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;
  ~SqliteConnection();  // finalizes the cached statements and closes

  // The one way SQL runs: prepares `sql` once (then reuses it), labelled
  // `what` in errors. `sql` is one statement. A statement is used by one
  // caller at a time: preparing one still in use is Internal.
  Result<SqliteStatement> Prepare(const char* sql, std::string_view what);
  // Runs a script of several statements, none of which returns rows (schema
  // changes).
  Status ExecScript(const char* sql, std::string_view what);
  // "<path>: <sqlite message> (in <what>)" with the code for `rc`.
  Status Error(int rc, std::string_view what) const;
  // Rows inserted, updated or deleted by the last statement that finished.
  int64_t Changes() const;
  // True while a transaction is open (SQLite may end one by itself on an
  // I/O error or a full disk).
  bool InTransaction() const;
  const std::string& path() const { return path_; }

 private:
  friend class SqliteStatement;
  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };

  SqliteConnection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

  sqlite3* db_;
  std::string path_;
  std::unordered_map<std::string, Cached> statements_;
};

// A cached prepared statement, borrowed for one use. Binds are positional in
// call order; a failed bind is reported by the next Step or Run. Column reads
// are valid after Step returned true. The destructor resets the statement
// (releasing any read lock it holds) and returns it to the cache.
class SqliteStatement {
 public:
  SqliteStatement(SqliteStatement&& o) noexcept;
  SqliteStatement& operator=(SqliteStatement&&) = delete;
  ~SqliteStatement();

  SqliteStatement& BindInt(int64_t v);
  SqliteStatement& BindReal(double v);
  SqliteStatement& BindText(std::string_view v);
  SqliteStatement& BindNull();
  // Unix seconds.
  SqliteStatement& BindTime(Timestamp t) { return BindInt(ToUnixSeconds(t)); }

  // True with a row to read, false when finished.
  Result<bool> Step();
  // Steps a statement that returns no rows to completion; Internal if it
  // returns one.
  Status Run();

  bool IsNull(int col) const;
  int64_t Int(int col) const;
  double Real(int col) const;
  std::string Text(int col) const;  // "" for NULL
  Timestamp Time(int col) const { return FromUnixSeconds(Int(col)); }

 private:
  friend class SqliteConnection;
  SqliteStatement(const SqliteConnection* db, SqliteConnection::Cached* cached, std::string_view what)
      : db_(db), cached_(cached), what_(what) {}
  sqlite3_stmt* stmt() const { return cached_->stmt; }
  SqliteStatement& Check(int rc);

  const SqliteConnection* db_;
  SqliteConnection::Cached* cached_;
  std::string what_;
  int next_ = 1;
  int bind_rc_ = 0;  // SQLITE_OK
};

// BEGIN IMMEDIATE ... COMMIT. Immediate takes the write lock up front, so a
// transaction that has begun cannot later fail for lack of it. Destroyed
// without Commit, it rolls back.
class SqliteTransaction {
 public:
  static Result<SqliteTransaction> Begin(SqliteConnection* db, std::string_view what);
  SqliteTransaction(SqliteTransaction&& o) noexcept;
  SqliteTransaction& operator=(SqliteTransaction&&) = delete;
  ~SqliteTransaction();

  Status Commit();

 private:
  SqliteTransaction(SqliteConnection* db, std::string_view what) : db_(db), what_(what), open_(true) {}

  SqliteConnection* db_;
  std::string what_;
  bool open_;
};

}  // namespace tide::controller

#endif  // TIDE_CONTROLLER_SQLITE_H_
