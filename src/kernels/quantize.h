// Scalar reference (de)quantization for every supported block format.
//
// Dequantize*: one row of n elements (n a multiple of the block size) -> f32,
// exactly as ggml's dequantize_row_* computes it.
// Quantize* for weights (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K) are simple
// round-to-nearest quantizers meant for synthetic test models, not ggml's
// error-minimizing ones; real weights come quantized from the GGUF file.
// Quantize* for activations mirror what llama.cpp does on x86 before a dot
// product, so our dots see the same integers:
//   Q8_0: d = amax / 127 (stored f16), q = round-half-even(x * (127 / amax)).
//   Q8_K: ggml's quantize_row_q8_K_ref (iscale = -127 / max, d = 1 / iscale).
#pragma once

#include <cstdint>

#include "kernels/quant_types.h"

namespace mneme::kernels {

void DequantizeRowQ4_0(const BlockQ4_0* x, float* y, int64_t n);
void DequantizeRowQ8_0(const BlockQ8_0* x, float* y, int64_t n);
void DequantizeRowQ4K(const BlockQ4K* x, float* y, int64_t n);
void DequantizeRowQ5K(const BlockQ5K* x, float* y, int64_t n);
void DequantizeRowQ6K(const BlockQ6K* x, float* y, int64_t n);
void DequantizeRowQ8K(const BlockQ8K* x, float* y, int64_t n);

// Any supported type (including F32/F16/BF16) -> f32.
void DequantizeRow(DType type, const void* x, float* y, int64_t n);

void QuantizeRowQ4_0(const float* x, BlockQ4_0* y, int64_t n);
void QuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n);
void QuantizeRowQ4K(const float* x, BlockQ4K* y, int64_t n);
void QuantizeRowQ5K(const float* x, BlockQ5K* y, int64_t n);
void QuantizeRowQ6K(const float* x, BlockQ6K* y, int64_t n);
void QuantizeRowQ8K(const float* x, BlockQ8K* y, int64_t n);

// QuantizeRowQ8_0 / QuantizeRowQ8K with AVX-512 (the CPU must have it: IsaSupported(kAvx512));
// bit-identical for finite inputs.
void QuantizeRowQ8_0Avx512(const float* x, BlockQ8_0* y, int64_t n);
void QuantizeRowQ8KAvx512(const float* x, BlockQ8K* y, int64_t n);

// f32 -> any supported type (F16/BF16 round to nearest-even).
void QuantizeRow(DType type, const float* x, void* y, int64_t n);

// Round half to even, as ggml's nearest_int (valid for |v| < 2^22).
inline int NearestInt(float v) {
  const float shifted = v + 12582912.f;  // 1.5 * 2^23
  int32_t i;
  __builtin_memcpy(&i, &shifted, sizeof(i));
  return (i & 0x007fffff) - 0x00400000;
}

}  // namespace mneme::kernels
