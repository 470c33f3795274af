#include "controller/token_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tide::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Sets the umask while it lives (a test's files must not depend on it).
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old_); }

 private:
  mode_t old_;
};

class TokenFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = StrCat(::testing::TempDir(), "/tide_token_file_test_XXXXXX");
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/token";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& text, mode_t mode) {
    std::ofstream(path_) << text;
    ASSERT_EQ(::chmod(path_.c_str(), mode), 0);
  }
  mode_t Mode() const {
    struct stat st = {};
    EXPECT_EQ(::stat(path_.c_str(), &st), 0);
    return st.st_mode & 07777;
  }

  std::string dir_;
  std::string path_;
};

TEST_F(TokenFileTest, NoPathIsNoToken) {
  auto t = LoadToken("");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->value, "");
  EXPECT_FALSE(t->created);
}

TEST_F(TokenFileTest, AMissingFileIsMadeWithMode0600AndARandomToken) {
  const ScopedUmask lax(0);  // would make 0666 of a file created naively
  auto made = LoadToken(path_);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_TRUE(made->created);
  EXPECT_THAT(made->value, ::testing::MatchesRegex("[0-9a-f]{64}"));
  EXPECT_EQ(Mode(), 0600);
  // The next start reads the same token.
  auto again = LoadToken(path_);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->value, made->value);
  // Another file gets another token.
  auto other = LoadToken(dir_ + "/other");
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->value, made->value);
}

TEST_F(TokenFileTest, AFileOthersMayUseIsRefusedWithTheFix) {
  for (mode_t mode : {0640, 0604, 0620, 0602, 0660, 0644, 0666, 0610}) {
    SCOPED_TRACE(mode);
    Write("a-secret-token-value\n", mode);
    auto t = LoadToken(path_);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
    const std::string message(Message(t.status()));
    EXPECT_THAT(message, HasSubstr(path_));
    EXPECT_THAT(message, HasSubstr(fmt::format("mode {:04o}", mode)));
    EXPECT_THAT(message, HasSubstr(StrCat("chmod 600 ", path_)));
    EXPECT_THAT(message, Not(HasSubstr("a-secret-token-value")));
    EXPECT_EQ(Mode(), mode);  // left as it was: the operator decides
  }
}

TEST_F(TokenFileTest, TheFirstLineWithoutSpacesIsTheToken) {
  for (mode_t mode : {0600, 0400}) {
    Write("  tok-en-12345 \nsecond line\n", mode);
    auto t = LoadToken(path_);
    ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_EQ(t->value, "tok-en-12345");
    EXPECT_FALSE(t->created);
  }
}

TEST_F(TokenFileTest, ATooShortTokenIsRefusedWithoutShowingIt) {
  for (const std::string text : {"", "\n", "short7!", "   \nlong-enough-but-on-line-two\n"}) {
    SCOPED_TRACE(text);
    Write(text, 0600);
    auto t = LoadToken(path_);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(Message(t.status())), HasSubstr(path_));
    EXPECT_THAT(std::string(Message(t.status())), Not(HasSubstr("short7!")));
  }
}

TEST_F(TokenFileTest, AMissingDirectoryOrADirectoryIsAnError) {
  auto t = LoadToken(dir_ + "/no/such/dir/token");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(Message(t.status())), HasSubstr(dir_ + "/no/such/dir/token"));
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  t = LoadToken(dir_);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(Message(t.status())), HasSubstr("not a regular file"));
}

}  // namespace
}  // namespace tide::controller
