// AppendUtf8 / IsWellFormedUtf8 against RFC 3629's table and its examples.
#include "util/utf8.h"

#include <gtest/gtest.h>

namespace mneme {
namespace {

std::string Enc(char32_t cp) {
  std::string s;
  AppendUtf8(cp, &s);
  return s;
}

TEST(Utf8Test, EncodesEachLengthBoundary) {
  EXPECT_EQ(Enc(0x00), std::string(1, '\0'));
  EXPECT_EQ(Enc(0x7F), "\x7F");
  EXPECT_EQ(Enc(0x80), "\xC2\x80");
  EXPECT_EQ(Enc(0x7FF), "\xDF\xBF");
  EXPECT_EQ(Enc(0x800), "\xE0\xA0\x80");
  EXPECT_EQ(Enc(0xFFFF), "\xEF\xBF\xBF");
  EXPECT_EQ(Enc(0x10000), "\xF0\x90\x80\x80");
  EXPECT_EQ(Enc(0x10FFFF), "\xF4\x8F\xBF\xBF");
  // RFC 3629 section 7 examples.
  EXPECT_EQ(Enc(0x20AC), "\xE2\x82\xAC");
  EXPECT_EQ(Enc(0x233B4), "\xF0\xA3\x8E\xB4");
}

TEST(Utf8Test, AcceptsWellFormed) {
  EXPECT_TRUE(IsWellFormedUtf8(""));
  EXPECT_TRUE(IsWellFormedUtf8("plain ASCII text, longer than eight bytes"));
  EXPECT_TRUE(IsWellFormedUtf8("\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4"));  // 한국어
  EXPECT_TRUE(IsWellFormedUtf8("\xF4\x8F\xBF\xBF"));
}

TEST(Utf8Test, RejectsIllFormed) {
  EXPECT_FALSE(IsWellFormedUtf8("\x80"));              // lone continuation
  EXPECT_FALSE(IsWellFormedUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsWellFormedUtf8("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(IsWellFormedUtf8("\xED\xA0\x80"));      // surrogate U+D800
  EXPECT_FALSE(IsWellFormedUtf8("\xF4\x90\x80\x80"));  // U+110000
  EXPECT_FALSE(IsWellFormedUtf8("abc\xE2\x82"));       // truncated at the end
  EXPECT_FALSE(IsWellFormedUtf8("\xFF"));
}

}  // namespace
}  // namespace mneme
