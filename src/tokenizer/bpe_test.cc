// BpeEncoder against llama.cpp's own tokenizer test vectors (vocab-only GGUFs
// with .inp/.out, see /work/shared/models/README.md), plus small hand-built
// vocabularies that pin down merge order, ignore_merges and the byte
// fallback. The golden inputs contain no special tokens, so the encoder can
// be checked directly, without the Tokenizer facade.
#include "tokenizer/bpe.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gguf/gguf.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/vocab.h"
#include "tokenizer/vocab_vectors_test_util.h"
#include "util/mapped_file.h"

namespace mneme {
namespace {

std::vector<std::vector<TokenId>> ParseOut(const std::string& out) {
  std::vector<std::vector<TokenId>> lines;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) lines.push_back(testing_util::ParseIdLine(line));
  return lines;
}

class BpeGoldenTest : public testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    base_ = std::string(MNEME_SHARED_DIR) + "/models/vocab/ggml-vocab-" + GetParam() + ".gguf";
    auto file = gguf::GgufFile::Open(base_);
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    auto vocab = Vocab::FromGguf(*file);
    ASSERT_TRUE(vocab.ok()) << vocab.status().ToString();
    vocab_ = std::make_unique<Vocab>(std::move(vocab).value());
    ASSERT_EQ(vocab_->model, Vocab::Model::kBpe);
    auto encoder = BpeEncoder::Create(*vocab_);
    ASSERT_TRUE(encoder.ok()) << encoder.status().ToString();
    encoder_ = std::move(encoder).value();
    Result<std::string> inp = ReadFileToString(base_ + ".inp");
    Result<std::string> out = ReadFileToString(base_ + ".out");
    ASSERT_TRUE(inp.ok() && out.ok()) << base_ << ": missing .inp/.out";
    cases_ = testing_util::SplitVocabTestCases(*inp);
    expected_ = ParseOut(*out);
    ASSERT_EQ(cases_.size(), 46u);
    ASSERT_EQ(expected_.size(), cases_.size());
  }

  std::string base_;
  std::unique_ptr<Vocab> vocab_;
  std::unique_ptr<BpeEncoder> encoder_;
  std::vector<std::string> cases_;
  std::vector<std::vector<TokenId>> expected_;
};

TEST_P(BpeGoldenTest, EncodesLikeLlamaCpp) {
  for (size_t i = 0; i < cases_.size(); ++i) {
    std::vector<TokenId> got;
    encoder_->Encode(cases_[i], &got);
    EXPECT_EQ(got, expected_[i]) << "case " << i << ": '" << cases_[i] << "'";
  }
}

TEST_P(BpeGoldenTest, ByteLevelDecodeRestoresTheInput) {
  for (size_t i = 0; i < cases_.size(); ++i) {
    std::string text;
    for (TokenId id : expected_[i]) text += ByteLevelDecode(vocab_->tokens[id]);
    EXPECT_EQ(text, cases_[i]) << "case " << i;
  }
}

TEST_P(BpeGoldenTest, EncodeAppends) {
  std::vector<TokenId> got = {-7};
  encoder_->Encode(cases_[11], &got);
  ASSERT_EQ(got.size(), expected_[11].size() + 1);
  EXPECT_EQ(got[0], -7);
  EXPECT_EQ(std::vector<TokenId>(got.begin() + 1, got.end()), expected_[11]);
}

