// ModelWeights::Load: tensor lookup and validation (see weights.h).
#include "model/weights.h"

#include <cstdint>
#include <set>
#include <string>

namespace mneme::model {
namespace {

std::string ShapeString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string TypeName(gguf::TensorType type) {
  const gguf::TensorTypeInfo* info = gguf::FindTensorTypeInfo(type);
  return info != nullptr ? std::string(info->name)
                         : "type " + std::to_string(static_cast<uint32_t>(type));
}

// Collects views and remembers which tensors were used.
class Loader {
 public:
  Loader(const gguf::GgufFile& file) : file_(file) {}  // NOLINT

  enum class Kind {
    kMatrix,  // any supported weight type
    kVector,  // F32 only (norms, biases, rope_freqs)
  };

  // `shape` in ggml order: {cols} or {cols, rows}. An absent tensor is an
  // error unless `optional`, in which case an empty view is returned.
  Result<WeightView> Get(std::string_view name, std::vector<int64_t> shape, Kind kind,
                         bool optional = false) {
    const gguf::TensorInfo* t = file_.FindTensor(name);
    if (t == nullptr) {
      if (optional) return WeightView{};
      return NotFound(file_.name() + ": missing tensor '" + std::string(name) + "'");
    }
    used_.insert(t->name);
    if (!IsSupportedWeightType(t->type) ||
        (kind == Kind::kVector && t->type != gguf::TensorType::kF32)) {
      return Unimplemented(
          file_.name() + ": tensor '" + std::string(name) + "' has type " + TypeName(t->type) +
          ", which is not supported here (supported: " +
          (kind == Kind::kVector ? "F32" : "F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K") + ")");
    }
    // Compare as llama.cpp does: missing trailing dimensions count as 1.
    std::vector<int64_t> actual;
    for (uint64_t d : t->shape) actual.push_back(static_cast<int64_t>(d));
    bool same = true;
    for (size_t i = 0; i < gguf::kMaxDims; ++i) {
      const int64_t want = i < shape.size() ? shape[i] : 1;
      const int64_t got = i < actual.size() ? actual[i] : 1;
      same = same && want == got;
    }
    if (!same) {
      return DataLoss(file_.name() + ": tensor '" + std::string(name) + "' has shape " +
                      ShapeString(actual) + ", expected " + ShapeString(shape));
    }
    const std::span<const uint8_t> bytes = file_.TensorData(*t);
    if (reinterpret_cast<uintptr_t>(bytes.data()) % 4 != 0) {
      return Unimplemented(file_.name() + ": tensor '" + std::string(name) +
                           "' is not 4-byte aligned (general.alignment = " +
                           std::to_string(file_.alignment()) + ")");
    }
    WeightView v;
    v.name = t->name;
    v.type = static_cast<kernels::DType>(t->type);
    v.data = bytes.data();
    v.cols = shape[0];
    v.rows = shape.size() > 1 ? shape[1] : 1;
    v.row_bytes = kernels::RowBytes(v.type, v.cols);
    CHECK(v.row_bytes * static_cast<size_t>(v.rows) == bytes.size()) << name;
    return v;
  }

  // The first tensor of the file that no Get() asked for, if any.
  Status CheckAllUsed(std::string_view arch) const {
    for (const gguf::TensorInfo& t : file_.tensors()) {
      if (used_.count(t.name) == 0) {
        return Unimplemented(file_.name() + ": unexpected tensor '" + std::string(t.name) +
                             "': the " + std::string(arch) + " architecture does not use it");
      }
    }
    return Status::Ok();
  }

