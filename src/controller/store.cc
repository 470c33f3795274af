// Opening the store: the connection's durability settings and the schema.
// The record methods live in store_journal.cc, store_log.cc and
// store_history.cc.
#include "controller/store.h"

#include <utility>

#include "controller/sqlite.h"
#include "core/strings.h"

namespace tide::controller {
namespace {

constexpr int kBusyTimeoutMs = 5000;

}  // namespace

Store::Store(std::unique_ptr<SqliteConnection> db) : db_(std::move(db)) {}

Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  TIDE_ASSIGN_OR_RETURN(auto db,
                        SqliteConnection::Open(path, SqliteConnection::Mode::kReadWriteCreate, kBusyTimeoutMs));
  std::unique_ptr<Store> store(new Store(std::move(db)));
  TIDE_RETURN_IF_ERROR(store->Configure());
  TIDE_RETURN_IF_ERROR(MigrateSchema(store->db_.get()));
  return store;
}

Result<std::unique_ptr<Store>> Store::OpenReadOnly(const std::string& path) {
  TIDE_ASSIGN_OR_RETURN(auto db, SqliteConnection::Open(path, SqliteConnection::Mode::kReadOnly, kBusyTimeoutMs));
  std::unique_ptr<Store> store(new Store(std::move(db)));
  TIDE_RETURN_IF_ERROR(CheckSchemaVersion(store->db_.get()));
  return store;
}

Status Store::Configure() {
  {
    TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("PRAGMA journal_mode = WAL", "setting journal_mode"));
    TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
    const std::string mode = row ? s.Text(0) : "";
    // An in-memory database reports "memory"; it has no file to protect.
    if (mode != "wal" && mode != "memory") {
      return absl::FailedPreconditionError(StrCat(db_->path(), ": cannot use WAL journal mode (got '", mode,
                                                  "'); put the state file on a local disk"));
    }
  }
  {
    TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("PRAGMA synchronous = FULL", "setting synchronous"));
    TIDE_RETURN_IF_ERROR(s.Run());
  }
  {
    TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("PRAGMA foreign_keys = ON", "setting foreign_keys"));
    TIDE_RETURN_IF_ERROR(s.Run());
  }
  TIDE_ASSIGN_OR_RETURN(auto s, db_->Prepare("PRAGMA foreign_keys", "reading foreign_keys"));
  TIDE_ASSIGN_OR_RETURN(const bool row, s.Step());
  if (!row || s.Int(0) != 1) {
    return absl::FailedPreconditionError(StrCat(db_->path(), ": this SQLite cannot enforce foreign keys"));
  }
  return OkStatus();
}

}  // namespace tide::controller
