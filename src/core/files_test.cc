#include "core/files.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tide-files-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string dir_;
};

TEST_F(FilesTest, WriteAtomicallyReplacesAndLeavesNoTemporaryFile) {
  const std::string path = StrCat(dir_, "/a.json");
  ASSERT_TRUE(WriteFileAtomically(path, "one\n").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "two\n").ok());
  Result<std::string> text = ReadFile(path);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, "two\n");
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST_F(FilesTest, FailuresAreUnavailableNamingThePath) {
  const Status w = WriteFileAtomically(StrCat(dir_, "/no/such/x.json"), "x");
  EXPECT_EQ(w.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(Message(w)), HasSubstr(StrCat(dir_, "/no/such/x.json.tmp.")));
  const Result<std::string> r = ReadFile(StrCat(dir_, "/missing"));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(Message(r.status())), HasSubstr(StrCat("cannot read ", dir_, "/missing")));
}

TEST_F(FilesTest, ListFilesBySuffixSorted) {
  const std::string sub = StrCat(dir_, "/records/deep");
  ASSERT_TRUE(MakeDirs(sub).ok());
  ASSERT_TRUE(MakeDirs(sub).ok());  // again: fine
  for (const char* name : {"b.json", "a.json", ".json", "c.json.tmp.12", "notes.txt"}) {
    std::ofstream(StrCat(sub, "/", name)) << "{}";
  }
  Result<std::vector<std::string>> files = ListFiles(sub, ".json");
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(*files, ElementsAre(StrCat(sub, "/a.json"), StrCat(sub, "/b.json")));
  Result<std::vector<std::string>> none = ListFiles(StrCat(dir_, "/absent"), ".json");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_THAT(*none, IsEmpty());
}

TEST_F(FilesTest, AppendLineAppendsAndNeverFails) {
  const std::string log = StrCat(dir_, "/t.log");
  AppendLine(log, "first");
  AppendLine(log, "second");
  AppendLine(StrCat(dir_, "/no/such/dir.log"), "lost");  // best effort: no crash, no error
  Result<std::string> text = ReadFile(log);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "first\nsecond\n");
}

}  // namespace
}  // namespace tide
