// Vocab::FromGguf: the shared vocab files load with llama.cpp's meaning, and
// malformed or unsupported tokenizer metadata is refused with a message that
// names the file and the problem.
#include "tokenizer/vocab.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gguf/gguf_writer.h"

namespace mneme {
namespace {

using gguf::GgufFile;
using gguf::GgufWriter;
using gguf::MetaValue;
using ::testing::HasSubstr;

std::string VocabPath(const std::string& name) {
  return std::string(MNEME_SHARED_DIR) + "/models/vocab/ggml-vocab-" + name + ".gguf";
}

Result<Vocab> LoadShared(const std::string& name) {
  Result<GgufFile> file = GgufFile::Open(VocabPath(name));
  if (!file.ok()) return file.status();
  return Vocab::FromGguf(*file);
}

// A small SentencePiece-style vocabulary; tests change keys before loading.
GgufWriter SpmWriter() {
  GgufWriter w;
  w.Set("general.architecture", MetaValue::String("llama"));
  w.Set("tokenizer.ggml.model", MetaValue::String("llama"));
  w.Set("tokenizer.ggml.tokens",
        MetaValue::StringArray({"<unk>", "<s>", "</s>", "a", "\xE2\x96\x81"}));
  const float scores[] = {0, 0, 0, -1, -2};
  w.Set("tokenizer.ggml.scores", MetaValue::Float32Array(scores));
  const int32_t types[] = {2, 3, 3, 1, 1};
  w.Set("tokenizer.ggml.token_type", MetaValue::Int32Array(types));
  return w;
}

GgufWriter BpeWriter() {
  GgufWriter w;
  w.Set("tokenizer.ggml.model", MetaValue::String("gpt2"));
  w.Set("tokenizer.ggml.pre", MetaValue::String("gpt-2"));
  w.Set("tokenizer.ggml.tokens", MetaValue::StringArray({"a", "b", "ab", "<|endoftext|>"}));
  w.Set("tokenizer.ggml.merges", MetaValue::StringArray({"a b"}));
  return w;
}

Result<Vocab> LoadWritten(const GgufWriter& w) {
  std::vector<uint8_t> bytes = w.Serialize();
  Result<GgufFile> file = GgufFile::FromBytes(bytes, "test.gguf");
  if (!file.ok()) return file.status();
  return Vocab::FromGguf(*file);
}

TEST(VocabSharedTest, LlamaSpm) {
  Result<Vocab> v = LoadShared("llama-spm");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->model, Vocab::Model::kSpm);
  EXPECT_EQ(v->model_name, "llama");
  EXPECT_EQ(v->size(), 32000u);
  EXPECT_EQ(v->bos_id, 1);
  EXPECT_EQ(v->eos_id, 2);
  EXPECT_EQ(v->unk_id, 0);
  EXPECT_EQ(v->pad_id, kNoToken);
  EXPECT_TRUE(v->add_bos);
  EXPECT_FALSE(v->add_eos);
  EXPECT_TRUE(v->add_space_prefix);
  EXPECT_EQ(v->tokens[13], "<0x0A>");
  EXPECT_EQ(v->types[13], TokenType::kByte);
  EXPECT_TRUE(v->HasAttr(0, kAttrUnknown));
  EXPECT_TRUE(v->HasAttr(1, kAttrControl));
  EXPECT_TRUE(v->HasAttr(13, kAttrByte));
  EXPECT_EQ(v->Find("\xE2\x96\x81the"), 278);  // "▁the"
  EXPECT_EQ(v->Find("no such token"), kNoToken);
  EXPECT_TRUE(v->IsEog(2));
  EXPECT_FALSE(v->IsEog(1));
  EXPECT_TRUE(v->merges.empty());
}

TEST(VocabSharedTest, Phi3MarksSpecialTokensRstrip) {
  Result<Vocab> v = LoadShared("phi-3");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->eos_id, 32000);
  EXPECT_EQ(v->pad_id, 32000);
  TokenId user = v->Find("<|user|>");
  TokenId end = v->Find("<|end|>");
  ASSERT_NE(user, kNoToken);
  ASSERT_NE(end, kNoToken);
  // general.name "Phi3": llama.cpp gives the special tokens rstrip, except
  // <unk>, <s> and <|endoftext|>; "</s>" (user-defined here) gets it too.
  EXPECT_TRUE(v->HasAttr(user, kAttrRstrip));
  EXPECT_TRUE(v->HasAttr(v->Find("</s>"), kAttrRstrip));
  EXPECT_FALSE(v->HasAttr(1, kAttrRstrip));
  EXPECT_FALSE(v->HasAttr(32000, kAttrRstrip));
  // <|end|> ends a turn.
  EXPECT_TRUE(v->IsEog(end));
  EXPECT_EQ(v->eot_id, end);
}

