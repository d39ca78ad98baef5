// Tokenizer facade: special-token splitting, BOS/EOS, the SPM space prefix,
// token -> piece rendering and Decode. Expected ids come from llama.cpp's
// test vectors (ggml-vocab-*.gguf.out) or follow by hand from llama.cpp's
// rules on small hand-made vocabularies.
#include "tokenizer/tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "gguf/gguf.h"

namespace mneme {
namespace {

using Ids = std::vector<TokenId>;

const Tokenizer& Shared(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;  // loaded once per binary
  auto it = cache.find(name);
  if (it != cache.end()) return *it->second;
  Result<gguf::GgufFile> file = gguf::GgufFile::Open(std::string(MNEME_SHARED_DIR) +
                                                     "/models/vocab/ggml-vocab-" + name + ".gguf");
  CHECK(file.ok()) << file.status().ToString();
  Result<Tokenizer> t = Tokenizer::FromGguf(*file);
  CHECK(t.ok()) << t.status().ToString();
  return *cache.emplace(name, std::make_unique<Tokenizer>(std::move(t).value())).first->second;
}

Tokenizer::EncodeOptions Plain() {
  return {.add_special = false, .parse_special = false};
}
Tokenizer::EncodeOptions ParseSpecial() {
  return {.add_special = false, .parse_special = true};
}

bool Contains(const Ids& ids, TokenId id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// A hand-made SPM vocabulary: <unk> <s> </s>, byte tokens, then `extra`.
Vocab SmallSpm(const std::vector<std::pair<std::string, TokenType>>& extra) {
  Vocab v;
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.types = {TokenType::kUnknown, TokenType::kControl, TokenType::kControl};
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof(hex), "<0x%02X>", b);
    v.tokens.push_back(hex);
    v.types.push_back(TokenType::kByte);
  }
  for (const auto& [text, type] : extra) {
    v.tokens.push_back(text);
    v.types.push_back(type);
  }
  v.unk_id = 0;
  v.bos_id = 1;
  v.eos_id = 2;
  v.add_bos = true;
  v.add_space_prefix = true;
  EXPECT_TRUE(v.Finalize().ok());
  return v;
}

TEST(TokenizerTest, SpmAddsBosAndSpacePrefix) {
  const Tokenizer& t = Shared("llama-spm");
  EXPECT_EQ(t.Encode("Hello world"), (Ids{1, 15043, 3186}));
  EXPECT_EQ(t.Encode("Hello world", Plain()), (Ids{15043, 3186}));
  EXPECT_EQ(t.Encode(""), (Ids{1}));
  EXPECT_EQ(t.Encode("", Plain()), (Ids{}));
}

TEST(TokenizerTest, SpmSpecialTokensOnlyWithParseSpecial) {
  const Tokenizer& t = Shared("llama-spm");
  // After a special token the next text fragment gets the "▁" prefix again.
  EXPECT_EQ(t.Encode("<s>Hello world", ParseSpecial()), (Ids{1, 15043, 3186}));
  EXPECT_EQ(t.Encode("Hello</s>world", ParseSpecial()), (Ids{15043, 2, 3186}));
  // <unk> has the unknown type: also matched only with parse_special.
  EXPECT_EQ(t.Encode("<unk>", ParseSpecial()), (Ids{0}));
  Ids plain = t.Encode("<s>Hello</s><unk>", Plain());
  EXPECT_FALSE(Contains(plain, 0));
  EXPECT_FALSE(Contains(plain, 1));
  EXPECT_FALSE(Contains(plain, 2));
  EXPECT_EQ(t.Decode(plain), "<s>Hello</s><unk>");
}

TEST(TokenizerTest, LongestSpecialTokenWins) {
  Vocab v = SmallSpm({{"\xE2\x96\x81", TokenType::kNormal},
                      {"x", TokenType::kNormal},
                      {"<|a|>", TokenType::kControl},
                      {"<|a|>x", TokenType::kControl}});
  Result<Tokenizer> t = Tokenizer::FromVocab(std::move(v));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const TokenId a = t->vocab().Find("<|a|>");
  const TokenId ax = t->vocab().Find("<|a|>x");
  const TokenId x = t->vocab().Find("x");
  const TokenId space = t->vocab().Find("\xE2\x96\x81");
  // "<|a|>x" is cut out first, so "<|a|>" never splits it.
  EXPECT_EQ(t->Encode("<|a|>x<|a|>", ParseSpecial()), (Ids{ax, a}));
  EXPECT_EQ(t->Encode("<|a|><|a|>x", ParseSpecial()), (Ids{a, ax}));
  EXPECT_EQ(t->Encode("x<|a|>x", ParseSpecial()), (Ids{space, x, ax}));
}

TEST(TokenizerTest, UserDefinedTokensMatchWithoutParseSpecial) {
  Vocab v = SmallSpm({{"\xE2\x96\x81", TokenType::kNormal},
                      {"x", TokenType::kNormal},
                      {"<tool>", TokenType::kUserDefined},
                      {"<ctl>", TokenType::kControl}});
  Result<Tokenizer> t = Tokenizer::FromVocab(std::move(v));
  ASSERT_TRUE(t.ok());
  const TokenId tool = t->vocab().Find("<tool>");
  const TokenId ctl = t->vocab().Find("<ctl>");
  Ids ids = t->Encode("<tool><ctl>", Plain());
  EXPECT_EQ(ids.front(), tool);
  EXPECT_FALSE(Contains(ids, ctl));
  EXPECT_EQ(t->Encode("<tool><ctl>", ParseSpecial()), (Ids{tool, ctl}));
  // User-defined tokens render as their text even without render_special.
  EXPECT_EQ(t->TokenToPiece(tool), "<tool>");
  EXPECT_EQ(t->TokenToPiece(ctl), "");
  EXPECT_EQ(t->TokenToPiece(ctl, true), "<ctl>");
}

TEST(TokenizerTest, StripAttributesEatAdjacentWhitespace) {
  Vocab v = SmallSpm({{"\xE2\x96\x81", TokenType::kNormal},
                      {"x", TokenType::kNormal},
                      {"\xE2\x96\x81x", TokenType::kNormal},
                      {"<L>", TokenType::kControl},
                      {"<R>", TokenType::kControl}});
  v.attrs[v.Find("<L>")] |= kAttrLstrip;
  v.attrs[v.Find("<R>")] |= kAttrRstrip;
  Result<Tokenizer> t = Tokenizer::FromVocab(std::move(v));
  ASSERT_TRUE(t.ok());
  const TokenId l = t->vocab().Find("<L>");
  const TokenId r = t->vocab().Find("<R>");
  const TokenId sx = t->vocab().Find("\xE2\x96\x81x");
  EXPECT_EQ(t->Encode("x \t<L>", ParseSpecial()), (Ids{sx, l}));
  EXPECT_EQ(t->Encode("<R> \n x", ParseSpecial()), (Ids{r, sx}));
  EXPECT_EQ(t->Encode("<R>  ", ParseSpecial()), (Ids{r}));
}

TEST(TokenizerTest, Phi3SpecialTokensStripTheNewlineAfterThem) {
  const Tokenizer& t = Shared("phi-3");
  // <|user|> has rstrip (llama.cpp, by model name): "\n" is dropped and
  // "Hello" starts a new fragment, so it gets the "▁" prefix.
  EXPECT_EQ(t.Encode("<|user|>\nHello", ParseSpecial()), (Ids{32010, 15043}));
  // <s> does not strip.
  EXPECT_EQ(t.Encode("<s>\n", ParseSpecial()), (Ids{1, 29871, 13}));
}

TEST(TokenizerTest, AddsEosWhenTheVocabSaysSo) {
  Vocab v = SmallSpm({{"\xE2\x96\x81x", TokenType::kNormal}});
  v.add_eos = true;
  Result<Tokenizer> t = Tokenizer::FromVocab(std::move(v));
  ASSERT_TRUE(t.ok());
  const TokenId sx = t->vocab().Find("\xE2\x96\x81x");
  EXPECT_EQ(t->Encode("x"), (Ids{1, sx, 2}));
  EXPECT_EQ(t->Encode("x", Plain()), (Ids{sx}));
}

TEST(TokenizerTest, RefusesAddBosWithoutBos) {
  Vocab v = SmallSpm({});
  v.bos_id = kNoToken;
  EXPECT_FALSE(Tokenizer::FromVocab(std::move(v)).ok());
}

TEST(TokenizerTest, RefusesUnknownBpePreTokenizer) {
  Vocab v;
  v.model = Vocab::Model::kBpe;
  v.model_name = "gpt2";
  v.pre = "no-such-pre";
  v.tokens = {"a", "b", "ab"};
  v.merges = {{"a", "b"}};
  ASSERT_TRUE(v.Finalize().ok());
  Result<Tokenizer> t = Tokenizer::FromVocab(std::move(v));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("no-such-pre"), std::string::npos) << t.status().message();
}

