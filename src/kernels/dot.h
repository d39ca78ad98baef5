// Dot products: one weight row · one activation row, per weight type.
//
// This is the decode hot path (matrix-vector). As in llama.cpp, the f32
// activation row is first converted once to the weight type's partner,
// DTypeInfo::vec_dot_type (F32 -> F32, F16 -> F16, BF16 -> BF16,
// Q4_0/Q8_0 -> Q8_0, Q4_K/Q5_K/Q6_K -> Q8_K), with ConvertActivations(), and
// each weight row is then dotted against that converted row. Quantized dots
// accumulate exact integer sums per block and apply the f32 block scales, so
// they differ from llama.cpp only by float summation order.
//
// Every type has a scalar reference; kAvx2 and kAvx512 versions exist for all
// (see docs/kernels.md for what each level uses).
#pragma once

#include <cstdint>

#include "kernels/cpu_features.h"
#include "kernels/quant_types.h"

namespace mneme::kernels {

// Converts n f32 activations to `vec_dot_type` (the partner of the weight
// type); `dst` must hold RowBytes(vec_dot_type, n) bytes.
void ConvertActivations(DType vec_dot_type, const float* x, void* dst, int64_t n);

// sum_i w[i] * a[i] over n elements. `w` is a row of `w_type`, `a` a row of
// GetDTypeInfo(w_type)->vec_dot_type; n a multiple of the block size. `isa`
// must be supported by this CPU (IsaSupported).
float VecDot(Isa isa, DType w_type, int64_t n, const void* w, const void* a);

// VecDot with the process-wide ActiveIsa().
inline float VecDot(DType w_type, int64_t n, const void* w, const void* a) {
  return VecDot(ActiveIsa(), w_type, n, w, a);
}

// out[r] = VecDot(row r of w, a) for rows [row_begin, row_end) of a weight
// matrix whose rows are `row_bytes` apart. The caller splits rows over threads.
void MatVec(Isa isa, DType w_type, int64_t n, const void* w, size_t row_bytes, const void* a,
            float* out, int64_t row_begin, int64_t row_end);

}  // namespace mneme::kernels
