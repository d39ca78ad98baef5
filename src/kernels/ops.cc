// Dispatch of the ops in ops.h to the scalar / AVX2 / AVX-512 row kernels,
// and the parts that are the same at every level (RoPE cache, the order of
// the softmax steps).
#include "kernels/ops.h"

#include <cmath>

#include "kernels/ops_impl.h"

namespace mneme::kernels {

#define MNEME_OPS_DISPATCH(isa, call)       \
  switch (isa) {                            \
    case Isa::kAvx512: return avx512::call; \
    case Isa::kAvx2: return avx2::call;     \
    case Isa::kScalar: break;               \
  }                                         \
  return scalar::call

void RmsNorm(Isa isa, const float* x, const float* w, float eps, float* out, int64_t n) {
  double sum = 0;
  switch (isa) {
    case Isa::kAvx512: sum = avx512::SumSquares(x, n); break;
    case Isa::kAvx2: sum = avx2::SumSquares(x, n); break;
    case Isa::kScalar: sum = scalar::SumSquares(x, n); break;
  }
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  MNEME_OPS_DISPATCH(isa, ScaleMul(x, scale, w, out, n));
}

void RmsNormRows(Isa isa, const float* x, const float* w, float eps, float* out, int64_t n,
                 int64_t rows) {
  for (int64_t r = 0; r < rows; ++r) RmsNorm(isa, x + r * n, w, eps, out + r * n, n);
}

void RopeCache(const RopeParams& p, int32_t pos, float* cache) {
  // ggml_rope_cache_init + rope_yarn with ext_factor = 0 and mscale = 1.
  const float theta_scale = std::pow(p.freq_base, -2.0f / static_cast<float>(p.n_dims));
  float theta = static_cast<float>(pos);
  for (int i = 0; i < p.n_dims / 2; ++i) {
    const float ff = p.freq_factors != nullptr ? p.freq_factors[i] : 1.0f;
    const float t = p.freq_scale * (theta / ff);
    cache[2 * i] = std::cos(t);
    cache[2 * i + 1] = std::sin(t);
    theta *= theta_scale;
  }
}

void RopeApply(Isa isa, RopeMode mode, int n_dims, const float* cache, float* x, int n_heads,
               int head_dim) {
  MNEME_OPS_DISPATCH(isa, RopeApply(mode, n_dims, cache, x, n_heads, head_dim));
}

void RopeRows(Isa isa, const RopeParams& p, const int32_t* pos, float* x, int64_t n_rows,
              int n_heads, int head_dim, float* cache_scratch) {
  const int64_t row = static_cast<int64_t>(n_heads) * head_dim;
  for (int64_t r = 0; r < n_rows; ++r) {
    RopeCache(p, pos[r], cache_scratch);
    RopeApply(isa, p.mode, p.n_dims, cache_scratch, x + r * row, n_heads, head_dim);
  }
}

double ExpSubSum(Isa isa, const float* x, float* y, int64_t n, float max) {
  MNEME_OPS_DISPATCH(isa, ExpSubSum(x, y, n, max));
}

namespace {

void SoftmaxImpl(Isa isa, float* x, int64_t n, float scale, const float* mask, bool padded) {
  float max = 0;
  switch (isa) {
    case Isa::kAvx512:
      avx512::ScaleMask(x, n, scale, mask);
      max = avx512::Max(x, n);
      break;
    case Isa::kAvx2:
      avx2::ScaleMask(x, n, scale, mask);
      max = avx2::Max(x, n);
      break;
    case Isa::kScalar:
      scalar::ScaleMask(x, n, scale, mask);
      max = scalar::Max(x, n);
      break;
  }
  double sum = 0;
  if (!padded) {
    sum = ExpSubSum(isa, x, x, n, max);
  } else {
    switch (isa) {
      case Isa::kAvx512: sum = avx512::ExpSubSumPadded(x, x, n, max); break;
      case Isa::kAvx2: sum = avx2::ExpSubSumPadded(x, x, n, max); break;
      case Isa::kScalar: sum = scalar::ExpSubSumPadded(x, x, n, max); break;
    }
  }
  const float inv = static_cast<float>(1.0 / sum);
  MNEME_OPS_DISPATCH(isa, Scale(x, n, inv));
}

}  // namespace

void Softmax(Isa isa, float* x, int64_t n, float scale, const float* mask) {
  SoftmaxImpl(isa, x, n, scale, mask, false);
}

void SoftmaxPadded(Isa isa, float* x, int64_t n, float scale) {
  SoftmaxImpl(isa, x, n, scale, nullptr, true);
}

void Silu(Isa isa, const float* x, float* y, int64_t n) {
  MNEME_OPS_DISPATCH(isa, Silu(x, y, n));
}

void SwiGlu(Isa isa, const float* gate, const float* up, float* out, int64_t n) {
  MNEME_OPS_DISPATCH(isa, SwiGlu(gate, up, out, n));
}

void Add(Isa isa, const float* a, const float* b, float* out, int64_t n) {
  MNEME_OPS_DISPATCH(isa, Add(a, b, out, n));
}

#undef MNEME_OPS_DISPATCH

}  // namespace mneme::kernels
