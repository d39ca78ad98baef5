// PreTokenizer: how each tokenizer.ggml.pre splits text into words. The
// expected splits are worked out by hand from llama.cpp's regexes and its
// rule that matches and the gaps between them both become pieces.
#include "tokenizer/pretokenizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mneme {
namespace {

using testing::ElementsAre;
using Words = std::vector<std::string>;

Words Split(std::string_view pre, std::string_view text) {
  auto p = PreTokenizer::Create(pre);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  if (!p.ok()) return {};
  return p->SplitToStrings(text);
}

TEST(PreTokenizerTest, Gpt2WordsKeepTheirLeadingSpace) {
  EXPECT_THAT(Split("gpt-2", "Hello world"), ElementsAre("Hello", " world"));
  EXPECT_THAT(Split("gpt-2", " Hello, world!"), ElementsAre(" Hello", ",", " world", "!"));
  EXPECT_THAT(Split("gpt-2", " this is \xF0\x9F\xA6\x99.cpp"),  // 🦙 is a symbol
              ElementsAre(" this", " is", " \xF0\x9F\xA6\x99.", "cpp"));
}

TEST(PreTokenizerTest, Gpt2ContractionsAreCaseSensitive) {
  EXPECT_THAT(Split("gpt-2", "I'm he's we'll"), ElementsAre("I", "'m", " he", "'s", " we", "'ll"));
  EXPECT_THAT(Split("gpt-2", "I'M"), ElementsAre("I", "'", "M"));
}

TEST(PreTokenizerTest, Gpt2Whitespace) {
  // \s+(?!\S) leaves the last space to the next word; a lone space before a
  // word is not matched by any alternative and becomes a gap piece.
  EXPECT_THAT(Split("gpt-2", "a   b"), ElementsAre("a", "  ", " b"));
  EXPECT_THAT(Split("gpt-2", "a\n\nb"), ElementsAre("a", "\n", "\n", "b"));
  EXPECT_THAT(Split("gpt-2", "a  "), ElementsAre("a", "  "));
  EXPECT_THAT(Split("gpt-2", "   "), ElementsAre("   "));
}

TEST(PreTokenizerTest, WhitespaceIsUnicodeWhiteSpace) {
  // U+3000 (ideographic space) is whitespace.
  EXPECT_THAT(Split("gpt-2",
                    "a\xE3\x80\x80\xE3\x80\x80"
                    "b"),
              ElementsAre("a", "\xE3\x80\x80", "\xE3\x80\x80", "b"));
  // U+180E is not (PCRE2's own \s would say it is).
  EXPECT_THAT(Split("gpt-2",
                    "a\xE1\xA0\x8E\xE1\xA0\x8E"
                    "b"),
              ElementsAre("a", "\xE1\xA0\x8E\xE1\xA0\x8E", "b"));
}

TEST(PreTokenizerTest, Llama3ContractionsIgnoreCase) {
  EXPECT_THAT(Split("llama-bpe", "I'M we'Ll"), ElementsAre("I", "'M", " we", "'Ll"));
}

TEST(PreTokenizerTest, Llama3DigitsInRunsOfAtMostThree) {
  EXPECT_THAT(Split("llama-bpe", "1234567"), ElementsAre("123", "456", "7"));
  EXPECT_THAT(Split("llama-bpe", "a12b"), ElementsAre("a", "12", "b"));
  EXPECT_THAT(Split("llama-bpe", " 3.14"), ElementsAre(" ", "3", ".", "14"));
}

TEST(PreTokenizerTest, Llama3PunctuationAndNewlines) {
  EXPECT_THAT(Split("llama-bpe", "a\n\nb"), ElementsAre("a", "\n\n", "b"));
  EXPECT_THAT(Split("llama-bpe", "  \n  x"), ElementsAre("  \n", " ", " x"));
  EXPECT_THAT(Split("llama-bpe", "x;\n\ny"), ElementsAre("x", ";\n\n", "y"));
  // Any non-letter, non-digit, non-newline may lead a word.
  EXPECT_THAT(Split("llama-bpe", "(hello)"), ElementsAre("(hello", ")"));
}

TEST(PreTokenizerTest, Qwen2SplitsEveryDigit) {
  EXPECT_THAT(Split("qwen2", "x1234"), ElementsAre("x", "1", "2", "3", "4"));
}

TEST(PreTokenizerTest, CjkAndEmoji) {
  // 我想在apple工作 is all \p{L}: one word for the GPT-2 regex ...
  const std::string text =
      "\xE6\x88\x91\xE6\x83\xB3\xE5\x9C\xA8"
      "apple\xE5\xB7\xA5\xE4\xBD\x9C";
  EXPECT_THAT(Split("gpt-2", text), ElementsAre(text));
  // ... while deepseek-coder cuts the ideographs out of it.
  EXPECT_THAT(Split("deepseek-coder", text), ElementsAre("\xE6\x88\x91\xE6\x83\xB3\xE5\x9C\xA8",
                                                         "apple", "\xE5\xB7\xA5\xE4\xBD\x9C"));
  // Emoji (So) and ZWJ (Cf) form one punctuation-like run.
  EXPECT_THAT(Split("llama-bpe", " \xF0\x9F\x98\xB6\xE2\x80\x8D\xF0\x9F\x8C\xAB!"),
              ElementsAre(" \xF0\x9F\x98\xB6\xE2\x80\x8D\xF0\x9F\x8C\xAB!"));
}

TEST(PreTokenizerTest, RegexSetsSplitThePiecesOfTheFormerOnes) {
  // falcon: punctuation first, then GPT-2, then 3-digit groups.
  EXPECT_THAT(Split("falcon", "3333333"), ElementsAre("333", "333", "3"));
  EXPECT_THAT(Split("falcon", "a...b"), ElementsAre("a", "...", "b"));
  // default: "$" is cut out by the first regex, leaving a lone space.
  EXPECT_THAT(Split("default", " $5"), ElementsAre(" ", "$", "5"));
  EXPECT_THAT(Split("gpt-2", " $5"), ElementsAre(" $", "5"));
  // starcoder: every digit alone, then GPT-2.
  EXPECT_THAT(Split("starcoder", "ab 12"), ElementsAre("ab", " ", "1", "2"));
  // deepseek-coder: newlines alone, then \s?\p{L}+, \s?\p{P}+, CJK, digits.
  EXPECT_THAT(Split("deepseek-coder", "x\n\n y, 42"),
              ElementsAre("x", "\n", "\n", " y", ",", " ", "4", "2"));
}

TEST(PreTokenizerTest, DeepseekLlmTrailingSpacesAndLetters) {
  // `\s+$` only at the very end of a piece.
  EXPECT_THAT(Split("deepseek-llm", "ab  "), ElementsAre("ab", "  "));
  // U+212A (Kelvin sign) is in the letter class; U+004B..U+2129 is not one range.
  EXPECT_THAT(Split("deepseek-llm", "\xE2\x84\xAA\xE2\x84\xA5"),
              ElementsAre("\xE2\x84\xAA", "\xE2\x84\xA5"));
}

TEST(PreTokenizerTest, NonAsciiWhitespaceIsOnlyEverWhitespace) {
  // llama.cpp shows a regex without \p{..} every non-ASCII whitespace code
  // point as U+000B, so U+2028 is not in deepseek's U+0800..U+4E00 range ...
  EXPECT_THAT(Split("deepseek-coder", " \xE2\x80\xA8"), ElementsAre(" \xE2\x80\xA8"));
  // ... and U+3000 is not in deepseek-llm's U+3000..U+3002 punctuation.
  EXPECT_THAT(Split("deepseek-llm", "\xE3\x80\x80\xE3\x80\x80!"),
              ElementsAre("\xE3\x80\x80", "\xE3\x80\x80!"));
}

TEST(PreTokenizerTest, VeryLongWhitespaceRunsSplitLikeShortOnes) {
  // More backtracking steps than PCRE2's default match limit (10 million).
  const std::string text = std::string(12'000'000, ' ') + "x";
  const Words words = Split("llama-bpe", text);
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(words[0].size(), 12'000'000u - 1);
  EXPECT_EQ(words[1], " x");
}

TEST(PreTokenizerTest, InvalidUtf8BecomesReplacementCharacters) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_THAT(Split("gpt-2",
                    "a\xFF"
                    "b"),
              ElementsAre("a", fffd, "b"));
  // A truncated sequence: each byte is one U+FFFD, as in llama.cpp.
  EXPECT_THAT(Split("gpt-2", "a\xE4\xB8"), ElementsAre("a", fffd + fffd));
  EXPECT_THAT(Split("llama-bpe", std::string_view("\x00\x01", 2)),
              ElementsAre(std::string_view("\x00\x01", 2)));
}

