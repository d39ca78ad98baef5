// ModelConfig::FromGguf on the real stories260K.gguf (values documented in
// ../shared/models/README.md) and on tiny synthetic files that each exercise
// one key: defaults, per-architecture settings, RoPE scaling and refusals.
#include "model/model_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/tiny_model_test_util.h"

namespace mneme::model {
namespace {

using ::testing::HasSubstr;
using testing::MakeTinyModel;
using testing::TinyModel;
using testing::TinySpec;

Result<ModelConfig> ConfigOf(const TinyModel& m) {
  MNEME_ASSIGN_OR_RETURN(gguf::GgufFile file, m.Build());
  return ModelConfig::FromGguf(file);
}

TEST(ModelConfigTest, Stories260KAsDocumented) {
  Result<gguf::GgufFile> file = gguf::GgufFile::Open(MNEME_SHARED_DIR "/models/stories260K.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  Result<ModelConfig> c = ModelConfig::FromGguf(*file);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->arch, Arch::kLlama);
  EXPECT_EQ(c->dim, 64);
  EXPECT_EQ(c->num_layers, 5);
  EXPECT_EQ(c->num_heads, 8);
  EXPECT_EQ(c->num_kv_heads, 4);
  EXPECT_EQ(c->head_dim, 8);
  EXPECT_EQ(c->ffn_dim, 172);
  EXPECT_EQ(c->vocab_size, 512);
  EXPECT_EQ(c->context_length, 2048);
  EXPECT_FLOAT_EQ(c->rms_eps, 1e-5f);
  EXPECT_EQ(c->rope_type, RopeType::kNormal);
  EXPECT_EQ(c->rope_dims, 8);
  EXPECT_EQ(c->rope_freq_base, 10000.f);  // no rope.freq_base key: the default
  EXPECT_EQ(c->rope_freq_scale, 1.f);
  EXPECT_FALSE(c->tied_embeddings);  // output.weight is an explicit copy
  EXPECT_FALSE(c->has_rope_freqs);
  EXPECT_FALSE(c->has_qkv_bias);
  EXPECT_FALSE(c->has_output_bias);
  EXPECT_FALSE(c->has_qk_norm);
  EXPECT_EQ(c->q_dim(), 64);
  EXPECT_EQ(c->kv_dim(), 32);
  EXPECT_THAT(c->DebugString(), HasSubstr("num_kv_heads = 4\n"));
}

TEST(ModelConfigTest, ArchitecturesSetRopeTypeAndExtras) {
  Result<ModelConfig> llama = ConfigOf(MakeTinyModel({.arch = "llama"}));
  ASSERT_TRUE(llama.ok()) << llama.status().ToString();
  EXPECT_EQ(llama->rope_type, RopeType::kNormal);
  EXPECT_FALSE(llama->has_qkv_bias);

  Result<ModelConfig> qwen2 = ConfigOf(MakeTinyModel({.arch = "qwen2"}));
  ASSERT_TRUE(qwen2.ok()) << qwen2.status().ToString();
  EXPECT_EQ(qwen2->arch, Arch::kQwen2);
  EXPECT_EQ(qwen2->rope_type, RopeType::kNeox);
  EXPECT_TRUE(qwen2->has_qkv_bias);
  EXPECT_FALSE(qwen2->has_qk_norm);

  Result<ModelConfig> qwen3 = ConfigOf(MakeTinyModel({.arch = "qwen3"}));
  ASSERT_TRUE(qwen3.ok()) << qwen3.status().ToString();
  EXPECT_EQ(qwen3->arch, Arch::kQwen3);
  EXPECT_EQ(qwen3->rope_type, RopeType::kNeox);
  EXPECT_TRUE(qwen3->has_qk_norm);
  EXPECT_FALSE(qwen3->has_qkv_bias);
}

TEST(ModelConfigTest, UnsupportedArchitectureIsRefusedByName) {
  TinyModel m = MakeTinyModel({});
  m.arch = "gpt2";
  Result<ModelConfig> c = ConfigOf(m);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(c.status().message(), HasSubstr("'gpt2'"));
  EXPECT_THAT(c.status().message(), HasSubstr("llama, qwen2, qwen3"));
}

TEST(ModelConfigTest, DefaultsFollowLlamaCpp) {
  TinyModel m = MakeTinyModel({.dim = 32, .heads = 4, .kv_heads = 4});
  m.Unset("llama.attention.head_count_kv");
  Result<ModelConfig> c = ConfigOf(m);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->num_kv_heads, 4);  // = head_count
  EXPECT_EQ(c->head_dim, 8);      // = dim / heads
  EXPECT_EQ(c->rope_dims, 8);     // = head_dim
  EXPECT_EQ(c->rope_freq_base, 10000.f);
  EXPECT_EQ(c->vocab_size, 40);  // llama.vocab_size (no tokenizer)
}

TEST(ModelConfigTest, ExplicitKeysWin) {
  TinyModel m = MakeTinyModel({.arch = "qwen3"});
  m.Set("qwen3.attention.key_length", gguf::MetaValue::Uint32(16));
  m.Set("qwen3.attention.value_length", gguf::MetaValue::Uint32(16));
  m.Set("qwen3.rope.dimension_count", gguf::MetaValue::Uint32(8));  // partial rotation
  m.Set("qwen3.rope.freq_base", gguf::MetaValue::Float32(1e6f));
  m.Set("qwen3.attention.layer_norm_rms_epsilon", gguf::MetaValue::Float32(1e-6f));
  m.Set("qwen3.context_length", gguf::MetaValue::Uint64(40960));
  Result<ModelConfig> c = ConfigOf(m);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->head_dim, 16);
  EXPECT_EQ(c->q_dim(), 64);
  EXPECT_EQ(c->rope_dims, 8);
  EXPECT_EQ(c->rope_freq_base, 1e6f);
  EXPECT_FLOAT_EQ(c->rms_eps, 1e-6f);
  EXPECT_EQ(c->context_length, 40960);
}

TEST(ModelConfigTest, VocabSizeComesFromTheTokenizerFirst) {
  TinyModel m = MakeTinyModel({.vocab = 40});
  std::vector<std::string> tokens;
  for (int i = 0; i < 40; ++i) {
    std::string token = std::to_string(i);
    token.insert(token.begin(), 't');
    tokens.push_back(token);
  }
  m.Set("tokenizer.ggml.tokens", gguf::MetaValue::StringArray(tokens));
  m.Set("llama.vocab_size", gguf::MetaValue::Uint32(999));
  Result<ModelConfig> c = ConfigOf(m);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->vocab_size, 40);

