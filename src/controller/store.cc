// Opening the store: the connection's durability settings and the schema.
// The record methods live in store_journal.cc, store_log.cc and
// store_history.cc.
#include "controller/store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "controller/sqlite.h"
#include "core/strings.h"

namespace tide::controller {
namespace {

constexpr int kBusyTimeoutMs = 5000;

// The files SQLite keeps beside a database.
constexpr const char* kCompanions[] = {"-wal", "-shm", "-journal"};

Status NarrowTo0600(const std::string& path, int fd, mode_t mode) {
  if ((mode & 077) == 0) return OkStatus();
  const int rc = fd >= 0 ? ::fchmod(fd, mode & 0700) : ::chmod(path.c_str(), mode & 0700);
  if (rc == 0) return OkStatus();
  return absl::FailedPreconditionError(StrCat(path, ": mode ", fmt::format("{:04o}", mode & 07777),
                                              " lets other users read tide's state, and it cannot be changed (",
                                              std::strerror(errno), "); run: chmod 600 ", path));
}

// tide's state (instances, jobs, costs, decisions) is for its own user. The
// database is made here, mode 0600, before SQLite opens it: SQLite creates
// the -wal, -shm and -journal files with the database's mode, so they get
// 0600 too, whatever the umask. A file from before (or made by hand) is
// narrowed, and so are companions left from a run that did not close.
Status RestrictToOwner(const std::string& path) {
  if (path.empty() || path == ":memory:") return OkStatus();  // SQLite's temporary and in-memory stores
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return OkStatus();  // SQLite's open says what is wrong, in its words
  struct stat st = {};
  Status s = ::fstat(fd, &st) == 0 ? NarrowTo0600(path, fd, st.st_mode) : OkStatus();
  ::close(fd);
  for (const char* suffix : kCompanions) {
    const std::string companion = path + suffix;
    if (s.ok() && ::stat(companion.c_str(), &st) == 0) s = NarrowTo0600(companion, -1, st.st_mode);
  }
  return s;
}

}  // namespace

Store::Store(std::unique_ptr<SqliteConnection> db) : db_(std::move(db)) {}

Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  TIDE_RETURN_IF_ERROR(RestrictToOwner(path));
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