INSTANTIATE_TEST_SUITE_P(Vocabs, BpeGoldenTest,
                         testing::Values("gpt-2", "falcon", "deepseek-coder", "starcoder",
                                         "llama-bpe", "qwen2"),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

// A tiny byte-level vocabulary: tokens as written (already byte-level text).
Vocab MakeVocab(std::string pre, std::vector<std::string> tokens,
                std::vector<std::pair<std::string, std::string>> merges) {
  Vocab v;
  v.model = Vocab::Model::kBpe;
  v.model_name = "gpt2";
  v.pre = std::move(pre);
  v.tokens = std::move(tokens);
  v.merges = std::move(merges);
  v.types.assign(v.tokens.size(), TokenType::kNormal);
  v.scores.assign(v.tokens.size(), 0.0f);
  EXPECT_TRUE(v.Finalize().ok());
  return v;
}

std::vector<TokenId> Encode(const Vocab& vocab, std::string_view text) {
  auto encoder = BpeEncoder::Create(vocab);
  EXPECT_TRUE(encoder.ok()) << encoder.status().ToString();
  std::vector<TokenId> out;
  if (encoder.ok()) (*encoder)->Encode(text, &out);
  return out;
}

TEST(BpeEncoderTest, LowerRankMergesFirstWhereverItIs) {
  //                   0    1    2    3     4
  const Vocab v1 = MakeVocab("gpt-2", {"a", "b", "c", "ab", "bc"}, {{"b", "c"}, {"a", "b"}});
  EXPECT_EQ(Encode(v1, "abc"), (std::vector<TokenId>{0, 4}));
  const Vocab v2 = MakeVocab("gpt-2", {"a", "b", "c", "ab", "bc"}, {{"a", "b"}, {"b", "c"}});
  EXPECT_EQ(Encode(v2, "abc"), (std::vector<TokenId>{3, 2}));
}

TEST(BpeEncoderTest, EqualRanksMergeLeftmostFirst) {
  const Vocab v = MakeVocab("gpt-2", {"a", "aa"}, {{"a", "a"}});
  EXPECT_EQ(Encode(v, "aaa"), (std::vector<TokenId>{1, 0}));
  EXPECT_EQ(Encode(v, "aaaaa"), (std::vector<TokenId>{1, 1, 0}));
}

TEST(BpeEncoderTest, LongWordsMergeLikeShortOnes) {
  // 100 bytes take the heap path, 40 the linear one; both must merge pairs
  // level by level, leftmost first.
  const Vocab v = MakeVocab("gpt-2", {"a", "aa", "aaaa", "aaaaaaaa"},
                            {{"a", "a"}, {"aa", "aa"}, {"aaaa", "aaaa"}});
  std::vector<TokenId> want_100(12, 3);
  want_100.push_back(2);
  EXPECT_EQ(Encode(v, std::string(100, 'a')), want_100);
  EXPECT_EQ(Encode(v, std::string(40, 'a')), std::vector<TokenId>(5, 3));
  std::vector<TokenId> want_101 = want_100;
  want_101.push_back(0);
  EXPECT_EQ(Encode(v, std::string(101, 'a')), want_101);
}

TEST(BpeEncoderTest, SymbolsOutsideTheVocabFallBackToSingleByteTokens) {
  // "Ġ" is the byte-level space (C4 A0). The merge result "Ġx" is not a
  // token, so llama.cpp looks up each byte of "Ġx" as a one-byte token:
  // C4 and A0 have none and are dropped, "x" is kept.
  const Vocab v = MakeVocab("gpt-2", {"\xC4\xA0", "x"}, {{"\xC4\xA0", "x"}});
  EXPECT_EQ(Encode(v, " x"), (std::vector<TokenId>{1}));
  // Without the merge both symbols are tokens.
  const Vocab plain = MakeVocab("gpt-2", {"\xC4\xA0", "x"}, {});
  EXPECT_EQ(Encode(plain, " x"), (std::vector<TokenId>{0, 1}));
  // A byte whose alphabet character is missing from the vocab.
  EXPECT_EQ(Encode(plain, "yx"), (std::vector<TokenId>{1}));
}

TEST(BpeEncoderTest, IgnoreMergesEmitsWholeWordTokens) {
  // "abc" is a token that the merges would never build.
  const std::vector<std::string> tokens = {"a", "b", "c", "ab", "abc"};
  const std::vector<std::pair<std::string, std::string>> merges = {{"a", "b"}};
  EXPECT_EQ(Encode(MakeVocab("llama-bpe", tokens, merges), "abc"), (std::vector<TokenId>{4}));
  EXPECT_EQ(Encode(MakeVocab("gpt-2", tokens, merges), "abc"), (std::vector<TokenId>{3, 2}));
  // dbrx uses the Llama 3 regex but not ignore_merges.
  EXPECT_EQ(Encode(MakeVocab("dbrx", tokens, merges), "abc"), (std::vector<TokenId>{3, 2}));
}

TEST(BpeEncoderTest, RepeatedWordsGiveTheSameTokensEachTime) {
  // Repeats hit the per-call word cache; each must still get its own ids.
  //                                0    1    2          3     4           5
  const Vocab v = MakeVocab("gpt-2",
                            {"a", "b", "\xC4\xA0", "ab",
                             "\xC4\xA0"
                             "a",
                             "\xC4\xA0"
                             "ab"},
                            {{"a", "b"},
                             {"\xC4\xA0", "a"},
                             {"\xC4\xA0"
                              "a",
                              "b"}});
  EXPECT_EQ(Encode(v, "ab ba ab ba ab"), (std::vector<TokenId>{3, 2, 1, 0, 2, 3, 2, 1, 0, 2, 3}));
}

TEST_P(BpeGoldenTest, ConcurrentEncodesAgree) {
  std::string text;
  for (const std::string& c : cases_) text += c + "\n";
  std::vector<TokenId> want;
  encoder_->Encode(text, &want);
  std::vector<std::vector<TokenId>> got(4);
  std::vector<std::thread> threads;
  for (auto& g : got) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        g.clear();
        encoder_->Encode(text, &g);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& g : got) EXPECT_EQ(g, want);
}

