// Synthetic model writer (see synthetic_model.h for the recipe).
#include "model/synthetic_model.h"

#include <cmath>
#include <numeric>
#include <string_view>
#include <vector>

#include "kernels/quantize.h"

namespace mneme::model {
namespace {

using gguf::MetaValue;
using gguf::ValueType;
using kernels::DType;

struct TypeName {
  std::string_view name;
  DType type;
  uint32_t file_type;  // llama_ftype: ALL_F32 0, MOSTLY_F16 1, Q4_0 2, Q8_0 7,
                       // Q4_K_M 15, Q5_K_M 17, Q6_K 18, BF16 32
};
constexpr TypeName kTypes[] = {
    {"f32", DType::kF32, 0},     {"f16", DType::kF16, 1},     {"bf16", DType::kBF16, 32},
    {"q8_0", DType::kQ8_0, 7},   {"q4_0", DType::kQ4_0, 2},   {"q4_k", DType::kQ4_K, 15},
    {"q5_k", DType::kQ5_K, 17},  {"q6_k", DType::kQ6_K, 18},
};

// SplitMix64: small, fast, and the same on every platform (unlike the
// standard distributions), so a seed means the same model everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float Symmetric() { return static_cast<float>(Next() >> 40) * 0x1p-23f - 1.f; }

 private:
  uint64_t state_;
};

// A stream per tensor: (seed, FNV-1a of the name).
Rng TensorRng(uint64_t seed, std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  Rng mix(seed ^ h);
  mix.Next();
  return Rng(mix.Next());
}

// n values, uniform with standard deviation `std` (half-width std * sqrt(3)).
std::vector<float> RandomValues(uint64_t seed, std::string_view name, size_t n, float std) {
  Rng rng = TensorRng(seed, name);
  const float half_width = std * std::sqrt(3.f);
  std::vector<float> v(n);
  for (float& x : v) x = rng.Symmetric() * half_width;
  return v;
}

std::vector<float> RandomRange(uint64_t seed, std::string_view name, size_t n, float lo,
                               float hi) {
  Rng rng = TensorRng(seed, name);
  std::vector<float> v(n);
  for (float& x : v) x = lo + (rng.Symmetric() + 1.f) * 0.5f * (hi - lo);
  return v;
}

Status AddMatrix(gguf::GgufWriter& w, std::string_view name, DType type, int64_t ne0, int64_t ne1,
                 const std::vector<float>& values) {
  const size_t row_bytes = kernels::RowBytes(type, ne0);
  std::vector<uint8_t> bytes(row_bytes * static_cast<size_t>(ne1));
  for (int64_t r = 0; r < ne1; ++r) {
    kernels::QuantizeRow(type, values.data() + r * ne0, bytes.data() + static_cast<size_t>(r) * row_bytes,
                         ne0);
  }
  return w.AddTensor(name, {static_cast<uint64_t>(ne0), static_cast<uint64_t>(ne1)},
                     static_cast<gguf::TensorType>(static_cast<uint32_t>(type)), bytes)
      .WithContext(name);
}

Status AddVector(gguf::GgufWriter& w, std::string_view name, const std::vector<float>& values) {
  return w.AddTensorF32(name, {values.size()}, values);
}

// A reader value (pointing into the vocab file) as an owned writer value.
MetaValue ToMetaValue(const gguf::Value& v) {
  switch (v.type) {
    case ValueType::kUint8: return MetaValue::Uint8(static_cast<uint8_t>(*v.AsUint()));
    case ValueType::kInt8: return MetaValue::Int8(static_cast<int8_t>(*v.AsInt()));
    case ValueType::kUint16: return MetaValue::Uint16(static_cast<uint16_t>(*v.AsUint()));
    case ValueType::kInt16: return MetaValue::Int16(static_cast<int16_t>(*v.AsInt()));
    case ValueType::kUint32: return MetaValue::Uint32(static_cast<uint32_t>(*v.AsUint()));
    case ValueType::kInt32: return MetaValue::Int32(static_cast<int32_t>(*v.AsInt()));
    case ValueType::kUint64: return MetaValue::Uint64(*v.AsUint());
    case ValueType::kInt64: return MetaValue::Int64(*v.AsInt());
    case ValueType::kFloat32: return MetaValue::Float32(static_cast<float>(*v.AsFloat()));
    case ValueType::kFloat64: return MetaValue::Float64(*v.AsFloat());
    case ValueType::kBool: return MetaValue::Bool(*v.AsBool());
    case ValueType::kString: return MetaValue::String(*v.AsString());
    case ValueType::kArray: break;
  }
  const gguf::Array& a = *v.AsArray();
  std::vector<MetaValue> items;
  items.reserve(a.items.size());
  for (const gguf::Value& item : a.items) items.push_back(ToMetaValue(item));
  return MetaValue::Array(a.element_type, items);
}

}  // namespace

