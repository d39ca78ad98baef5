// Tests for JavaScript string/number semantics. Expected values are what
// node prints for the same operations (String(x), JSON.stringify, trim...).
#include "jinja/js_string.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mneme::jinja {
namespace {

TEST(JsStringTest, NumberToStringMatchesJavaScript) {
  EXPECT_EQ(JsNumberToString(0), "0");
  EXPECT_EQ(JsNumberToString(-0.0), "0");
  EXPECT_EQ(JsNumberToString(1), "1");
  EXPECT_EQ(JsNumberToString(-42), "-42");
  EXPECT_EQ(JsNumberToString(1.5), "1.5");
  EXPECT_EQ(JsNumberToString(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(JsNumberToString(1e21), "1e+21");
  EXPECT_EQ(JsNumberToString(1e20), "100000000000000000000");
  EXPECT_EQ(JsNumberToString(123456789012345678901234.0), "1.2345678901234569e+23");
  EXPECT_EQ(JsNumberToString(0.000001), "0.000001");
  EXPECT_EQ(JsNumberToString(0.0000001), "1e-7");
  EXPECT_EQ(JsNumberToString(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(JsNumberToString(9007199254740993.0), "9007199254740992");
  EXPECT_EQ(JsNumberToString(INFINITY), "Infinity");
  EXPECT_EQ(JsNumberToString(-INFINITY), "-Infinity");
  EXPECT_EQ(JsNumberToString(NAN), "NaN");
}

TEST(JsStringTest, Utf16LengthCountsSurrogatePairs) {
  EXPECT_EQ(Utf16Length("abc"), 3u);
  EXPECT_EQ(Utf16Length("日本"), 2u);
  EXPECT_EQ(Utf16Length("🎉"), 2u);
  EXPECT_EQ(Utf16Length(""), 0u);
}

TEST(JsStringTest, TrimUsesUnicodeWhitespace) {
  EXPECT_EQ(JsTrim("  \t\n x y \r\n"), "x y");
  EXPECT_EQ(JsTrim("\xC2\xA0x\xE3\x80\x80"), "x");  // NBSP, ideographic space
  EXPECT_EQ(JsTrimStart("  x  "), "x  ");
  EXPECT_EQ(JsTrimEnd("  x  "), "  x");
  EXPECT_EQ(JsTrim("   "), "");
}

TEST(JsStringTest, CaseMapping) {
  EXPECT_EQ(JsToUpper("Hello wörld ß"), "HELLO WÖRLD SS");
  EXPECT_EQ(JsToLower("ÉCOLE ΑΒΓ ДОМ"), "école αβγ дом");
  EXPECT_EQ(JsToUpper("日本"), "日本");
}

TEST(JsStringTest, JsonStringEscapes) {
  std::string out;
  AppendJsonString("a\"b\\c\n\t\x01/é", false, &out);
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\t\\u0001/é\"");
  out.clear();
  AppendJsonString("é🎉\x7f", true, &out);
  EXPECT_EQ(out, "\"\\u00e9\\ud83c\\udf89\\u007f\"");
}

TEST(JsStringTest, ParseNumbers) {
  EXPECT_EQ(JsParseInt(" 12px"), 12);
  EXPECT_EQ(JsParseInt("-7.9"), -7);
  EXPECT_TRUE(std::isnan(JsParseInt("abc")));
  EXPECT_EQ(JsParseFloat("-3.5e2x"), -350);
  EXPECT_EQ(JsParseFloat(".5"), 0.5);
  EXPECT_TRUE(std::isnan(JsParseFloat("e5")));
  EXPECT_EQ(JsStringToNumber(" 42 "), 42);
  EXPECT_EQ(JsStringToNumber(""), 0);
  EXPECT_EQ(JsStringToNumber("0x10"), 16);
  EXPECT_TRUE(std::isnan(JsStringToNumber("12px")));
}

TEST(JsStringTest, DecodeNeverReadsPastTheEnd) {
  const std::string truncated = "a\xE6\x97";  // cut-off 3-byte sequence
  size_t i = 1;
  DecodeUtf8(truncated, &i);
  EXPECT_EQ(i, 2u);
  EXPECT_EQ(SplitCodePoints(truncated).size(), 3u);
}

}  // namespace
}  // namespace mneme::jinja
