// Tiny hand-sized GGUF models for the model/ tests (test-only, header-only).
//
// TinyModel describes a model as plain data — metadata values and a list of
// tensors with shapes and seeded random F32 contents — so a test can break
// exactly one thing (drop a tensor, change a shape, a type, a key) and then
// Build() an in-memory GgufFile from it with GgufWriter.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gguf/gguf.h"
#include "gguf/gguf_writer.h"
#include "kernels/quantize.h"
#include "util/status.h"

namespace mneme::model::testing {

struct TinyTensor {
  std::string name;
  std::vector<uint64_t> shape;
  std::vector<float> values;  // row-major, shape[0] contiguous
  gguf::TensorType type = gguf::TensorType::kF32;
};

struct TinyModel {
  std::string arch = "llama";
  std::vector<std::pair<std::string, gguf::MetaValue>> metadata;
  std::vector<TinyTensor> tensors;

  TinyTensor* Find(const std::string& name) {
    for (TinyTensor& t : tensors) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
  void Remove(const std::string& name) {
    std::erase_if(tensors, [&](const TinyTensor& t) { return t.name == name; });
  }
  void Set(const std::string& key, gguf::MetaValue v) {
    for (auto& [k, value] : metadata) {
      if (k == key) {
        value = std::move(v);
        return;
      }
    }
    metadata.emplace_back(key, std::move(v));
  }
  void Unset(const std::string& key) {
    std::erase_if(metadata, [&](const auto& kv) { return kv.first == key; });
  }
  void AddTensor(const std::string& name, std::vector<uint64_t> shape, float scale,
                 std::mt19937& rng, float offset = 0.f) {
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d;
    std::uniform_real_distribution<float> u(-scale, scale);
    std::vector<float> v(n);
    for (float& x : v) x = offset + u(rng);
    tensors.push_back({name, std::move(shape), std::move(v)});
  }

  // Serializes to an in-memory GGUF (tensors converted to their `type`).
  Result<gguf::GgufFile> Build() const {
    gguf::GgufWriter w;
    w.Set("general.architecture", gguf::MetaValue::String(arch));
    for (const auto& [k, v] : metadata) w.Set(k, v);
    for (const TinyTensor& t : tensors) {
      const auto type = static_cast<kernels::DType>(t.type);
      if (t.type == gguf::TensorType::kF32) {
        MNEME_RETURN_IF_ERROR(w.AddTensorF32(t.name, t.shape, t.values));
        continue;
      }
      std::vector<uint8_t> bytes;
      if (kernels::GetDTypeInfo(type)) {
        const int64_t cols = static_cast<int64_t>(t.shape[0]);
        const size_t row_bytes = kernels::RowBytes(type, cols);
        const size_t rows = t.values.size() / static_cast<size_t>(cols);
        bytes.resize(row_bytes * rows);
        for (size_t r = 0; r < rows; ++r) {
          kernels::QuantizeRow(type, t.values.data() + r * cols, bytes.data() + r * row_bytes,
                               cols);
        }
      } else {  // a type the kernels do not know: any bytes of the right size
        const gguf::TensorTypeInfo* info = gguf::FindTensorTypeInfo(t.type);
        bytes.assign(t.values.size() / info->block_size * info->type_size, 0);
      }
      MNEME_RETURN_IF_ERROR(w.AddTensor(t.name, t.shape, t.type, bytes));
    }
    return gguf::GgufFile::FromBytes(w.Serialize(), "tiny.gguf");
  }
};

struct TinySpec {
  std::string arch = "llama";  // llama | qwen2 | qwen3
  uint64_t dim = 32, layers = 2, heads = 4, kv_heads = 2, ffn = 48, vocab = 40, ctx = 64;
  bool tied = false;
  uint32_t seed = 1;
};

// A complete, valid model of `spec` (head_dim = dim / heads, rms eps 1e-5,
// no tokenizer: the vocabulary size comes from ARCH.vocab_size).
inline TinyModel MakeTinyModel(const TinySpec& spec) {
  TinyModel m;
  m.arch = spec.arch;
  const std::string p = spec.arch + ".";
  m.Set(p + "context_length", gguf::MetaValue::Uint32(static_cast<uint32_t>(spec.ctx)));
  m.Set(p + "embedding_length", gguf::MetaValue::Uint32(static_cast<uint32_t>(spec.dim)));
  m.Set(p + "block_count", gguf::MetaValue::Uint32(static_cast<uint32_t>(spec.layers)));
  m.Set(p + "feed_forward_length", gguf::MetaValue::Uint32(static_cast<uint32_t>(spec.ffn)));
  m.Set(p + "attention.head_count", gguf::MetaValue::Uint32(static_cast<uint32_t>(spec.heads)));
  m.Set(p + "attention.head_count_kv",
        gguf::MetaValue::Uint32(static_cast<uint32_t>(spec.kv_heads)));
  m.Set(p + "attention.layer_norm_rms_epsilon", gguf::MetaValue::Float32(1e-5f));
  m.Set(p + "vocab_size", gguf::MetaValue::Uint32(static_cast<uint32_t>(spec.vocab)));
  std::mt19937 rng(spec.seed);
  const uint64_t hd = spec.dim / spec.heads;
  const uint64_t q = spec.heads * hd, kv = spec.kv_heads * hd;
  const float s = 1.0f / std::sqrt(static_cast<float>(spec.dim));
  m.AddTensor("token_embd.weight", {spec.dim, spec.vocab}, 1.f, rng);
  m.AddTensor("output_norm.weight", {spec.dim}, 0.2f, rng, 1.f);
  if (!spec.tied) m.AddTensor("output.weight", {spec.dim, spec.vocab}, s, rng);
  for (uint64_t i = 0; i < spec.layers; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    m.AddTensor(b + "attn_norm.weight", {spec.dim}, 0.2f, rng, 1.f);
    m.AddTensor(b + "attn_q.weight", {spec.dim, q}, s, rng);
    m.AddTensor(b + "attn_k.weight", {spec.dim, kv}, s, rng);
    m.AddTensor(b + "attn_v.weight", {spec.dim, kv}, s, rng);
    m.AddTensor(b + "attn_output.weight", {q, spec.dim}, s, rng);
    if (spec.arch == "qwen2") {
      m.AddTensor(b + "attn_q.bias", {q}, 0.2f, rng);
      m.AddTensor(b + "attn_k.bias", {kv}, 0.2f, rng);
      m.AddTensor(b + "attn_v.bias", {kv}, 0.2f, rng);
    }
    if (spec.arch == "qwen3") {
      m.AddTensor(b + "attn_q_norm.weight", {hd}, 0.2f, rng, 1.f);
      m.AddTensor(b + "attn_k_norm.weight", {hd}, 0.2f, rng, 1.f);
    }
    m.AddTensor(b + "ffn_norm.weight", {spec.dim}, 0.2f, rng, 1.f);
    m.AddTensor(b + "ffn_gate.weight", {spec.dim, spec.ffn}, s, rng);
    m.AddTensor(b + "ffn_up.weight", {spec.dim, spec.ffn}, s, rng);
    m.AddTensor(b + "ffn_down.weight", {spec.ffn, spec.dim}, s, rng);
  }
  return m;
}

// The greedy text of stories260K from BOS, as ../shared/models/README.md
// documents it (the first fenced block after "### Functional check"); "" if
// the README is missing or changed shape. Needs MNEME_SHARED_DIR.
inline std::string Stories260KReadmeGolden() {
  std::ifstream in(MNEME_SHARED_DIR "/models/README.md", std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string readme = ss.str();
  const size_t section = readme.find("### Functional check (greedy decoding)");
  if (section == std::string::npos) return "";
  const size_t open = readme.find("```\n", section);
  if (open == std::string::npos) return "";
  const size_t begin = open + 4;
  const size_t close = readme.find("\n```", begin);
  if (close == std::string::npos) return "";
  return readme.substr(begin, close - begin);
}

}  // namespace mneme::model::testing