TEST(VocabSharedTest, Gpt2) {
  Result<Vocab> v = LoadShared("gpt-2");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->model, Vocab::Model::kBpe);
  EXPECT_EQ(v->pre, "gpt-2");
  EXPECT_EQ(v->size(), 50257u);
  ASSERT_EQ(v->merges.size(), 50000u);
  EXPECT_EQ(v->merges[0], std::make_pair(std::string("\xC4\xA0"), std::string("t")));  // "Ġ t"
  EXPECT_EQ(v->bos_id, 50256);
  EXPECT_EQ(v->eos_id, 50256);
  EXPECT_FALSE(v->add_bos);
  EXPECT_FALSE(v->add_space_prefix);
  EXPECT_TRUE(v->HasAttr(50256, kAttrControl));
}

TEST(VocabSharedTest, LlamaBpeAddsBosByDefault) {
  // The file has no add_bos_token key; llama.cpp turns BOS on for llama-bpe.
  Result<Vocab> v = LoadShared("llama-bpe");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->pre, "llama-bpe");
  EXPECT_TRUE(v->add_bos);
  EXPECT_EQ(v->bos_id, 128000);
  EXPECT_TRUE(v->IsEog(v->Find("<|eot_id|>")));
  EXPECT_TRUE(v->IsEog(128001));
}

TEST(VocabSharedTest, AllSharedVocabsLoad) {
  for (const char* name : {"llama-spm", "phi-3", "gpt-2", "falcon", "deepseek-coder", "starcoder",
                           "llama-bpe", "qwen2"}) {
    Result<Vocab> v = LoadShared(name);
    ASSERT_TRUE(v.ok()) << name << ": " << v.status().ToString();
    EXPECT_EQ(v->tokens.size(), v->attrs.size()) << name;
    EXPECT_EQ(v->tokens.size(), v->token_to_id.size()) << name;
  }
}

TEST(VocabTest, SpmDefaultsWithoutIdKeys) {
  Result<Vocab> v = LoadWritten(SpmWriter());
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->bos_id, 1);
  EXPECT_EQ(v->eos_id, 2);
  EXPECT_EQ(v->unk_id, 0);
  EXPECT_TRUE(v->add_bos);
  EXPECT_TRUE(v->add_space_prefix);
  EXPECT_EQ(v->pre, "default");
  EXPECT_FLOAT_EQ(v->scores[4], -2.0f);
}

TEST(VocabTest, ReadsFlagsAndIds) {
  GgufWriter w = SpmWriter();
  w.Set("tokenizer.ggml.add_bos_token", MetaValue::Bool(false));
  w.Set("tokenizer.ggml.add_eos_token", MetaValue::Bool(true));
  w.Set("tokenizer.ggml.add_space_prefix", MetaValue::Bool(false));
  w.Set("tokenizer.ggml.eos_token_id", MetaValue::Uint32(3));
  w.Set("tokenizer.ggml.padding_token_id", MetaValue::Uint32(4294967295u));
  w.Set("tokenizer.ggml.seperator_token_id", MetaValue::Uint32(4294967295u));
  w.Set("tokenizer.ggml.unknown_token_id", MetaValue::Int32(-1));
  Result<Vocab> v = LoadWritten(w);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_FALSE(v->add_bos);
  EXPECT_TRUE(v->add_eos);
  EXPECT_FALSE(v->add_space_prefix);
  EXPECT_EQ(v->eos_id, 3);
  EXPECT_EQ(v->pad_id, kNoToken);
  EXPECT_EQ(v->sep_id, kNoToken);
  EXPECT_EQ(v->unk_id, kNoToken);
  EXPECT_TRUE(v->IsEog(3));
}