 private:
  const gguf::GgufFile& file_;
  std::set<std::string_view> used_;
};

}  // namespace

bool IsSupportedWeightType(gguf::TensorType type) {
  switch (type) {
    case gguf::TensorType::kF32:
    case gguf::TensorType::kF16:
    case gguf::TensorType::kBF16:
    case gguf::TensorType::kQ8_0:
    case gguf::TensorType::kQ4_0:
    case gguf::TensorType::kQ4_K:
    case gguf::TensorType::kQ5_K:
    case gguf::TensorType::kQ6_K: return true;
    default: return false;
  }
}

Result<ModelWeights> ModelWeights::Load(const gguf::GgufFile& file, const ModelConfig& c) {
  using Kind = Loader::Kind;
  Loader loader(file);
  ModelWeights w;
  MNEME_ASSIGN_OR_RETURN(w.token_embd,
                         loader.Get(kTokenEmbdName, {c.dim, c.vocab_size}, Kind::kMatrix));
  MNEME_ASSIGN_OR_RETURN(w.output_norm, loader.Get(kOutputNormName, {c.dim}, Kind::kVector));
  if (c.tied_embeddings) {
    w.output = w.token_embd;
  } else {
    MNEME_ASSIGN_OR_RETURN(w.output, loader.Get(kOutputName, {c.dim, c.vocab_size}, Kind::kMatrix));
  }
  if (c.has_rope_freqs) {
    MNEME_ASSIGN_OR_RETURN(w.rope_freqs,
                           loader.Get(kRopeFreqsName, {c.rope_dims / 2}, Kind::kVector));
  }

  w.layers.resize(static_cast<size_t>(c.num_layers));
  for (int64_t i = 0; i < c.num_layers; ++i) {
    LayerWeights& l = w.layers[static_cast<size_t>(i)];
    const auto name = [i](std::string_view suffix) { return LayerTensorName(i, suffix); };
    MNEME_ASSIGN_OR_RETURN(l.attn_norm,
                           loader.Get(name("attn_norm.weight"), {c.dim}, Kind::kVector));
    MNEME_ASSIGN_OR_RETURN(l.wq,
                           loader.Get(name("attn_q.weight"), {c.dim, c.q_dim()}, Kind::kMatrix));
    MNEME_ASSIGN_OR_RETURN(l.wk,
                           loader.Get(name("attn_k.weight"), {c.dim, c.kv_dim()}, Kind::kMatrix));
    MNEME_ASSIGN_OR_RETURN(l.wv,
                           loader.Get(name("attn_v.weight"), {c.dim, c.kv_dim()}, Kind::kMatrix));
    MNEME_ASSIGN_OR_RETURN(
        l.wo, loader.Get(name("attn_output.weight"), {c.q_dim(), c.dim}, Kind::kMatrix));
    if (c.has_qkv_bias) {
      MNEME_ASSIGN_OR_RETURN(l.bq, loader.Get(name("attn_q.bias"), {c.q_dim()}, Kind::kVector));
      MNEME_ASSIGN_OR_RETURN(l.bk, loader.Get(name("attn_k.bias"), {c.kv_dim()}, Kind::kVector));
      MNEME_ASSIGN_OR_RETURN(l.bv, loader.Get(name("attn_v.bias"), {c.kv_dim()}, Kind::kVector));
    }
    if (c.has_output_bias) {
      MNEME_ASSIGN_OR_RETURN(l.bo, loader.Get(name("attn_output.bias"), {c.dim}, Kind::kVector));
    }
    if (c.has_qk_norm) {
      MNEME_ASSIGN_OR_RETURN(l.q_norm,
                             loader.Get(name("attn_q_norm.weight"), {c.head_dim}, Kind::kVector));
      MNEME_ASSIGN_OR_RETURN(l.k_norm,
                             loader.Get(name("attn_k_norm.weight"), {c.head_dim}, Kind::kVector));
    }
    MNEME_ASSIGN_OR_RETURN(l.ffn_norm, loader.Get(name("ffn_norm.weight"), {c.dim}, Kind::kVector));
    MNEME_ASSIGN_OR_RETURN(l.ffn_gate,
                           loader.Get(name("ffn_gate.weight"), {c.dim, c.ffn_dim}, Kind::kMatrix));
    MNEME_ASSIGN_OR_RETURN(l.ffn_up,
                           loader.Get(name("ffn_up.weight"), {c.dim, c.ffn_dim}, Kind::kMatrix));
    MNEME_ASSIGN_OR_RETURN(l.ffn_down,
                           loader.Get(name("ffn_down.weight"), {c.ffn_dim, c.dim}, Kind::kMatrix));
  }
  MNEME_RETURN_IF_ERROR(loader.CheckAllUsed(ArchName(c.arch)));
  return w;
}

uint64_t ModelWeights::TotalBytes() const {
  std::set<const uint8_t*> seen;
  uint64_t total = 0;
  const auto add = [&](const WeightView& v) {
    if (v.present() && seen.insert(v.data).second)
      total += v.row_bytes * static_cast<uint64_t>(v.rows);
  };
  add(token_embd);
  add(output_norm);
  add(output);
  add(rope_freqs);
  for (const LayerWeights& l : layers) {
    for (const WeightView* v :
         {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.bq, &l.bk, &l.bv, &l.bo, &l.q_norm,
          &l.k_norm, &l.ffn_norm, &l.ffn_gate, &l.ffn_up, &l.ffn_down}) {
      add(*v);
    }
  }
  return total;
}

}  // namespace mneme::model
