// Scalar references of the ops in ops.h: plain loops that spell out ggml's
// formulas (see ops.h). The SIMD levels are tested against these.
#include <algorithm>
#include <cmath>

#include "kernels/ops_impl.h"

// Each product and sum rounded as written, even under -march with FMA.
#pragma GCC optimize("fp-contract=off")

namespace mneme::kernels::scalar {

double SumSquares(const float* x, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
  return sum;
}

void ScaleMul(const float* x, float scale, const float* w, float* out, int64_t n) {
  if (w == nullptr) {
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale;
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const float y = x[i] * scale;  // ggml_rms_norm's output, then ggml_mul
    out[i] = y * w[i];
  }
}

void RopeApply(RopeMode mode, int n_dims, const float* cache, float* x, int n_heads, int head_dim) {
  // Pair i: (x[a], x[b]) with a = 2i, b = 2i+1 (normal) or a = i,
  // b = i + n_dims/2 (neox); both use theta_i = cache[2i], cache[2i+1].
  const int half = n_dims / 2;
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + static_cast<int64_t>(h) * head_dim;
    for (int i = 0; i < half; ++i) {
      const int a = mode == RopeMode::kNormal ? 2 * i : i;
      const int b = mode == RopeMode::kNormal ? 2 * i + 1 : i + half;
      const float c = cache[2 * i], s = cache[2 * i + 1];
      const float x0 = v[a], x1 = v[b];
      const float p0 = x0 * c, p1 = x1 * s, p2 = x0 * s, p3 = x1 * c;
      v[a] = p0 - p1;
      v[b] = p2 + p3;
    }
  }
}

void ScaleMask(float* x, int64_t n, float scale, const float* mask) {
  for (int64_t i = 0; i < n; ++i) {
    x[i] *= scale;
    if (mask != nullptr) x[i] += mask[i];
  }
}

float Max(const float* x, int64_t n) {
  float m = -INFINITY;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

double ExpSubSum(const float* x, float* y, int64_t n, float max) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const float v = std::exp(x[i] - max);
    sum += static_cast<double>(v);
    y[i] = v;
  }
  return sum;
}

double ExpSubSumPadded(const float* x, float* y, int64_t n, float max) {
  return ExpSubSum(x, y, n, max);
}

void Scale(float* x, int64_t n, float s) {
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

void Silu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void SwiGlu(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = (g / (1.0f + std::exp(-g))) * up[i];
  }
}

void Add(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

}  // namespace mneme::kernels::scalar
