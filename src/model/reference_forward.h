// ReferenceForward: the golden forward pass. Plain loops, one sequence, f32
// activations, no SIMD kernels and no cleverness, so that the fast paged and
// batched engine can be tested against it (and so that anyone can read what
// the model computes in one sitting).
//
// Per layer, for each new token at position p (shapes per token):
//
//   x [dim] ── RMSNorm·attn_norm ──▶ xn
//     q = Wq xn (+bq) [heads, head_dim]   k = Wk xn (+bk)   v = Wv xn (+bv)
//     qwen3: q, k per-head RMSNorm·attn_{q,k}_norm
//     RoPE(q, k, p)        normal pairs (2i, 2i+1) or NeoX (i, i + rope_dims/2),
//                          theta_i = p * freq_scale * base^(-2i/rope_dims) / freqs[i]
//     append k, v to this layer's cache (positions 0..p)
//     head h attends with kv head h / (heads / kv_heads):
//       a = softmax_{j<=p}(q·k_j / sqrt(head_dim)) · v
//   x += Wo a (+bo)
//   x += W_down (silu(W_gate xn') * W_up xn'),   xn' = RMSNorm·ffn_norm(x)
//
// then logits = W_out RMSNorm·output_norm(x). Weights are dequantized row by
// row to f32 with the kernels' scalar dequantizers; dot products and sums
// accumulate in double. (llama.cpp instead rounds activations to Q8_0/Q8_K/F16
// before quantized/half dots; the fast engine mirrors that, this does not, so
// the two differ by that rounding.)
//
// The KV cache is one contiguous f32 array per layer, [position][kv_dim] for
// K and for V. A ThreadPool, when given, only splits the rows of each matrix
// product over threads; the numbers do not depend on the thread count.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/model_config.h"
#include "model/weights.h"
#include "tokenizer/vocab.h"
#include "util/status.h"
#include "util/thread_pool.h"

namespace mneme::model {

class ReferenceForward {
 public:
  // `config`, `weights` (and the file they view) and `pool` (may be null)
  // must outlive this object.
  ReferenceForward(const ModelConfig& config, const ModelWeights& weights,
                   ThreadPool* pool = nullptr);

  // Runs `tokens` at positions num_tokens() .. num_tokens() + n - 1 and keeps
  // their K/V. Returns the logits of the last token [vocab_size], or with
  // `all_logits` those of every token [n][vocab_size].
  // Fails, changing nothing, on an empty span, an id outside the vocabulary
  // or when the context length would be exceeded. Non-finite logits are a
  // DATA_LOSS error (the tokens stay cached; Reset or Truncate to go on).
  Result<std::vector<float>> Eval(std::span<const TokenId> tokens, bool all_logits = false);

  int64_t num_tokens() const { return num_tokens_; }
  // Forgets cached positions >= n (n <= num_tokens()).
  void Truncate(int64_t n);
  void Reset() { Truncate(0); }

 private:
  // y[t][r] = dot(row r of w, x[t]) for t < n: x is [n][w.cols], y [n][w.rows].
  void MatMul(const WeightView& w, const float* x, int64_t n, float* y);
  // out[t] = RMSNorm(x[t]) * weight, rows of `width`.
  void RmsNorm(const float* x, const float* weight, int64_t n, int64_t width, float* out) const;
  // Rotates `num_heads` heads of each of n rows (row t at position pos0 + t).
  void Rope(float* x, int64_t n, int64_t num_heads, int64_t pos0) const;
  // Causal GQA attention of n new queries over the layer's cache.
  void Attention(const float* q, int64_t n, int64_t pos0, const std::vector<float>& k_cache,
                 const std::vector<float>& v_cache, float* out) const;

  const ModelConfig& config_;
  const ModelWeights& weights_;
  ThreadPool* pool_;
  std::vector<double> inv_freq_;  // per rotated pair: freq_scale * base^(-2i/d) / freqs[i]
  std::vector<std::vector<float>> scratch_;  // per thread: one dequantized row
  std::vector<std::vector<float>> k_cache_;  // per layer [num_tokens][kv_dim]
  std::vector<std::vector<float>> v_cache_;
  int64_t num_tokens_ = 0;
};

}  // namespace mneme::model
