// Tests for the lexer: token kinds, the reference's preprocessing
// (trim_blocks, lstrip_blocks, generation tags), whitespace control and
// error positions.
#include "jinja/lexer.h"

#include <gtest/gtest.h>

namespace mneme::jinja {
namespace {

std::vector<std::pair<TokenType, std::string>> Lex(std::string_view src) {
  auto tokens = Tokenize(src);
  EXPECT_TRUE(tokens.ok()) << tokens.status().ToString();
  std::vector<std::pair<TokenType, std::string>> out;
  if (tokens.ok()) {
    for (const Token& t : *tokens) out.emplace_back(t.type, t.value);
  }
  return out;
}

std::string Texts(std::string_view src) {
  std::string out;
  for (const auto& [type, value] : Lex(src)) {
    if (type == TokenType::kText) out += "[" + value + "]";
  }
  return out;
}

TEST(LexerTest, ExpressionTokens) {
  const auto toks = Lex("{{ a.b[0] + -1 * 2.5 ~ 'x' | f(k=1) }}");
  const std::vector<std::pair<TokenType, std::string>> want = {{TokenType::kOpenExpression, "{{"},
                                                               {TokenType::kIdentifier, "a"},
                                                               {TokenType::kDot, "."},
                                                               {TokenType::kIdentifier, "b"},
                                                               {TokenType::kOpenSquare, "["},
                                                               {TokenType::kNumber, "0"},
                                                               {TokenType::kCloseSquare, "]"},
                                                               {TokenType::kAdditive, "+"},
                                                               {TokenType::kNumber, "-1"},
                                                               {TokenType::kMultiplicative, "*"},
                                                               {TokenType::kNumber, "2.5"},
                                                               {TokenType::kAdditive, "~"},
                                                               {TokenType::kString, "x"},
                                                               {TokenType::kPipe, "|"},
                                                               {TokenType::kIdentifier, "f"},
                                                               {TokenType::kOpenParen, "("},
                                                               {TokenType::kIdentifier, "k"},
                                                               {TokenType::kEquals, "="},
                                                               {TokenType::kNumber, "1"},
                                                               {TokenType::kCloseParen, ")"},
                                                               {TokenType::kCloseExpression, "}}"}};
  EXPECT_EQ(toks, want);
}

TEST(LexerTest, MinusAfterOperandIsBinary) {
  const auto toks = Lex("{{ a -1 }}{{ (1) - x }}{{ -x }}");
  EXPECT_EQ(toks[2], std::make_pair(TokenType::kAdditive, std::string("-")));
  EXPECT_EQ(toks[9], std::make_pair(TokenType::kAdditive, std::string("-")));
  EXPECT_EQ(toks[13], std::make_pair(TokenType::kUnary, std::string("-")));
}

TEST(LexerTest, StringEscapes) {
  const auto toks = Lex(R"({{ 'a\n\t\'\"\\\x41\u00e9' "b'" }})");
  EXPECT_EQ(toks[1].second, "a\n\t'\"\\Aé");
  EXPECT_EQ(toks[2].second, "b'");
}

TEST(LexerTest, CurlyBracesInsideExpressions) {
  const auto toks = Lex("{{ {'a': {'b': 1}} }}");
  EXPECT_EQ(toks.back().first, TokenType::kCloseExpression);
  EXPECT_EQ(toks.size(), 11u);
}

TEST(LexerTest, TrimBlocksAndLstripBlocks) {
  // The newline after a block tag goes; indentation before a block tag goes;
  // neither happens around {{ }}.
  EXPECT_EQ(Texts("a\n  {% if x %}\n  b\n  {% endif %}\nc"), "[a\n][  b\n][c]");
  EXPECT_EQ(Texts("  {{ x }}\n"), "[  ]");
  EXPECT_EQ(Texts("x {# c #}\ny"), "[x ][y]");
  EXPECT_EQ(Texts("a\n"), "[a]");  // one trailing newline is dropped
  EXPECT_EQ(Texts("a\n\n"), "[a\n]");
}

TEST(LexerTest, WhitespaceControl) {
  EXPECT_EQ(Texts("a  \n {{- x -}} \n b"), "[a][b]");
  EXPECT_EQ(Texts("a  {%- if x -%}  b {% endif %}"), "[a][b ]");
  EXPECT_EQ(Texts("a  {#- c -#}  b"), "[a][b]");
}

TEST(LexerTest, GenerationTagsAreRemoved) {
  EXPECT_EQ(Texts("a {% generation %} b {% endgeneration %} c"), "[a  b  c]");
  EXPECT_EQ(Texts("a {%- generation -%} b"), "[ab]");
}

TEST(LexerTest, ErrorsCarryLineAndColumn) {
  auto r = Tokenize("line one\n{{ 'open");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("2:4"), std::string::npos) << r.status().message();
  r = Tokenize("{{ x @ y }}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("1:6"), std::string::npos) << r.status().message();
  EXPECT_FALSE(Tokenize("{{ '\\q' }}").ok());
  EXPECT_FALSE(Tokenize("{# never closed").ok());
  EXPECT_FALSE(Tokenize("{{ x ").ok());
}

TEST(LexerTest, PositionsPointIntoTheOriginalSource) {
  auto r = Tokenize("ab\n   {% if x %}\nyz {{ w }}");
  ASSERT_TRUE(r.ok());
  for (const Token& t : *r) {
    if (t.value == "w") {
      EXPECT_EQ(FormatPosition("ab\n   {% if x %}\nyz {{ w }}", t.offset), "3:7");
    }
    if (t.value == "x") {
      EXPECT_EQ(FormatPosition("ab\n   {% if x %}\nyz {{ w }}", t.offset), "2:10");
    }
  }
}

}  // namespace
}  // namespace mneme::jinja
