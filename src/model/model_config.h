// ModelConfig: the hyperparameters of a Llama-family model, read from GGUF
// metadata exactly as llama.cpp reads them (llama-model.cpp load_hparams), so
// the same file means the same network here and there.
//
// Supported architectures (`general.architecture`):
//
//   llama  Llama 2 / 3.x, TinyLlama, SmolLM2, Mistral (no sliding window).
//          RoPE on adjacent pairs (x[2i], x[2i+1]); optional rope_freqs.weight
//          (Llama 3 frequency factors); optional attention biases.
//   qwen2  RoPE on NeoX halves (x[i], x[i + rope_dims/2]); Q/K/V biases.
//   qwen3  NeoX RoPE; per-head RMSNorm of Q and K (attn_q_norm/attn_k_norm).
//
// Anything else is refused, as are features we deliberately do not implement
// (YaRN / LongRoPE scaling, mixture of experts, per-layer head counts that
// differ, K and V head sizes that differ).
//
// Keys, with ARCH = the architecture name (defaults as llama.cpp's):
//   ARCH.context_length, .embedding_length, .block_count,
//   .feed_forward_length, .attention.head_count          required
//   ARCH.attention.head_count_kv                         default head_count
//   ARCH.attention.key_length / .value_length            default dim / heads
//   ARCH.attention.layer_norm_rms_epsilon                required
//   ARCH.rope.dimension_count                            default head_dim
//   ARCH.rope.freq_base                                  default 10000
//   ARCH.rope.scaling.type  none|linear (default linear; others refused)
//   ARCH.rope.scaling.factor, else ARCH.rope.scale_linear -> freq_scale = 1/factor
//   vocab size: length of tokenizer.ggml.tokens, else ARCH.vocab_size, else
//   the rows of token_embd.weight.
// Head counts and the feed-forward size may also be per-layer arrays, as
// llama.cpp allows, but only when every layer has the same value.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gguf/gguf.h"
#include "util/status.h"

namespace mneme::model {

enum class Arch { kLlama, kQwen2, kQwen3 };
std::string_view ArchName(Arch arch);

// How RoPE pairs up the dimensions of a head (ggml's rope modes).
enum class RopeType {
  kNormal,  // (x[2i], x[2i+1])               ggml mode 0 (llama)
  kNeox,    // (x[i], x[i + rope_dims / 2])   ggml mode 2 (qwen2, qwen3)
};

// Tensor names, shared by the weight loader and tests.
inline constexpr std::string_view kTokenEmbdName = "token_embd.weight";
inline constexpr std::string_view kOutputNormName = "output_norm.weight";
inline constexpr std::string_view kOutputName = "output.weight";
inline constexpr std::string_view kRopeFreqsName = "rope_freqs.weight";
// "blk.<layer>.<suffix>", e.g. LayerTensorName(3, "attn_q.weight").
std::string LayerTensorName(int64_t layer, std::string_view suffix);

struct ModelConfig {
  Arch arch = Arch::kLlama;

  int64_t dim = 0;  // embedding length (residual stream width)
  int64_t num_layers = 0;
  int64_t num_heads = 0;     // query heads
  int64_t num_kv_heads = 0;  // key/value heads (GQA: num_heads % num_kv_heads == 0)
  int64_t head_dim = 0;      // per head, for Q, K and V alike
  int64_t ffn_dim = 0;       // SwiGLU hidden size
  int64_t vocab_size = 0;
  int64_t context_length = 0;  // positions the model was trained for
  float rms_eps = 0.f;

  RopeType rope_type = RopeType::kNormal;
  int64_t rope_dims = 0;  // leading dims of each head that rotate (even)
  float rope_freq_base = 10000.f;
  float rope_freq_scale = 1.f;  // linear scaling: positions are multiplied by this

  // Facts read from the tensor list (the loader validates their shapes).
  bool tied_embeddings = false;  // no output.weight: logits use token_embd
  bool has_rope_freqs = false;   // rope_freqs.weight: theta_i /= freqs[i]
  bool has_qkv_bias = false;     // attn_{q,k,v}.bias (qwen2; optional for llama)
  bool has_output_bias = false;  // attn_output.bias (optional for llama)
  bool has_qk_norm = false;      // attn_{q,k}_norm.weight (qwen3)

  int64_t q_dim() const { return num_heads * head_dim; }
  int64_t kv_dim() const { return num_kv_heads * head_dim; }

  // Reads and validates the metadata (and which optional tensors exist).
  // Errors start with the file name and name the key at fault.
  static Result<ModelConfig> FromGguf(const gguf::GgufFile& file);

  // One "name = value" line per field, for logs and debugging.
  std::string DebugString() const;
};

}  // namespace mneme::model