TEST(BpeEncoderTest, FirstOfRepeatedMergesKeepsItsRank) {
  const Vocab v =
      MakeVocab("gpt-2", {"a", "b", "c", "ab", "bc"}, {{"b", "c"}, {"a", "b"}, {"b", "c"}});
  EXPECT_EQ(Encode(v, "abc"), (std::vector<TokenId>{0, 4}));
}

TEST(BpeEncoderTest, UnknownPreTokenizerIsRefusedWithTheSupportedList) {
  Vocab v = MakeVocab("gpt-2", {"a"}, {});
  v.pre = "made-up-pre";
  auto encoder = BpeEncoder::Create(v);
  ASSERT_FALSE(encoder.ok());
  const std::string message = encoder.status().message();
  EXPECT_NE(message.find("'made-up-pre'"), std::string::npos) << message;
  for (std::string_view name : BpeEncoder::SupportedPreTokenizers()) {
    EXPECT_NE(message.find(std::string(name)), std::string::npos) << name;
  }
}

TEST(BpeEncoderTest, SupportsTheRequiredPreTokenizers) {
  for (const char* pre : {"default", "gpt-2", "gpt2", "llama-bpe", "llama3", "llama-v3", "qwen2",
                          "smollm", "deepseek-llm", "deepseek-coder", "falcon", "mpt", "starcoder",
                          "refact", "command-r", "gpt-neox"}) {
    const Vocab v = MakeVocab(pre, {"a"}, {});
    EXPECT_TRUE(BpeEncoder::Create(v).ok()) << pre;
  }
}

TEST(BpeEncoderTest, RefusesSentencePieceVocabs) {
  Vocab v = MakeVocab("default", {"a"}, {});
  v.model = Vocab::Model::kSpm;
  EXPECT_FALSE(BpeEncoder::Create(v).ok());
}

TEST(BpeEncoderTest, InvalidUtf8NeverCrashes) {
  const Vocab v = MakeVocab("llama-bpe", {"a"}, {});
  for (std::string_view text :
       {std::string_view("\xFF\xFE\x80"), std::string_view("a\xE4\xB8"),
        std::string_view("\xF4\x90\x80\x80"), std::string_view("\xED\xA0\x80", 3),
        std::string_view("\xC0\x80z", 3)}) {
    (void)Encode(v, text);  // tokens of U+FFFD's bytes are absent: only "a" remains
  }
  EXPECT_EQ(Encode(v,
                   "a\xFF"
                   "a"),
            (std::vector<TokenId>{0, 0}));
}

TEST(ByteLevelTest, AlphabetIsABijectionOverAllBytes) {
  std::string all;
  for (int b = 0; b < 256; ++b) {
    all += byte_level::ByteToUtf8(static_cast<uint8_t>(b));
    EXPECT_EQ(byte_level::CodepointToByte(byte_level::ByteToCodepoint(static_cast<uint8_t>(b))), b);
  }
  std::string want;
  for (int b = 0; b < 256; ++b) want.push_back(static_cast<char>(b));
  EXPECT_EQ(ByteLevelDecode(all), want);
}

TEST(ByteLevelTest, KnownCharacters) {
  EXPECT_EQ(byte_level::ByteToCodepoint(' '), 0x120u);   // Ġ
  EXPECT_EQ(byte_level::ByteToCodepoint('\n'), 0x10Au);  // Ċ
  EXPECT_EQ(byte_level::ByteToCodepoint('!'), 0x21u);
  EXPECT_EQ(byte_level::ByteToCodepoint(0xAD), 0x143u);  // the last one
  EXPECT_EQ(ByteLevelDecode("\xC4\xA0hello"), " hello");
  EXPECT_EQ(ByteLevelDecode("\xC4\x8A"), "\n");
}

TEST(ByteLevelTest, CharactersOutsideTheAlphabetStayAsTheyAre) {
  EXPECT_EQ(ByteLevelDecode("\xE4\xB8\xAD"), "\xE4\xB8\xAD");    // 中
  EXPECT_EQ(ByteLevelDecode("\xC2\xA0x"), "\xC2\xA0x");          // U+00A0 is not mapped
  EXPECT_EQ(ByteLevelDecode("<|endoftext|>"), "<|endoftext|>");  // ASCII maps to itself
  EXPECT_EQ(ByteLevelDecode("\xFF"), "\xFF");                    // invalid UTF-8 kept
}

}  // namespace
}  // namespace mneme
