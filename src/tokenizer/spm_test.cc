// SpmEncoder on hand-made vocabularies, where the expected ids follow from
// the merge rules by hand, and on the real Llama 2 vocabulary against ids
// from llama.cpp's test vectors.
#include "tokenizer/spm.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gguf/gguf.h"

namespace mneme {
namespace {

constexpr int kFirstByte = 3;  // <0x00> is id 3 in SmallVocab

// <unk> <s> </s> <0x00>..<0xFF>, then `extra` normal tokens with scores.
Vocab SmallVocab(const std::vector<std::pair<std::string, float>>& extra, bool byte_tokens = true) {
  Vocab v;
  v.model = Vocab::Model::kSpm;
  v.model_name = "llama";
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  if (byte_tokens) {
    for (int b = 0; b < 256; ++b) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
      v.tokens.push_back(hex);
      v.types.push_back(TokenType::kByte);
    }
  }
  for (const auto& [text, score] : extra) {
    v.tokens.push_back(text);
    v.types.push_back(TokenType::kNormal);
  }
  v.scores.assign(v.tokens.size(), 0.0f);
  for (size_t i = 0; i < extra.size(); ++i) {
    v.scores[v.tokens.size() - extra.size() + i] = extra[i].second;
  }
  v.unk_id = 0;
  v.bos_id = 1;
  v.eos_id = 2;
  EXPECT_TRUE(v.Finalize().ok());
  return v;
}

std::vector<TokenId> EncodeWith(const Vocab& v, std::string_view text) {
  Result<std::unique_ptr<SpmEncoder>> encoder = SpmEncoder::Create(v);
  EXPECT_TRUE(encoder.ok()) << encoder.status().ToString();
  std::vector<TokenId> out;
  (*encoder)->Encode(text, &out);
  return out;
}

TEST(SpmEncoderTest, MergesHighestScoreFirst) {
  // a b c: "bc" (-1.5) beats "ab" (-3); then "abc" is formed from a + bc.
  Vocab v =
      SmallVocab({{"a", -2}, {"b", -2}, {"c", -2}, {"ab", -3}, {"bc", -1.5f}, {"abc", -0.5f}});
  EXPECT_EQ(EncodeWith(v, "abc"), (std::vector<TokenId>{v.Find("abc")}));
  // Without "abc" the better pair wins and the rest stays single.
  Vocab no_abc = SmallVocab({{"a", -2}, {"b", -2}, {"c", -2}, {"ab", -3}, {"bc", -1.5f}});
  EXPECT_EQ(EncodeWith(no_abc, "abc"), (std::vector<TokenId>{no_abc.Find("a"), no_abc.Find("bc")}));
  // With "ab" better, a+b merge first and c is left alone.
  Vocab ab_first = SmallVocab({{"a", -2}, {"b", -2}, {"c", -2}, {"ab", -1}, {"bc", -1.5f}});
  EXPECT_EQ(EncodeWith(ab_first, "abc"),
            (std::vector<TokenId>{ab_first.Find("ab"), ab_first.Find("c")}));
}

TEST(SpmEncoderTest, EqualScoresMergeLeftmostFirst) {
  Vocab v = SmallVocab({{"a", -2}, {"aa", -1}});
  EXPECT_EQ(EncodeWith(v, "aaa"), (std::vector<TokenId>{v.Find("aa"), v.Find("a")}));
  EXPECT_EQ(EncodeWith(v, "aaaa"), (std::vector<TokenId>{v.Find("aa"), v.Find("aa")}));
}

TEST(SpmEncoderTest, UnknownCharactersFallBackToBytes) {
  Vocab v = SmallVocab({{"a", -2}, {"\xE2\x96\x81", -1}});
  // "é" = C3 A9 is not a token.
  EXPECT_EQ(EncodeWith(v, "a\xC3\xA9"),
            (std::vector<TokenId>{v.Find("a"), kFirstByte + 0xC3, kFirstByte + 0xA9}));
  EXPECT_EQ(EncodeWith(v, "\xE2\x96\x81"), (std::vector<TokenId>{v.Find("\xE2\x96\x81")}));
}

TEST(SpmEncoderTest, InvalidUtf8IsSplitByLeadByteAndFallsBackToBytes) {
  Vocab v = SmallVocab({{"a", -2}});
  // C3 claims two bytes, so "\xC3a" is one symbol: not a token, so both of
  // its bytes become byte tokens (the 'a' too, as llama.cpp does).
  EXPECT_EQ(EncodeWith(v,
                       "\xC3"
                       "a"),
            (std::vector<TokenId>{kFirstByte + 0xC3, kFirstByte + 'a'}));
  // A stray continuation byte is a symbol of its own; a truncated sequence at
  // the end is cut to what is there.
  EXPECT_EQ(
      EncodeWith(v,
                 "\x80"
                 "a\xE2\x96"),
      (std::vector<TokenId>{kFirstByte + 0x80, v.Find("a"), kFirstByte + 0xE2, kFirstByte + 0x96}));
}

TEST(SpmEncoderTest, WithoutByteTokensUnknownBecomesUnk) {
  Vocab v = SmallVocab({{"a", -2}}, /*byte_tokens=*/false);
  EXPECT_EQ(EncodeWith(v, "a\xC3\xA9"), (std::vector<TokenId>{v.Find("a"), 0, 0}));
}

TEST(SpmEncoderTest, EmptyTextGivesNothing) {
  Vocab v = SmallVocab({{"a", -2}});
  EXPECT_TRUE(EncodeWith(v, "").empty());
}

TEST(SpmEncoderTest, RefusesBpeVocab) {
  Vocab v = SmallVocab({{"a", -2}});
  v.model = Vocab::Model::kBpe;
  EXPECT_FALSE(SpmEncoder::Create(v).ok());
}

TEST(SpmEncoderTest, Llama2VocabMatchesLlamaCppVectors) {
  Result<gguf::GgufFile> file = gguf::GgufFile::Open(std::string(MNEME_SHARED_DIR) +
                                                     "/models/vocab/ggml-vocab-llama-spm.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  Result<Vocab> v = Vocab::FromGguf(*file);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  // From ggml-vocab-llama-spm.gguf.out: "Hello world" and " Hello world"
  // (Tokenizer adds the "▁" prefix; here we pass it in ourselves).
  EXPECT_EQ(EncodeWith(*v, "\xE2\x96\x81Hello\xE2\x96\x81world"),
            (std::vector<TokenId>{15043, 3186}));
  EXPECT_EQ(EncodeWith(*v, "\xE2\x96\x81\xE2\x96\x81Hello\xE2\x96\x81world"),
            (std::vector<TokenId>{29871, 15043, 3186}));
  // "\t" has no piece of its own: the byte token <0x09> (id 12).
  EXPECT_EQ(EncodeWith(*v, "\xE2\x96\x81\t"), (std::vector<TokenId>{29871, 12}));
}

}  // namespace
}  // namespace mneme