Result<DType> ParseSyntheticType(std::string_view name) {
  for (const TypeName& t : kTypes) {
    if (t.name == name) return t.type;
  }
  return InvalidArgument("unknown weight type '" + std::string(name) +
                         "' (expected f32, f16, bf16, q8_0, q4_0, q4_k, q5_k or q6_k)");
}

uint32_t FileTypeFor(DType type) {
  for (const TypeName& t : kTypes) {
    if (t.type == type) return t.file_type;
  }
  CHECK(false) << "no file type for " << static_cast<uint32_t>(type);
  return 0;
}

Status ValidateSyntheticModelOptions(const SyntheticModelOptions& o) {
  if (o.arch != "llama" && o.arch != "qwen2" && o.arch != "qwen3") {
    return InvalidArgument("unsupported architecture '" + o.arch +
                           "' (expected llama, qwen2 or qwen3)");
  }
  bool known_type = false;
  for (const TypeName& t : kTypes) known_type |= t.type == o.type;
  if (!known_type) return InvalidArgument("unsupported weight type");
  auto positive = [](int v, int max, const char* flag) -> Status {
    if (v <= 0 || v > max) {
      return InvalidArgument(std::string(flag) + " must be in 1.." + std::to_string(max) +
                             " (got " + std::to_string(v) + ")");
    }
    return Status::Ok();
  };
  MNEME_RETURN_IF_ERROR(positive(o.dim, 1 << 16, "--dim"));
  MNEME_RETURN_IF_ERROR(positive(o.layers, 1024, "--layers"));
  MNEME_RETURN_IF_ERROR(positive(o.heads, 1024, "--heads"));
  MNEME_RETURN_IF_ERROR(positive(o.kv_heads, 1024, "--kv-heads"));
  MNEME_RETURN_IF_ERROR(positive(o.ff, 1 << 18, "--ff"));
  MNEME_RETURN_IF_ERROR(positive(o.ctx, 1 << 24, "--ctx"));
  if (o.dim % o.heads != 0) {
    return InvalidArgument("--dim " + std::to_string(o.dim) + " is not a multiple of --heads " +
                           std::to_string(o.heads));
  }
  if (o.heads % o.kv_heads != 0) {
    return InvalidArgument("--heads " + std::to_string(o.heads) +
                           " is not a multiple of --kv-heads " + std::to_string(o.kv_heads));
  }
  if ((o.dim / o.heads) % 2 != 0) {
    return InvalidArgument("head size --dim / --heads = " + std::to_string(o.dim / o.heads) +
                           " must be even (RoPE rotates pairs)");
  }
  const int block = kernels::GetDTypeInfo(o.type)->block_size;
  if (o.dim % block != 0 || o.ff % block != 0) {
    return InvalidArgument(std::string(kernels::GetDTypeInfo(o.type)->name) +
                           " packs rows in blocks of " + std::to_string(block) +
                           ": --dim and --ff must be multiples of " + std::to_string(block) +
                           " (got " + std::to_string(o.dim) + " and " + std::to_string(o.ff) +
                           ")");
  }
  if (!std::isfinite(o.successor) || o.successor < 0) {
    return InvalidArgument("--successor must be a finite number >= 0");
  }
  return Status::Ok();
}