TEST(RepairUtf8Test, LeavesWellFormedTextAlone) {
  std::string out = "untouched";
  EXPECT_TRUE(RepairUtf8("h\xC3\xA9llo \xF0\x9F\xA6\x99", &out));
  EXPECT_EQ(out, "untouched");
}

TEST(RepairUtf8Test, DecodesLikeLlamaCpp) {
  std::string out;
  EXPECT_FALSE(RepairUtf8("\xC0\x80z", &out));  // overlong NUL -> NUL
  EXPECT_EQ(out, std::string("\x00z", 2));
  EXPECT_FALSE(RepairUtf8("\x80\xBF", &out));  // stray continuation bytes
  EXPECT_EQ(out, "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_FALSE(RepairUtf8("\xE4\xB8", &out));  // truncated at the end
  EXPECT_EQ(out, "\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_FALSE(RepairUtf8("\xF8\x88\x80\x80\x80", &out));  // 5-byte form
  std::string five;
  for (int i = 0; i < 5; ++i) five += "\xEF\xBF\xBD";
  EXPECT_EQ(out, five);
  EXPECT_FALSE(RepairUtf8("\xF4\x90\x80\x80", &out));  // above U+10FFFF
  EXPECT_EQ(out, "\xEF\xBF\xBD");
}

TEST(PreTokenizerTest, UnknownNameListsTheSupportedOnes) {
  auto p = PreTokenizer::Create("tekken");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), testing::HasSubstr("'tekken'"));
  EXPECT_THAT(p.status().message(), testing::HasSubstr("llama-bpe"));
  EXPECT_THAT(p.status().message(), testing::HasSubstr("deepseek-coder"));
}

