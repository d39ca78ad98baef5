// Hostile JSON: nesting bombs, truncation, bad bytes, duplicate keys, and
// serialization of text that is not valid UTF-8.
#include <gtest/gtest.h>

#include <string>

#include "api/json_io.h"

namespace mneme::api {
namespace {

TEST(JsonNestingDepth, CountsBracketsOutsideStrings) {
  EXPECT_EQ(JsonNestingDepth("1", 10), 0);
  EXPECT_EQ(JsonNestingDepth("{}", 10), 1);
  EXPECT_EQ(JsonNestingDepth(R"({"a":[{"b":[]}]})", 10), 4);
  EXPECT_EQ(JsonNestingDepth(R"({"a":"[[[[{{{{"})", 10), 1);
  // An escaped quote does not end the string; an escaped backslash does not escape the quote.
  EXPECT_EQ(JsonNestingDepth(R"({"a":"\"[[["})", 10), 1);
  EXPECT_EQ(JsonNestingDepth(R"({"a":"\\",  "b":[[]]})", 10), 3);
  EXPECT_EQ(JsonNestingDepth(std::string(50, '['), 10), 11);  // stops early
}

TEST(ParseJsonObject, DeepNestingIsRefusedWithoutRecursion) {
  for (char open : {'[', '{'}) {
    std::string bomb;
    if (open == '{') {
      for (int i = 0; i < 10000; ++i) bomb += "{\"a\":";
      bomb += "1";
      bomb += std::string(10000, '}');
    } else {
      bomb = "{\"x\":" + std::string(10000, '[') + std::string(10000, ']') + "}";
    }
    auto r = ParseJsonObject(bomb);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().http_status, 400);
    EXPECT_EQ(r.error().code, "invalid_json");
    EXPECT_NE(r.error().message.find("nested more than 64"), std::string::npos)
        << r.error().message;
  }
  // Unbalanced openers only (truncated bomb) too.
  EXPECT_FALSE(ParseJsonObject(std::string(100000, '[')).ok());
}

TEST(ParseJsonObject, DepthLimitIsInclusive) {
  std::string at_limit = std::string(3, '[');
  at_limit = "{\"a\":" + at_limit + std::string(3, ']') + "}";  // depth 4
  EXPECT_TRUE(ParseJsonObject(at_limit, 4).ok());
  EXPECT_FALSE(ParseJsonObject(at_limit, 3).ok());
}

TEST(ParseJsonObject, MalformedBodiesAre400) {
  const char* bad[] = {
      "",                       // empty
      "{",                      // truncated
      R"({"model": "x",)",      // truncated after a comma
      R"({"model": "x")",       // missing brace
      R"({"model": x})",        // bare word
      R"({'model': 'x'})",      // single quotes
      R"({"a": NaN})",          // not JSON
      R"({"a": Infinity})",     //
      R"({"a": 1e400})",        // overflows a double
      R"({"a": 01})",           // leading zero
      R"({"a": "\ud800"})",     // lone surrogate
      R"({"a": 1} trailing)",   // trailing garbage
      "{\"a\": \"\xff\xfe\"}",  // invalid UTF-8 in a string
      "{\"a\": \"\xc0\x80\"}",  // overlong encoding
      "{\"a\": \"x\ny\"}",      // raw control character in a string
  };
  for (const char* body : bad) {
    auto r = ParseJsonObject(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.error().http_status, 400) << body;
    EXPECT_EQ(r.error().type, "invalid_request_error");
    EXPECT_EQ(r.error().code, "invalid_json");
    // The error body is valid JSON even when the parser quoted bad bytes.
    EXPECT_FALSE(nlohmann::json::parse(ErrorBody(r.error()), nullptr, false).is_discarded())
        << body;
  }
}

TEST(ParseJsonObject, ErrorMessagesStayShort) {
  // nlohmann quotes the offending token; a 100 kB number must not come back whole.
  auto r = ParseJsonObject("{\"a\":" + std::string(100000, '1') + "}");
  ASSERT_FALSE(r.ok());
  EXPECT_LT(r.error().message.size(), 400u);
}

TEST(ParseJsonObject, TopLevelMustBeAnObject) {
  for (const char* body : {"[]", "1", "\"s\"", "null", "true"}) {
    auto r = ParseJsonObject(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.error().code, "invalid_json");
  }
}

TEST(ParseJsonObject, DuplicateKeysLastWins) {
  auto r = ParseJsonObject(R"({"a": 1, "a": 2})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value()["a"], 2);
}

TEST(ParseJsonObject, EveryPrefixOfAValidBodyIsHandled) {
  const std::string body =
      R"({"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hé"}]}],"stop":["\n"]})";
  for (size_t n = 0; n < body.size(); ++n) {
    auto r = ParseJsonObject(std::string_view(body).substr(0, n));
    EXPECT_FALSE(r.ok()) << n;
  }
  EXPECT_TRUE(ParseJsonObject(body).ok());
}

TEST(DumpJson, ReplacesInvalidUtf8) {
  nlohmann::ordered_json j = {{"text", std::string("ok \xff\xfe end \xe2\x82")}};
  std::string out = DumpJson(j);
  // Each invalid byte sequence becomes U+FFFD (EF BF BD); the result parses.
  EXPECT_NE(out.find("\xEF\xBF\xBD"), std::string::npos);
  auto back = nlohmann::json::parse(out);
  EXPECT_EQ(back["text"].get<std::string>().substr(0, 3), "ok ");
  EXPECT_NE(back["text"].get<std::string>().find(" end "), std::string::npos);
}

TEST(DumpJson, IsOneLine) {
  nlohmann::ordered_json j = {{"text", "line1\nline2\r\n\t\x01"}};
  std::string out = DumpJson(j);
  EXPECT_EQ(out.find('\n'), std::string::npos);
  EXPECT_EQ(out.find('\r'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(out)["text"], "line1\nline2\r\n\t\x01");
}

TEST(TruncateForMessage, CutsOnCharacterBoundaries) {
  EXPECT_EQ(TruncateForMessage("short", 64), "short");
  EXPECT_EQ(TruncateForMessage("abcdef", 3), "abc...");
  // "é" is C3 A9: cutting after C3 would split it.
  EXPECT_EQ(TruncateForMessage("a\xC3\xA9z", 2), "a...");
  EXPECT_EQ(TruncateForMessage("a\xC3\xA9z", 3), "a\xC3\xA9...");
}

}  // namespace
}  // namespace mneme::api
