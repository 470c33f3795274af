// Helpers for the state store's tests (store_*_test.cc, live_cost_test.cc):
// records, times, and fixtures over a fresh state file or an in-memory store.
#ifndef TIDE_CONTROLLER_STORE_FIXTURES_TEST_H_
#define TIDE_CONTROLLER_STORE_FIXTURES_TEST_H_

#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "controller/store.h"
#include "core/status.h"
#include "core/strings.h"
#include "core/time.h"
#include "gtest/gtest.h"

namespace tide::controller::testing {

inline std::string Msg(const Status& s) { return std::string(Message(s)); }

inline constexpr Timestamp kT0 = FromUnixSeconds(1767571200);  // 2026-01-05T00:00:00Z
inline Timestamp At(int64_t seconds) { return kT0 + Seconds(seconds); }

inline ActionRecord Action(std::string key, std::string kind = "create", std::string node = "gpu1") {
  return ActionRecord{
      .key = std::move(key), .kind = std::move(kind), .node = std::move(node), .pool = "a100", .created = At(0)};
}

inline InstanceRecord Instance(std::string id, std::string node, model::Tier tier = model::Tier::kOnDemand,
                               double price = 36.0, int64_t created = 0) {
  return InstanceRecord{.id = std::move(id),
                        .node = std::move(node),
                        .pool = "a100",
                        .tier = tier,
                        .price_per_hour = price,
                        .created = At(created),
                        .state = "booting"};
}

inline std::unique_ptr<Store> OpenOrDie(const std::string& path) {
  auto store = Store::Open(path);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? std::move(*store) : nullptr;
}

// A fresh directory per test, removed afterwards.
class StoreFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = StrCat(::testing::TempDir(), "/tide_store_test_XXXXXX");
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = StrCat(dir_, "/state.db");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Runs `sql` on a separate raw connection and returns the first column of
  // the first row as text ("" if no row).
  std::string Query(const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    std::string out;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    const int rc = sqlite3_step(stmt);
    EXPECT_TRUE(rc == SQLITE_ROW || rc == SQLITE_DONE) << sqlite3_errmsg(db);
    if (rc == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return out;
  }

  // Runs `sql` (several statements) on a separate raw connection.
  void Exec(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr), SQLITE_OK);
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
  }

  // The first column of the first row of `sql` as a double (0 if no row).
  double QueryDouble(const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    const double out = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_double(stmt, 0) : 0.0;
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return out;
  }

  // Runs `body` in a child process that is then killed with SIGKILL: no
  // destructor, no sqlite3_close, no checkpoint (so `body` must not let its
  // Store be destroyed). Returns false if the body failed (the child then
  // exits 1 instead).
  bool RunThenKill9(const std::function<bool()>& body) {
    const pid_t pid = fork();
    if (pid == 0) {
      if (!body()) _exit(1);
      raise(SIGKILL);
      _exit(2);
    }
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  }

  std::string dir_;
  std::string path_;
};

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = OpenOrDie(":memory:");
    ASSERT_NE(store_, nullptr);
  }
  std::unique_ptr<Store> store_;
};

}  // namespace tide::controller::testing

#endif  // TIDE_CONTROLLER_STORE_FIXTURES_TEST_H_