TEST(VocabTest, IntegerScoresAreAccepted) {
  GgufWriter w = SpmWriter();
  const int32_t scores[] = {0, 0, 0, -7, 3};
  w.Set("tokenizer.ggml.scores", MetaValue::Int32Array(scores));
  Result<Vocab> v = LoadWritten(w);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_FLOAT_EQ(v->scores[3], -7.0f);
}

TEST(VocabTest, RefusesUnsupportedModels) {
  for (const char* model : {"bert", "t5", "rwkv", "none", "no_vocab", "plamo2", ""}) {
    GgufWriter w = SpmWriter();
    w.Set("tokenizer.ggml.model", MetaValue::String(model));
    Result<Vocab> v = LoadWritten(w);
    ASSERT_FALSE(v.ok()) << model;
    EXPECT_EQ(v.status().code(), StatusCode::kUnimplemented) << model;
    EXPECT_THAT(v.status().message(), HasSubstr("test.gguf"));
    std::string quoted(1, '\'');
    quoted.append(model).push_back('\'');
    EXPECT_THAT(v.status().message(), HasSubstr(quoted));
  }
}

TEST(VocabTest, RefusesMissingModelKey) {
  GgufWriter w;
  w.Set("tokenizer.ggml.tokens", MetaValue::StringArray({"a"}));
  Result<Vocab> v = LoadWritten(w);
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("tokenizer.ggml.model"));
}

TEST(VocabTest, RefusesMalformedArrays) {
  struct Case {
    const char* what;
    void (*mutate)(GgufWriter&);
    const char* message;
  };
  const Case cases[] = {
      {"no tokens",
       [](GgufWriter& w) { w.Set("tokenizer.ggml.tokens", MetaValue::StringArray({})); }, "empty"},
      {"short scores",
       [](GgufWriter& w) {
         const float s[] = {0, 0};
         w.Set("tokenizer.ggml.scores", MetaValue::Float32Array(s));
       },
       "tokenizer.ggml.scores"},
      {"long types",
       [](GgufWriter& w) {
         const int32_t t[] = {1, 1, 1, 1, 1, 1};
         w.Set("tokenizer.ggml.token_type", MetaValue::Int32Array(t));
       },
       "tokenizer.ggml.token_type"},
      {"string scores",
       [](GgufWriter& w) {
         w.Set("tokenizer.ggml.scores", MetaValue::StringArray({"a", "b", "c", "d", "e"}));
       },
       "tokenizer.ggml.scores"},
      {"duplicate token",
       [](GgufWriter& w) {
         w.Set("tokenizer.ggml.tokens", MetaValue::StringArray({"<unk>", "<s>", "</s>", "a", "a"}));
       },
       "duplicate token 'a'"},
      {"bos out of range",
       [](GgufWriter& w) { w.Set("tokenizer.ggml.bos_token_id", MetaValue::Uint32(5)); },
       "tokenizer.ggml.bos_token_id"},
      {"pad out of range",
       [](GgufWriter& w) { w.Set("tokenizer.ggml.padding_token_id", MetaValue::Uint32(70000)); },
       "70000"},
      {"bos not an integer",
       [](GgufWriter& w) { w.Set("tokenizer.ggml.bos_token_id", MetaValue::String("1")); },
       "tokenizer.ggml.bos_token_id"},
      {"add_bos without bos",
       [](GgufWriter& w) { w.Set("tokenizer.ggml.bos_token_id", MetaValue::Uint32(4294967295u)); },
       "BOS"},
  };
  for (const Case& c : cases) {
    GgufWriter w = SpmWriter();
    c.mutate(w);
    Result<Vocab> v = LoadWritten(w);
    ASSERT_FALSE(v.ok()) << c.what;
    EXPECT_THAT(v.status().message(), HasSubstr("test.gguf")) << c.what;
    EXPECT_THAT(v.status().message(), HasSubstr(c.message)) << c.what;
  }
}