  m.Unset("tokenizer.ggml.tokens");
  m.Unset("llama.vocab_size");
  c = ConfigOf(m);  // last resort: the rows of token_embd
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->vocab_size, 40);
}

TEST(ModelConfigTest, LinearRopeScaling) {
  TinyModel m = MakeTinyModel({});
  m.Set("llama.rope.scaling.type", gguf::MetaValue::String("linear"));
  m.Set("llama.rope.scaling.factor", gguf::MetaValue::Float32(4.f));
  Result<ModelConfig> c = ConfigOf(m);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FLOAT_EQ(c->rope_freq_scale, 0.25f);

  // The type defaults to linear; the old key name still counts.
  m.Unset("llama.rope.scaling.type");
  m.Unset("llama.rope.scaling.factor");
  m.Set("llama.rope.scale_linear", gguf::MetaValue::Float32(2.f));
  c = ConfigOf(m);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FLOAT_EQ(c->rope_freq_scale, 0.5f);

  // "none" never scales; a factor of 0 means no scaling.
  m.Set("llama.rope.scaling.type", gguf::MetaValue::String("none"));
  c = ConfigOf(m);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->rope_freq_scale, 1.f);
  m.Unset("llama.rope.scaling.type");
  m.Set("llama.rope.scale_linear", gguf::MetaValue::Float32(0.f));
  c = ConfigOf(m);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->rope_freq_scale, 1.f);
}

TEST(ModelConfigTest, YarnAndOtherScalingAreRefused) {
  for (const char* type : {"yarn", "longrope", "llama3"}) {
    TinyModel m = MakeTinyModel({.arch = "qwen2"});
    m.Set("qwen2.rope.scaling.type", gguf::MetaValue::String(type));
    m.Set("qwen2.rope.scaling.factor", gguf::MetaValue::Float32(4.f));
    Result<ModelConfig> c = ConfigOf(m);
    ASSERT_FALSE(c.ok()) << type;
    EXPECT_EQ(c.status().code(), StatusCode::kUnimplemented);
    const std::string quoted = "'" + std::string(type) + "'";
    EXPECT_THAT(c.status().message(), HasSubstr(quoted));
    EXPECT_THAT(c.status().message(), HasSubstr("supported: none, linear"));
  }
}