TEST(PreTokenizerTest, OnlyTheLlama3FamilyIgnoresMerges) {
  EXPECT_TRUE(PreTokenizer::Create("llama-bpe")->ignore_merges());
  EXPECT_TRUE(PreTokenizer::Create("llama3")->ignore_merges());
  EXPECT_FALSE(PreTokenizer::Create("dbrx")->ignore_merges());
  EXPECT_FALSE(PreTokenizer::Create("gpt-2")->ignore_merges());
  EXPECT_FALSE(PreTokenizer::Create("qwen2")->ignore_merges());
}

TEST(PreTokenizerTest, EmptyTextHasNoWords) {
  for (std::string_view pre : PreTokenizer::SupportedNames()) {
    EXPECT_TRUE(Split(pre, "").empty()) << pre;
  }
}

TEST(PreTokenizerTest, WordsConcatenateToTheText) {
  const std::string text =
      "Hello, y'all! How are you \xF0\x9F\x98\x81 ?\xE6\x88\x91 3333 \t\n  x\r\n\xC3\xA9t\xC3\xA9";
  for (std::string_view pre : PreTokenizer::SupportedNames()) {
    std::string joined;
    for (const std::string& w : Split(pre, text)) {
      EXPECT_FALSE(w.empty()) << pre;
      joined += w;
    }
    EXPECT_EQ(joined, text) << pre;
  }
}

}  // namespace
}  // namespace mneme
