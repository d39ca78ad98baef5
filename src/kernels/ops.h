// Element-wise and row ops of the transformer forward pass: RMS norm, RoPE,
// softmax, SiLU / SwiGLU, residual add.
//
// Each op follows the formula (and where it matters, the rounding steps) of
// llama.cpp's CPU backend (ggml-cpu ops.cpp / vec.h), so that logits agree
// with llama.cpp to float rounding:
//   RmsNorm:  sum of float products x*x accumulated in double, mean cast to
//             float, scale = 1.0f / sqrtf(mean + eps); out = (x * scale) * w
//             (ggml_rms_norm then ggml_mul).
//   RoPE:     ggml_rope_cache_init with ext_factor 0: theta starts at (float)pos
//             and is multiplied by theta_scale = powf(base, -2/n_dims) once per
//             pair in float (not pos * base^(-2i/n_dims) recomputed), divided by
//             the freq factor, times freq_scale; cosf / sinf from libm.
//   Softmax:  x * scale (+ mask), max, exp(x - max) summed in double,
//             y *= (float)(1.0 / sum) (ggml_compute_forward_soft_max_f32).
//   SiLU:     x / (1 + exp(-x)) in f32; SwiGLU = silu(gate) * up.
// exp: the scalar level uses libm expf (ggml's scalar tails do); the SIMD
// levels use the same polynomial exp as ggml's AVX2 / AVX-512 ggml_v_expf
// (ARM optimized-routines, <= 1.95 ulp), each on the elements ggml's loop
// would give it (full 8 / 16-lanes, tail elements through expf).
//
// All functions take the Isa explicitly (tests run every level); the
// overloads without it use ActiveIsa(). Pointers may alias only where noted.
#pragma once

#include <cstdint>

#include "kernels/cpu_features.h"

namespace mneme::kernels {

// out[i] = (x[i] * scale) * w[i], scale = 1/sqrt(mean(x^2) + eps). `out` may
// alias `x`. `w` may be null (no weight multiply).
void RmsNorm(Isa isa, const float* x, const float* w, float eps, float* out, int64_t n);

// RmsNorm on `rows` rows of n contiguous floats (row r at x + r * n).
void RmsNormRows(Isa isa, const float* x, const float* w, float eps, float* out, int64_t n,
                 int64_t rows);

// ---- RoPE ----

enum class RopeMode {
  kNormal,  // adjacent pairs (x0,x1), (x2,x3), ...: arch llama
  kNeox,    // pairs (x_i, x_{i + n_dims/2}): arch qwen2 / qwen3
};

struct RopeParams {
  RopeMode mode = RopeMode::kNormal;
  int n_dims = 0;                       // rotated dims (rope.dimension_count), even, <= head_dim
  float freq_base = 10000.f;            // rope.freq_base
  float freq_scale = 1.f;               // 1 / linear scaling factor
  const float* freq_factors = nullptr;  // [n_dims/2] or null (Llama 3 rope_freqs)
};

// cache[2i] = cos(theta_i), cache[2i+1] = sin(theta_i) for i < n_dims/2, at
// position `pos`, computed exactly as ggml_rope_cache_init (scalar: libm).
void RopeCache(const RopeParams& p, int32_t pos, float* cache);

// Rotates x [n_heads, head_dim] in place with a cache from RopeCache; dims
// >= n_dims pass through. x0*c - x1*s and x0*s + x1*c are two rounded
// products and a rounded add at every level (no FMA), so all levels are
// bit-identical.
void RopeApply(Isa isa, RopeMode mode, int n_dims, const float* cache, float* x, int n_heads,
               int head_dim);

// RopeCache + RopeApply for n_rows rows of [n_heads, head_dim] at positions
// pos[r] (rows back to back). `cache_scratch` holds n_dims floats.
void RopeRows(Isa isa, const RopeParams& p, const int32_t* pos, float* x, int64_t n_rows,
              int n_heads, int head_dim, float* cache_scratch);

// ---- softmax and activations ----

// In place: x[i] = x[i] * scale (+ mask[i] when mask is not null; -inf
// masks an entry), then softmax over the n entries. A row whose entries are
// all -inf is undefined (the caller never masks every position).
void Softmax(Isa isa, float* x, int64_t n, float scale, const float* mask);

// Softmax with no mask whose SIMD levels send the tail through the vector exp
// too, summing as if the row were padded with -inf to the vector width. This
// is what ggml computes for an attention row: llama.cpp pads the KV length to
// a multiple of 32 and masks the padding with -inf, so every score takes the
// vector exp and the padding adds exact zeros. Used by Attention.
void SoftmaxPadded(Isa isa, float* x, int64_t n, float scale);

// y[i] = x[i] / (1 + exp(-x[i])). y may alias x.
void Silu(Isa isa, const float* x, float* y, int64_t n);

// out[i] = silu(gate[i]) * up[i]. out may alias gate or up.
void SwiGlu(Isa isa, const float* gate, const float* up, float* out, int64_t n);

// out[i] = a[i] + b[i] (residual add, bias add). out may alias a or b.
void Add(Isa isa, const float* a, const float* b, float* out, int64_t n);

// y[i] = exp(x[i] - max) for i < n; returns sum y[i] in double
// (ggml_vec_soft_max_f32). y may alias x. Used by Softmax and attention.
double ExpSubSum(Isa isa, const float* x, float* y, int64_t n, float max);

// ---- ActiveIsa() overloads ----

inline void RmsNorm(const float* x, const float* w, float eps, float* out, int64_t n) {
  RmsNorm(ActiveIsa(), x, w, eps, out, n);
}
inline void Softmax(float* x, int64_t n, float scale, const float* mask) {
  Softmax(ActiveIsa(), x, n, scale, mask);
}
inline void SwiGlu(const float* gate, const float* up, float* out, int64_t n) {
  SwiGlu(ActiveIsa(), gate, up, out, n);
}
inline void Add(const float* a, const float* b, float* out, int64_t n) {
  Add(ActiveIsa(), a, b, out, n);
}

}  // namespace mneme::kernels