TEST(ModelConfigTest, TiedEmbeddingsAndRopeFreqsComeFromTheTensorList) {
  TinyModel m = MakeTinyModel({.tied = true});
  std::mt19937 rng(7);
  m.AddTensor("rope_freqs.weight", {4}, 0.5f, rng, 2.f);
  Result<ModelConfig> c = ConfigOf(m);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->tied_embeddings);
  EXPECT_TRUE(c->has_rope_freqs);
}

TEST(ModelConfigTest, LlamaAttentionBiasesAreOptional) {
  TinyModel m = MakeTinyModel({});
  std::mt19937 rng(7);
  m.AddTensor("blk.0.attn_q.bias", {32}, 0.1f, rng);
  m.AddTensor("blk.0.attn_output.bias", {32}, 0.1f, rng);
  Result<ModelConfig> c = ConfigOf(m);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->has_qkv_bias);
  EXPECT_TRUE(c->has_output_bias);
}

TEST(ModelConfigTest, PerLayerArraysMustBeUniform) {
  TinyModel m = MakeTinyModel({.layers = 2, .kv_heads = 2});
  const int32_t same[] = {2, 2};
  m.Set("llama.attention.head_count_kv", gguf::MetaValue::Int32Array(same));
  Result<ModelConfig> c = ConfigOf(m);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->num_kv_heads, 2);

  const int32_t differ[] = {2, 4};
  m.Set("llama.attention.head_count_kv", gguf::MetaValue::Int32Array(differ));
  c = ConfigOf(m);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnimplemented);
  EXPECT_THAT(c.status().message(), HasSubstr("llama.attention.head_count_kv"));

  const int32_t short_array[] = {2};
  m.Set("llama.attention.head_count_kv", gguf::MetaValue::Int32Array(short_array));
  c = ConfigOf(m);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("1 per-layer values for 2 layers"));
}

// Each case breaks one key; the error must name it.
TEST(ModelConfigTest, BadKeysAreNamed) {
  struct Case {
    const char* key;
    std::optional<gguf::MetaValue> value;  // nullopt: remove the key
    const char* message;
  };
  const Case cases[] = {
      {"llama.embedding_length", std::nullopt, "missing required key 'llama.embedding_length'"},
      {"llama.block_count", gguf::MetaValue::Uint32(0), "'llama.block_count' = 0 is out of range"},
      {"llama.attention.layer_norm_rms_epsilon", std::nullopt,
       "missing required key 'llama.attention.layer_norm_rms_epsilon'"},
      {"llama.attention.head_count_kv", gguf::MetaValue::Uint32(3), "multiple of head_count_kv"},
      {"llama.rope.dimension_count", gguf::MetaValue::Uint32(4), "must equal the head size 8"},
      {"llama.rope.dimension_count", gguf::MetaValue::Uint32(7), "must be even"},
      {"llama.rope.freq_base", gguf::MetaValue::Float32(-1.f),
       "'llama.rope.freq_base' must be positive"},
      {"llama.attention.value_length", gguf::MetaValue::Uint32(4),
       "key and value head sizes differ"},
      {"llama.expert_count", gguf::MetaValue::Uint32(8), "mixture-of-experts"},
      {"llama.context_length", gguf::MetaValue::String("long"), "llama.context_length"},
  };
  for (const Case& k : cases) {
    TinyModel m = MakeTinyModel({});
    if (k.value) {
      m.Set(k.key, *k.value);
    } else {
      m.Unset(k.key);
    }
    Result<ModelConfig> c = ConfigOf(m);
    ASSERT_FALSE(c.ok()) << k.key;
    EXPECT_THAT(c.status().message(), HasSubstr(k.message)) << k.key;
    EXPECT_THAT(c.status().message(), HasSubstr("tiny.gguf")) << k.key;
  }
}

}  // namespace
}  // namespace mneme::model