TEST(TokenizerTest, SpmPieces) {
  const Tokenizer& t = Shared("llama-spm");
  EXPECT_EQ(t.TokenToPiece(15043), " Hello");
  EXPECT_EQ(t.TokenToPiece(13), "\n");          // <0x0A>
  EXPECT_EQ(t.TokenToPiece(3 + 0xE2), "\xE2");  // <0xE2>, half a character
  EXPECT_EQ(t.TokenToPiece(1), "");
  EXPECT_EQ(t.TokenToPiece(1, true), "<s>");
  EXPECT_EQ(t.TokenToPiece(0), "");
  EXPECT_EQ(t.TokenToPiece(0, true), "<unk>");
  EXPECT_EQ(t.TokenToPiece(-1), "");
  EXPECT_EQ(t.TokenToPiece(32000), "");
}

TEST(TokenizerTest, SpmDecodeRemovesThePrefixSpaceOnce) {
  const Tokenizer& t = Shared("llama-spm");
  EXPECT_EQ(t.Decode(Ids{15043, 3186}), "Hello world");
  EXPECT_EQ(t.Decode(Ids{29871, 15043, 3186}), " Hello world");
  // BOS renders as nothing, so the first visible piece loses the space.
  EXPECT_EQ(t.Decode(Ids{1, 15043}), "Hello");
  EXPECT_EQ(t.Decode(Ids{1, 15043}, /*render_special=*/true), "<s> Hello");
  EXPECT_EQ(t.Decode(Ids{}), "");
  // Ids outside the vocabulary are skipped, never a crash.
  EXPECT_EQ(t.Decode(Ids{15043, -5, 99999999}), "Hello");
}

