// ModelWeights: zero-copy views of every tensor a forward pass needs, checked
// once at load so the forward code never has to.
//
// Each view points into the mmapped GgufFile (which must outlive the
// weights). Load validates, for every tensor the config implies:
//   - presence               "missing tensor 'blk.3.ffn_up.weight'"
//   - type                   matrices: F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K,
//                            Q6_K; norms, biases and rope_freqs: F32 only
//   - exact shape (ggml order, ne[0] first)
//                            "tensor 'blk.0.attn_k.weight' has shape [64, 16],
//                             expected [64, 32]"
//   - no leftovers           a tensor the architecture does not use is an
//                            error (llama.cpp refuses such files too)
//
// Matrix layout (ggml): a weight of shape [in, out] is `out` rows of `in`
// contiguous elements, so y = W x is y[r] = dot(row r, x). Row r starts at
// data + r * row_bytes, in the tensor's block format (kernels/quant_types.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gguf/gguf.h"
#include "kernels/quant_types.h"
#include "model/model_config.h"
#include "util/status.h"

namespace mneme::model {

// One tensor as a matrix of `rows` rows of `cols` elements (a 1-D tensor is
// one row). An absent optional tensor has data == nullptr.
struct WeightView {
  std::string_view name;
  kernels::DType type = kernels::DType::kF32;
  const uint8_t* data = nullptr;
  int64_t cols = 0;  // ne[0]: elements per row (the input size of a matrix)
  int64_t rows = 0;  // ne[1] (1 for vectors): the output size
  size_t row_bytes = 0;

  bool present() const { return data != nullptr; }
  const void* Row(int64_t r) const { return data + static_cast<size_t>(r) * row_bytes; }
  // A 1-D F32 tensor (norm weights, biases, rope_freqs): `cols` floats.
  // Load guarantees the type and a 4-byte aligned address.
  const float* f32() const { return reinterpret_cast<const float*>(data); }
};

struct LayerWeights {
  WeightView attn_norm;       // [dim]
  WeightView wq;              // [dim, q_dim]
  WeightView wk;              // [dim, kv_dim]
  WeightView wv;              // [dim, kv_dim]
  WeightView wo;              // [q_dim, dim]
  WeightView bq, bk, bv;      // [q_dim], [kv_dim], [kv_dim]  (has_qkv_bias)
  WeightView bo;              // [dim]                        (has_output_bias)
  WeightView q_norm, k_norm;  // [head_dim], [head_dim]        (has_qk_norm)
  WeightView ffn_norm;        // [dim]
  WeightView ffn_gate;        // [dim, ffn_dim]
  WeightView ffn_up;          // [dim, ffn_dim]
  WeightView ffn_down;        // [ffn_dim, dim]
};

struct ModelWeights {
  WeightView token_embd;   // [dim, vocab]: row t is token t's embedding
  WeightView output_norm;  // [dim]
  WeightView output;       // [dim, vocab]: token_embd itself when tied
  WeightView rope_freqs;   // [rope_dims / 2]                (has_rope_freqs)
  std::vector<LayerWeights> layers;

  // `file` must outlive the result; `config` must come from the same file.
  static Result<ModelWeights> Load(const gguf::GgufFile& file, const ModelConfig& config);

  // Sum of the bytes of all distinct tensors viewed.
  uint64_t TotalBytes() const;
};

// Whether the engine can compute with tensors of this GGUF type.
bool IsSupportedWeightType(gguf::TensorType type);

}  // namespace mneme::model