Result<gguf::GgufWriter> BuildSyntheticModel(const SyntheticModelOptions& o,
                                             const gguf::GgufFile& vocab) {
  MNEME_RETURN_IF_ERROR(ValidateSyntheticModelOptions(o));
  MNEME_ASSIGN_OR_RETURN(std::vector<std::string_view> tokens,
                         vocab.GetStringArray("tokenizer.ggml.tokens"));
  if (tokens.empty()) return InvalidArgument(vocab.name() + ": empty vocabulary");
  const int64_t n_vocab = static_cast<int64_t>(tokens.size());
  const int64_t dim = o.dim;
  const int64_t hd = o.dim / o.heads;
  const int64_t q_dim = hd * o.heads;
  const int64_t kv_dim = hd * o.kv_heads;
  const std::string& a = o.arch;

  gguf::GgufWriter w;
  w.Set("general.architecture", MetaValue::String(a));
  w.Set("general.name", MetaValue::String("mneme synthetic " + a + " seed " +
                                          std::to_string(o.seed)));
  w.Set("general.file_type", MetaValue::Uint32(FileTypeFor(o.type)));
  if (o.type != DType::kF32 && o.type != DType::kF16 && o.type != DType::kBF16) {
    w.Set("general.quantization_version", MetaValue::Uint32(2));
  }
  w.Set(a + ".vocab_size", MetaValue::Uint32(static_cast<uint32_t>(n_vocab)));
  w.Set(a + ".context_length", MetaValue::Uint32(static_cast<uint32_t>(o.ctx)));
  w.Set(a + ".embedding_length", MetaValue::Uint32(static_cast<uint32_t>(dim)));
  w.Set(a + ".block_count", MetaValue::Uint32(static_cast<uint32_t>(o.layers)));
  w.Set(a + ".feed_forward_length", MetaValue::Uint32(static_cast<uint32_t>(o.ff)));
  w.Set(a + ".attention.head_count", MetaValue::Uint32(static_cast<uint32_t>(o.heads)));
  w.Set(a + ".attention.head_count_kv", MetaValue::Uint32(static_cast<uint32_t>(o.kv_heads)));
  w.Set(a + ".attention.key_length", MetaValue::Uint32(static_cast<uint32_t>(hd)));
  w.Set(a + ".attention.value_length", MetaValue::Uint32(static_cast<uint32_t>(hd)));
  w.Set(a + ".rope.dimension_count", MetaValue::Uint32(static_cast<uint32_t>(hd)));
  w.Set(a + ".rope.freq_base", MetaValue::Float32(o.rope_freq_base));
  w.Set(a + ".attention.layer_norm_rms_epsilon", MetaValue::Float32(o.rms_eps));
  for (const auto& [key, value] : vocab.metadata()) {
    if (key.starts_with("tokenizer.")) w.Set(key, ToMetaValue(value));
  }

  const uint64_t seed = o.seed;
  const float in_std = 1.f / std::sqrt(static_cast<float>(dim));
  // Output projections: all 2 * layers block outputs together add RMS ~0.5-1.
  auto out_std = [&](int64_t fan_in) {
    return 0.5f / std::sqrt(static_cast<float>(fan_in) * static_cast<float>(o.layers));
  };

  const std::vector<float> embd =
      RandomValues(seed, "token_embd.weight", static_cast<size_t>(dim * n_vocab), 1.f);
  MNEME_RETURN_IF_ERROR(AddMatrix(w, "token_embd.weight", o.type, dim, n_vocab, embd));

  for (int l = 0; l < o.layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    auto norm = [&](const std::string& name, int64_t n) {
      return AddVector(w, name, RandomRange(seed, name, static_cast<size_t>(n), 0.8f, 1.2f));
    };
    auto matrix = [&](const std::string& name, int64_t ne0, int64_t ne1, float std) {
      return AddMatrix(w, name, o.type, ne0, ne1,
                       RandomValues(seed, name, static_cast<size_t>(ne0 * ne1), std));
    };
    MNEME_RETURN_IF_ERROR(norm(p + "attn_norm.weight", dim));
    MNEME_RETURN_IF_ERROR(matrix(p + "attn_q.weight", dim, q_dim, in_std));
    MNEME_RETURN_IF_ERROR(matrix(p + "attn_k.weight", dim, kv_dim, in_std));
    MNEME_RETURN_IF_ERROR(matrix(p + "attn_v.weight", dim, kv_dim, in_std));
    if (a == "qwen2") {
      for (auto [name, n] : {std::pair{"attn_q.bias", q_dim}, std::pair{"attn_k.bias", kv_dim},
                             std::pair{"attn_v.bias", kv_dim}}) {
        MNEME_RETURN_IF_ERROR(
            AddVector(w, p + name, RandomValues(seed, p + name, static_cast<size_t>(n), 0.2f)));
      }
    }
    if (a == "qwen3") {
      MNEME_RETURN_IF_ERROR(norm(p + "attn_q_norm.weight", hd));
      MNEME_RETURN_IF_ERROR(norm(p + "attn_k_norm.weight", hd));
    }
    MNEME_RETURN_IF_ERROR(matrix(p + "attn_output.weight", q_dim, dim, out_std(q_dim)));
    MNEME_RETURN_IF_ERROR(norm(p + "ffn_norm.weight", dim));
    MNEME_RETURN_IF_ERROR(matrix(p + "ffn_gate.weight", dim, o.ff, in_std));
    MNEME_RETURN_IF_ERROR(matrix(p + "ffn_up.weight", dim, o.ff, in_std));
    MNEME_RETURN_IF_ERROR(matrix(p + "ffn_down.weight", o.ff, dim, out_std(o.ff)));
  }

  MNEME_RETURN_IF_ERROR(AddVector(
      w, "output_norm.weight",
      RandomRange(seed, "output_norm.weight", static_cast<size_t>(dim), 0.8f, 1.2f)));
  if (!o.tied) {
    std::vector<float> out =
        RandomValues(seed, "output.weight", static_cast<size_t>(dim * n_vocab), in_std);
    if (o.successor > 0) {
      // pred: a seeded permutation (Fisher-Yates); row t gets the embedding
      // of pred(t), so after token u the favoured token is pred^-1(u).
      std::vector<int64_t> pred(static_cast<size_t>(n_vocab));
      std::iota(pred.begin(), pred.end(), 0);
      Rng rng = TensorRng(seed, "successor permutation");
      for (int64_t i = n_vocab - 1; i > 0; --i) {
        const auto j = static_cast<int64_t>(rng.Next() % static_cast<uint64_t>(i + 1));
        std::swap(pred[static_cast<size_t>(i)], pred[static_cast<size_t>(j)]);
      }
      const float k = o.successor / static_cast<float>(dim);
      for (int64_t t = 0; t < n_vocab; ++t) {
        const float* e = embd.data() + pred[static_cast<size_t>(t)] * dim;
        float* row = out.data() + t * dim;
        for (int64_t i = 0; i < dim; ++i) row[i] += k * e[i];
      }
    }
    MNEME_RETURN_IF_ERROR(AddMatrix(w, "output.weight", o.type, dim, n_vocab, out));
  }
  return w;
}

Status WriteSyntheticModel(const SyntheticModelOptions& opt, const std::string& vocab_path,
                           const std::string& out_path) {
  MNEME_RETURN_IF_ERROR(ValidateSyntheticModelOptions(opt));
  MNEME_ASSIGN_OR_RETURN(gguf::GgufFile vocab, gguf::GgufFile::Open(vocab_path));
  MNEME_ASSIGN_OR_RETURN(gguf::GgufWriter w, BuildSyntheticModel(opt, vocab));
  return w.WriteFile(out_path);
}

}  // namespace mneme::model