TEST(TokenizerTest, BpeSpecialTokensAndPieces) {
  const Tokenizer& t = Shared("gpt-2");
  EXPECT_EQ(t.Encode("Hello world"), (Ids{15496, 995}));  // gpt-2 does not add BOS
  EXPECT_EQ(t.Encode("Hello<|endoftext|>", ParseSpecial()), (Ids{15496, 50256}));
  EXPECT_FALSE(Contains(t.Encode("Hello<|endoftext|>", Plain()), 50256));
  EXPECT_EQ(t.TokenToPiece(995), " world");  // "Ġworld"
  EXPECT_EQ(t.TokenToPiece(50256), "");
  EXPECT_EQ(t.TokenToPiece(50256, true), "<|endoftext|>");
  // No prefix space to remove for BPE.
  EXPECT_EQ(t.Decode(Ids{995}), " world");
}

TEST(TokenizerTest, LlamaBpeAddsBos) {
  const Tokenizer& t = Shared("llama-bpe");
  Ids ids = t.Encode("Hello");
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.front(), 128000);
  EXPECT_EQ(t.Encode("<|start_header_id|>user<|end_header_id|>", ParseSpecial()).front(), 128006);
}

TEST(TokenizerTest, DeepseekFimTokensBecomeControlTokens) {
  // The file types "<｜fim▁hole｜>" as user-defined; llama.cpp recognizes the
  // FIM text and makes it a control token: not matched as plain text and
  // rendered only with render_special. "<|User|>" stays user-defined.
  const Tokenizer& t = Shared("deepseek-coder");
  const std::string hole =
      "<\xEF\xBD\x9C"
      "fim\xE2\x96\x81hole\xEF\xBD\x9C>";
  const TokenId hole_id = t.vocab().Find(hole);
  ASSERT_EQ(hole_id, 32015);
  EXPECT_FALSE(Contains(t.Encode(hole, Plain()), hole_id));
  EXPECT_EQ(t.Encode(hole, ParseSpecial()), (Ids{hole_id}));
  EXPECT_EQ(t.TokenToPiece(hole_id), "");
  EXPECT_EQ(t.TokenToPiece(hole_id, true), hole);
  EXPECT_EQ(t.Encode("<|User|>", Plain()), (Ids{32019}));
  EXPECT_EQ(t.TokenToPiece(32019), "<|User|>");
}

TEST(TokenizerTest, SpecialTokenListIsLongestFirst) {
  const Tokenizer& t = Shared("qwen2");
  const auto& specials = t.special_tokens();
  ASSERT_FALSE(specials.empty());
  for (size_t i = 1; i < specials.size(); ++i) {
    EXPECT_GE(t.vocab().tokens[specials[i - 1]].size(), t.vocab().tokens[specials[i]].size());
  }
}

}  // namespace
}  // namespace mneme
