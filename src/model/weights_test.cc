// ModelWeights::Load: the views of stories260K.gguf, and one refusal per kind
// of broken file (missing tensor, wrong shape, unsupported type, leftover
// tensor), each error naming the tensor.
#include "model/weights.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/quantize.h"
#include "model/tiny_model_test_util.h"

namespace mneme::model {
namespace {

using ::testing::HasSubstr;
using testing::MakeTinyModel;
using testing::TinyModel;

// Keeps the file alive next to the views.
struct Loaded {
  gguf::GgufFile file;
  ModelConfig config;
  ModelWeights weights;
};

Result<Loaded> Load(const TinyModel& m) {
  MNEME_ASSIGN_OR_RETURN(gguf::GgufFile file, m.Build());
  MNEME_ASSIGN_OR_RETURN(ModelConfig config, ModelConfig::FromGguf(file));
  MNEME_ASSIGN_OR_RETURN(ModelWeights weights, ModelWeights::Load(file, config));
  return Loaded{std::move(file), config, std::move(weights)};
}

Status LoadStatus(const TinyModel& m) {
  return Load(m).status();
}

TEST(WeightsTest, Stories260K) {
  Result<gguf::GgufFile> file = gguf::GgufFile::Open(MNEME_SHARED_DIR "/models/stories260K.gguf");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  Result<ModelConfig> config = ModelConfig::FromGguf(*file);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  Result<ModelWeights> w = ModelWeights::Load(*file, *config);
  ASSERT_TRUE(w.ok()) << w.status().ToString();

  ASSERT_EQ(w->layers.size(), 5u);
  EXPECT_EQ(w->token_embd.name, "token_embd.weight");
  EXPECT_EQ(w->token_embd.cols, 64);
  EXPECT_EQ(w->token_embd.rows, 512);
  EXPECT_EQ(w->output.name, "output.weight");
  EXPECT_NE(w->output.data, w->token_embd.data);
  EXPECT_FALSE(w->rope_freqs.present());
  const LayerWeights& l = w->layers[4];
  EXPECT_EQ(l.wk.name, "blk.4.attn_k.weight");
  EXPECT_EQ(l.wk.type, kernels::DType::kF32);
  EXPECT_EQ(l.wk.cols, 64);
  EXPECT_EQ(l.wk.rows, 32);
  EXPECT_EQ(l.wk.row_bytes, 64u * 4);
  EXPECT_EQ(l.ffn_down.cols, 172);
  EXPECT_EQ(l.ffn_down.rows, 64);
  EXPECT_FALSE(l.bq.present());
  EXPECT_FALSE(l.q_norm.present());

  // Zero copy: the views are the file's bytes.
  const gguf::TensorInfo* info = file->FindTensor("blk.4.ffn_down.weight");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(l.ffn_down.data, file->TensorData(*info).data());

  // Every tensor of the file is used exactly once (all 48).
  uint64_t file_bytes = 0;
  for (const gguf::TensorInfo& t : file->tensors()) file_bytes += t.num_bytes;
  EXPECT_EQ(file->tensors().size(), 48u);
  EXPECT_EQ(w->TotalBytes(), file_bytes);
}

TEST(WeightsTest, EveryArchitectureLoads) {
  for (const char* arch : {"llama", "qwen2", "qwen3"}) {
    Result<Loaded> m = Load(MakeTinyModel({.arch = arch}));
    ASSERT_TRUE(m.ok()) << arch << ": " << m.status().ToString();
    const LayerWeights& l = m->weights.layers[1];
    EXPECT_EQ(l.bq.present(), std::string(arch) == "qwen2") << arch;
    EXPECT_EQ(l.bv.present(), std::string(arch) == "qwen2") << arch;
    EXPECT_EQ(l.q_norm.present(), std::string(arch) == "qwen3") << arch;
    EXPECT_EQ(l.k_norm.present(), std::string(arch) == "qwen3") << arch;
    if (l.bk.present()) {
      EXPECT_EQ(l.bk.cols, 16);  // kv_dim = 2 heads * 8
    }
    if (l.k_norm.present()) {
      EXPECT_EQ(l.k_norm.cols, 8);  // head_dim
    }
  }
}

TEST(WeightsTest, TiedEmbeddingsShareTheTokenEmbedding) {
  Result<Loaded> m = Load(MakeTinyModel({.tied = true}));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->config.tied_embeddings);
  EXPECT_EQ(m->weights.output.data, m->weights.token_embd.data);
  EXPECT_EQ(m->weights.output.rows, 40);
}

TEST(WeightsTest, QuantizedMatricesLoad) {
  for (gguf::TensorType type : {gguf::TensorType::kF16, gguf::TensorType::kBF16,
                                gguf::TensorType::kQ8_0, gguf::TensorType::kQ4_0}) {
    TinyModel m = MakeTinyModel({.ffn = 64});  // rows of 32 and 64: whole Q8_0/Q4_0 blocks
    for (auto& t : m.tensors) {
      if (t.shape.size() == 2) t.type = type;
    }
    Result<Loaded> loaded = Load(m);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    const WeightView& wq = loaded->weights.layers[0].wq;
    EXPECT_EQ(static_cast<uint32_t>(wq.type), static_cast<uint32_t>(type));
    EXPECT_EQ(wq.row_bytes, kernels::RowBytes(wq.type, 32));
  }
  // K-quants need rows of 256.
  for (gguf::TensorType type :
       {gguf::TensorType::kQ4_K, gguf::TensorType::kQ5_K, gguf::TensorType::kQ6_K}) {
    TinyModel m = MakeTinyModel({.dim = 256, .layers = 1, .heads = 2, .kv_heads = 1, .ffn = 256});
    for (auto& t : m.tensors) {
      if (t.shape.size() == 2) t.type = type;
    }
    Result<Loaded> loaded = Load(m);
    ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
    EXPECT_EQ(static_cast<uint32_t>(loaded->weights.layers[0].ffn_down.type),
              static_cast<uint32_t>(type));
  }
}

TEST(WeightsTest, MissingTensorIsNamed) {
  for (const char* name : {"blk.1.ffn_up.weight", "output_norm.weight", "token_embd.weight"}) {
    TinyModel m = MakeTinyModel({});
    m.Remove(name);
    Status s = LoadStatus(m);
    ASSERT_FALSE(s.ok()) << name;
    EXPECT_EQ(s.code(), StatusCode::kNotFound);
    EXPECT_THAT(s.message(), HasSubstr(std::string("missing tensor '") + name + "'"));
  }
  // Architecture-specific tensors are required.
  TinyModel qwen2 = MakeTinyModel({.arch = "qwen2"});
  qwen2.Remove("blk.0.attn_v.bias");
  EXPECT_THAT(LoadStatus(qwen2).message(), HasSubstr("missing tensor 'blk.0.attn_v.bias'"));
  TinyModel qwen3 = MakeTinyModel({.arch = "qwen3"});
  qwen3.Remove("blk.1.attn_k_norm.weight");
  EXPECT_THAT(LoadStatus(qwen3).message(), HasSubstr("missing tensor 'blk.1.attn_k_norm.weight'"));
}

TEST(WeightsTest, WrongShapeNamesExpectedAndActual) {
  TinyModel m = MakeTinyModel({});
  testing::TinyTensor* k = m.Find("blk.0.attn_k.weight");
  k->shape = {32, 8};  // expected [32, 16] (2 kv heads of 8)
  k->values.resize(32 * 8);
  Status s = LoadStatus(m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_THAT(s.message(),
              HasSubstr("tensor 'blk.0.attn_k.weight' has shape [32, 8], expected [32, 16]"));

  TinyModel transposed = MakeTinyModel({});
  transposed.Find("blk.1.ffn_down.weight")->shape = {32, 48};  // expected [48, 32]
  EXPECT_THAT(LoadStatus(transposed).message(),
              HasSubstr("'blk.1.ffn_down.weight' has shape [32, 48], expected [48, 32]"));

  TinyModel norm = MakeTinyModel({});
  norm.Find("output_norm.weight")->shape = {16, 2};
  EXPECT_THAT(LoadStatus(norm).message(), HasSubstr("has shape [16, 2], expected [32]"));
}

TEST(WeightsTest, UnsupportedTypeNamesTensorAndType) {
  TinyModel m = MakeTinyModel({});
  m.Find("blk.1.attn_q.weight")->type = gguf::TensorType::kQ4_1;
  Status s = LoadStatus(m);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("tensor 'blk.1.attn_q.weight' has type Q4_1"));
  EXPECT_THAT(s.message(), HasSubstr("F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K"));

  // Norm weights must be F32.
  TinyModel norm = MakeTinyModel({});
  norm.Find("blk.0.ffn_norm.weight")->type = gguf::TensorType::kF16;
  EXPECT_THAT(LoadStatus(norm).message(),
              HasSubstr("tensor 'blk.0.ffn_norm.weight' has type F16, which is not supported here "
                        "(supported: F32)"));
}

TEST(WeightsTest, LeftoverTensorIsRefused) {
  TinyModel m = MakeTinyModel({});
  std::mt19937 rng(3);
  m.AddTensor("blk.0.ffn_gate_inp.weight", {32, 4}, 1.f, rng);
  Status s = LoadStatus(m);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("unexpected tensor 'blk.0.ffn_gate_inp.weight'"));
  EXPECT_THAT(s.message(), HasSubstr("llama"));
}

TEST(WeightsTest, RopeFreqsShapeIsChecked) {
  TinyModel m = MakeTinyModel({});  // head_dim 8: 4 frequency factors
  std::mt19937 rng(3);
  m.AddTensor("rope_freqs.weight", {4}, 0.5f, rng, 2.f);
  Result<Loaded> ok = Load(m);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->weights.rope_freqs.cols, 4);

  m.Find("rope_freqs.weight")->shape = {8};
  m.Find("rope_freqs.weight")->values.resize(8);
  EXPECT_THAT(LoadStatus(m).message(),
              HasSubstr("tensor 'rope_freqs.weight' has shape [8], expected [4]"));
}

}  // namespace
}  // namespace mneme::model
