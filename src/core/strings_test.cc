#include "core/strings.h"

#include <gtest/gtest.h>

namespace tide {
namespace {

TEST(ShownTest, KeepsPrintableTextAndUtf8) {
  EXPECT_EQ(Shown("gpu_time,num_gpus"), "gpu_time,num_gpus");
  EXPECT_EQ(Shown("équipe ʦ 日本"), "équipe ʦ 日本");
}

TEST(ShownTest, EscapesControlAndInvalidBytes) {
  EXPECT_EQ(Shown(std::string_view("a\tb\0c\x1b[m", 8)), "a\\x09b\\x00c\\x1b[m");
  EXPECT_EQ(Shown("\x7f"), "\\x7f");
  // A lone continuation byte, a cut sequence, an overlong form, a C1 control.
  EXPECT_EQ(Shown("\x80"), "\\x80");
  EXPECT_EQ(Shown("\xe6\x97"), "\\xe6\\x97");
  EXPECT_EQ(Shown("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(Shown("\xc2\x85"), "\\xc2\\x85");
}

TEST(ShownTest, CutsLongTextAndSaysHowLong) {
  const std::string s(1000, 'x');
  EXPECT_EQ(Shown(s, 5), "xxxxx... (1000 bytes)");
  EXPECT_EQ(Shown("xxxxx", 5), "xxxxx");
  // The limit counts columns: an escape takes four, a UTF-8 character one.
  EXPECT_EQ(Shown("\x01\x02\x03", 9), "\\x01\\x02... (3 bytes)");
  EXPECT_EQ(Shown("日本語", 2), "日本... (9 bytes)");
}

}  // namespace
}  // namespace tide