TEST(VocabTest, EmptyTokenTextBecomesPlaceholder) {
  GgufWriter w = SpmWriter();
  w.Set("tokenizer.ggml.tokens", MetaValue::StringArray({"<unk>", "<s>", "</s>", "", "b"}));
  Result<Vocab> v = LoadWritten(w);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->tokens[3], "[EMPTY_3]");
}

TEST(VocabTest, BpeMergesSplitAtFirstSpaceAfterTheFirstByte) {
  GgufWriter w = BpeWriter();
  w.Set("tokenizer.ggml.merges", MetaValue::StringArray({"a b", " x y", "p q r"}));
  Result<Vocab> v = LoadWritten(w);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  ASSERT_EQ(v->merges.size(), 3u);
  EXPECT_EQ(v->merges[0], std::make_pair(std::string("a"), std::string("b")));
  EXPECT_EQ(v->merges[1], std::make_pair(std::string(" x"), std::string("y")));
  EXPECT_EQ(v->merges[2], std::make_pair(std::string("p"), std::string("q r")));
  EXPECT_FALSE(v->add_bos);
  EXPECT_FALSE(v->add_space_prefix);
  // No token_type array: every token is normal, even <|endoftext|> ... except
  // that llama.cpp makes end-of-generation texts control tokens.
  EXPECT_TRUE(v->HasAttr(0, kAttrNormal));
  EXPECT_TRUE(v->HasAttr(3, kAttrControl));
  EXPECT_TRUE(v->IsEog(3));
}

TEST(VocabTest, BpeRequiresWellFormedMerges) {
  GgufWriter no_merges;
  no_merges.Set("tokenizer.ggml.model", MetaValue::String("gpt2"));
  no_merges.Set("tokenizer.ggml.tokens", MetaValue::StringArray({"a", "b"}));
  Result<Vocab> v = LoadWritten(no_merges);
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("tokenizer.ggml.merges"));

  GgufWriter bad = BpeWriter();
  bad.Set("tokenizer.ggml.merges", MetaValue::StringArray({"ab"}));
  v = LoadWritten(bad);
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("merge #0 'ab'"));
}

TEST(VocabTest, BpeMissingOrEmptyPreIsDefault) {
  GgufWriter empty = BpeWriter();
  empty.Set("tokenizer.ggml.pre", MetaValue::String(""));
  Result<Vocab> v = LoadWritten(empty);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->pre, "default");

  GgufWriter missing;
  missing.Set("tokenizer.ggml.model", MetaValue::String("gpt2"));
  missing.Set("tokenizer.ggml.tokens", MetaValue::StringArray({"a", "b", "ab"}));
  missing.Set("tokenizer.ggml.merges", MetaValue::StringArray({"a b"}));
  v = LoadWritten(missing);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->pre, "default");
}

TEST(VocabTest, FinalizeBuildsLookupAndAttributes) {
  Vocab v;
  v.tokens = {"<unk>", "x", "y"};
  v.types = {TokenType::kUnknown, TokenType::kNormal, TokenType::kUserDefined};
  v.unk_id = 0;
  ASSERT_TRUE(v.Finalize().ok());
  EXPECT_EQ(v.Find("y"), 2);
  EXPECT_TRUE(v.HasAttr(2, kAttrUserDefined));
  EXPECT_EQ(v.scores.size(), 3u);
  v.tokens.push_back("x");
  v.types.push_back(TokenType::kNormal);
  v.scores.push_back(0);
  EXPECT_FALSE(v.Finalize().ok());
}

}  // namespace
}  // namespace mneme
