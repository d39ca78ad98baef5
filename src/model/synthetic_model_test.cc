// Synthetic models: flag validation, the keys and tensors llama.cpp needs
// (names, shapes, types), the copied tokenizer, determinism and the weight
// scales the recipe promises. (That llama.cpp loads and runs the files is
// tests/make_model.cmake.)
#include "model/synthetic_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "kernels/quantize.h"

namespace mneme::model {
namespace {

using kernels::DType;

const std::string kVocab = std::string(MNEME_SHARED_DIR) + "/models/vocab/ggml-vocab-llama-spm.gguf";

SyntheticModelOptions Small(const std::string& arch, DType type = DType::kF32) {
  SyntheticModelOptions o;
  o.arch = arch;
  o.type = type;
  o.dim = 64;
  o.layers = 2;
  o.heads = 4;
  o.kv_heads = 2;
  o.ff = 96;
  return o;
}

gguf::GgufFile Build(const SyntheticModelOptions& o) {
  auto vocab = gguf::GgufFile::Open(kVocab);
  EXPECT_TRUE(vocab.ok()) << vocab.status().ToString();
  auto w = BuildSyntheticModel(o, *vocab);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  auto f = gguf::GgufFile::FromBytes(w->Serialize(), "synthetic");
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return std::move(f).value();
}

TEST(SyntheticModelTest, ParsesTypes) {
  EXPECT_EQ(*ParseSyntheticType("q4_k"), DType::kQ4_K);
  EXPECT_EQ(*ParseSyntheticType("bf16"), DType::kBF16);
  EXPECT_EQ(ParseSyntheticType("q3_k").status().code(), StatusCode::kInvalidArgument);
  // llama_ftype values from llama.h.
  EXPECT_EQ(FileTypeFor(DType::kQ8_0), 7u);
  EXPECT_EQ(FileTypeFor(DType::kQ4_K), 15u);
  EXPECT_EQ(FileTypeFor(DType::kBF16), 32u);
}

TEST(SyntheticModelTest, ValidatesFlags) {
  EXPECT_TRUE(ValidateSyntheticModelOptions(Small("llama")).ok());
  auto bad = [](SyntheticModelOptions o) { return ValidateSyntheticModelOptions(o).message(); };
  SyntheticModelOptions o = Small("mistral");
  EXPECT_NE(bad(o).find("unsupported architecture 'mistral'"), std::string::npos);
  o = Small("llama", DType::kQ4_K);  // dim 64 is not a multiple of 256
  EXPECT_NE(bad(o).find("multiples of 256"), std::string::npos);
  o = Small("llama", DType::kQ8_0);
  o.ff = 100;
  EXPECT_NE(bad(o).find("multiples of 32"), std::string::npos);
  o = Small("llama");
  o.heads = 5;
  EXPECT_NE(bad(o).find("not a multiple of --heads"), std::string::npos);
  o = Small("llama");
  o.kv_heads = 3;
  EXPECT_NE(bad(o).find("not a multiple of --kv-heads"), std::string::npos);
  o = Small("llama");
  o.layers = 0;
  EXPECT_NE(bad(o).find("--layers must be in"), std::string::npos);
}

TEST(SyntheticModelTest, HyperparameterKeys) {
  gguf::GgufFile f = Build(Small("qwen2"));
  EXPECT_EQ(*f.GetString("general.architecture"), "qwen2");
  EXPECT_EQ(*f.GetUint("general.file_type"), 0u);
  EXPECT_EQ(*f.GetUint("qwen2.embedding_length"), 64u);
  EXPECT_EQ(*f.GetUint("qwen2.block_count"), 2u);
  EXPECT_EQ(*f.GetUint("qwen2.feed_forward_length"), 96u);
  EXPECT_EQ(*f.GetUint("qwen2.attention.head_count"), 4u);
  EXPECT_EQ(*f.GetUint("qwen2.attention.head_count_kv"), 2u);
  EXPECT_EQ(*f.GetUint("qwen2.rope.dimension_count"), 16u);
  EXPECT_EQ(*f.GetUint("qwen2.context_length"), 2048u);
  EXPECT_FLOAT_EQ(static_cast<float>(*f.GetFloat("qwen2.rope.freq_base")), 10000.f);
  EXPECT_FLOAT_EQ(static_cast<float>(*f.GetFloat("qwen2.attention.layer_norm_rms_epsilon")), 1e-5f);
}

TEST(SyntheticModelTest, CopiesEveryTokenizerKey) {
  auto vocab = gguf::GgufFile::Open(kVocab);
  ASSERT_TRUE(vocab.ok());
  gguf::GgufFile f = Build(Small("llama"));
  int copied = 0;
  for (const auto& [key, value] : vocab->metadata()) {
    if (!key.starts_with("tokenizer.")) continue;
    ++copied;
    const gguf::Value* mine = f.Find(key);
    ASSERT_NE(mine, nullptr) << key;
    EXPECT_EQ(mine->type, value.type) << key;
    EXPECT_EQ(mine->DebugString(1000000), value.DebugString(1000000)) << key;
  }
  EXPECT_GE(copied, 5);
  EXPECT_EQ(*f.GetStringArray("tokenizer.ggml.tokens"), *vocab->GetStringArray("tokenizer.ggml.tokens"));
}

// name -> (shape, type) of every tensor.
std::map<std::string, std::pair<std::vector<uint64_t>, gguf::TensorType>> Tensors(
    const gguf::GgufFile& f) {
  std::map<std::string, std::pair<std::vector<uint64_t>, gguf::TensorType>> m;
  for (const gguf::TensorInfo& t : f.tensors()) m[std::string(t.name)] = {t.shape, t.type};
  return m;
}

TEST(SyntheticModelTest, TensorNamesShapesAndTypesPerArch) {
  using gguf::TensorType;
  const uint64_t v = 32000;  // llama-spm
  for (const std::string arch : {"llama", "qwen2", "qwen3"}) {
    SCOPED_TRACE(arch);
    SyntheticModelOptions o = Small(arch, DType::kQ8_0);
    auto t = Tensors(Build(o));
    auto expect = [&](const std::string& name, std::vector<uint64_t> shape, TensorType type) {
      ASSERT_TRUE(t.count(name)) << name;
      EXPECT_EQ(t[name].first, shape) << name;
      EXPECT_EQ(t[name].second, type) << name;
      t.erase(name);
    };
    expect("token_embd.weight", {64, v}, TensorType::kQ8_0);
    expect("output_norm.weight", {64}, TensorType::kF32);
    expect("output.weight", {64, v}, TensorType::kQ8_0);
    for (int l = 0; l < 2; ++l) {
      const std::string p = "blk." + std::to_string(l) + ".";
      expect(p + "attn_norm.weight", {64}, TensorType::kF32);
      expect(p + "attn_q.weight", {64, 64}, TensorType::kQ8_0);
      expect(p + "attn_k.weight", {64, 32}, TensorType::kQ8_0);
      expect(p + "attn_v.weight", {64, 32}, TensorType::kQ8_0);
      expect(p + "attn_output.weight", {64, 64}, TensorType::kQ8_0);
      expect(p + "ffn_norm.weight", {64}, TensorType::kF32);
      expect(p + "ffn_gate.weight", {64, 96}, TensorType::kQ8_0);
      expect(p + "ffn_up.weight", {64, 96}, TensorType::kQ8_0);
      expect(p + "ffn_down.weight", {96, 64}, TensorType::kQ8_0);
      if (arch == "qwen2") {
        expect(p + "attn_q.bias", {64}, TensorType::kF32);
        expect(p + "attn_k.bias", {32}, TensorType::kF32);
        expect(p + "attn_v.bias", {32}, TensorType::kF32);
      }
      if (arch == "qwen3") {
        expect(p + "attn_q_norm.weight", {16}, TensorType::kF32);
        expect(p + "attn_k_norm.weight", {16}, TensorType::kF32);
      }
    }
    EXPECT_TRUE(t.empty()) << "unexpected tensor " << t.begin()->first;
  }
}

TEST(SyntheticModelTest, TiedHasNoOutputWeight) {
  SyntheticModelOptions o = Small("llama");
  o.tied = true;
  gguf::GgufFile f = Build(o);
  EXPECT_EQ(f.FindTensor("output.weight"), nullptr);
  EXPECT_NE(f.FindTensor("token_embd.weight"), nullptr);
}

std::vector<float> Floats(const gguf::GgufFile& f, const std::string& name) {
  const gguf::TensorInfo* t = f.FindTensor(name);
  EXPECT_NE(t, nullptr) << name;
  std::vector<float> out(t->num_elements);
  kernels::DequantizeRow(static_cast<DType>(static_cast<uint32_t>(t->type)), f.TensorData(*t).data(),
                         out.data(), static_cast<int64_t>(t->num_elements));
  return out;
}

TEST(SyntheticModelTest, SameSeedSameFileOtherSeedOtherWeights) {
  auto vocab = gguf::GgufFile::Open(kVocab);
  ASSERT_TRUE(vocab.ok());
  SyntheticModelOptions o = Small("qwen3", DType::kQ4_0);
  o.dim = 64;
  const auto a = BuildSyntheticModel(o, *vocab)->Serialize();
  const auto b = BuildSyntheticModel(o, *vocab)->Serialize();
  EXPECT_EQ(a, b);
  o.seed = 2;
  EXPECT_NE(BuildSyntheticModel(o, *vocab)->Serialize(), a);
  // A tensor depends on (seed, name) only: more layers leave layer 0 alone.
  SyntheticModelOptions two = Small("llama");
  SyntheticModelOptions three = two;
  three.layers = 3;
  EXPECT_EQ(Floats(Build(two), "blk.0.attn_q.weight"), Floats(Build(three), "blk.0.attn_q.weight"));
}

double Rms(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += static_cast<double>(x) * x;
  return std::sqrt(s / static_cast<double>(v.size()));
}

TEST(SyntheticModelTest, WeightScalesFollowTheRecipe) {
  SyntheticModelOptions o = Small("llama");
  o.successor = 0;
  gguf::GgufFile f = Build(o);
  EXPECT_NEAR(Rms(Floats(f, "token_embd.weight")), 1.0, 0.02);
  EXPECT_NEAR(Rms(Floats(f, "blk.1.attn_q.weight")), 1.0 / 8, 0.01);
  EXPECT_NEAR(Rms(Floats(f, "blk.1.ffn_up.weight")), 1.0 / 8, 0.01);
  EXPECT_NEAR(Rms(Floats(f, "blk.1.ffn_down.weight")), 0.5 / std::sqrt(96.0 * 2), 0.005);
  EXPECT_NEAR(Rms(Floats(f, "output.weight")), 1.0 / 8, 0.01);
  for (float x : Floats(f, "blk.0.ffn_norm.weight")) {
    EXPECT_GE(x, 0.8f);
    EXPECT_LE(x, 1.2f);
  }
}

TEST(SyntheticModelTest, SuccessorTermFavoursOneTokenPerInput) {
  // With successor > 0, for each input embedding row e_u there is exactly one
  // output row t with a large <out_t, e_u> (~ successor): the favoured next
  // token. Check that the best score beats the second by a wide margin.
  SyntheticModelOptions o = Small("llama");
  o.successor = 12;
  gguf::GgufFile f = Build(o);
  const std::vector<float> emb = Floats(f, "token_embd.weight");
  const std::vector<float> out = Floats(f, "output.weight");
  const int64_t dim = 64;
  const int64_t n_vocab = static_cast<int64_t>(emb.size()) / dim;
  for (int64_t u : {0, 5, 1234, 31999}) {
    float best = -1e30f, second = -1e30f;
    for (int64_t t = 0; t < n_vocab; ++t) {
      float s = 0;
      for (int64_t i = 0; i < dim; ++i) s += out[t * dim + i] * emb[u * dim + i];
      if (s > best) {
        second = best;
        best = s;
      } else if (s > second) {
        second = s;
      }
    }
    EXPECT_NEAR(best, 12.f, 6.f) << u;  // 12 * |e_u|^2 / dim plus a std-1 random term
    EXPECT_GT(best - second, 3.f) << u;
  }
}

}  // namespace
}  // namespace mneme::model
