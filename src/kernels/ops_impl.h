// Internal: the per-ISA row kernels behind ops.h (ops.cc dispatches).
// Same contracts as the public functions in ops.h.
#pragma once

#include <cstdint>

#include "kernels/ops.h"

namespace mneme::kernels {

#define MNEME_DECLARE_OPS                                                              \
  double SumSquares(const float* x, int64_t n);                                        \
  void ScaleMul(const float* x, float scale, const float* w, float* out, int64_t n);   \
  void RopeApply(RopeMode mode, int n_dims, const float* cache, float* x, int n_heads, \
                 int head_dim);                                                        \
  void ScaleMask(float* x, int64_t n, float scale, const float* mask);                 \
  float Max(const float* x, int64_t n);                                                \
  double ExpSubSum(const float* x, float* y, int64_t n, float max);                    \
  double ExpSubSumPadded(const float* x, float* y, int64_t n, float max);              \
  void Scale(float* x, int64_t n, float s);                                            \
  void Silu(const float* x, float* y, int64_t n);                                      \
  void SwiGlu(const float* gate, const float* up, float* out, int64_t n);              \
  void Add(const float* a, const float* b, float* out, int64_t n);

namespace scalar {
MNEME_DECLARE_OPS
}
namespace avx2 {
MNEME_DECLARE_OPS
}
namespace avx512 {
MNEME_DECLARE_OPS
}

#undef MNEME_DECLARE_OPS

}  // namespace mneme::kernels
