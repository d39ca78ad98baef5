// Matrix multiply for prefill: C[m, n] = A[m, k] · W[n, k]^T.
//
// A holds m activation rows (f32, row-major, stride lda floats); W holds n
// weight rows of any supported type (stride w_row_bytes bytes; one output
// feature per row, quantized along k); C is f32 row-major (stride ldc).
//
// Numerics follow llama.cpp: each A row is first converted to the weight's
// vec-dot type (F16 weights see f16-rounded activations, Q4_K sees Q8_K
// activations, ...). The converted values are exactly representable in f32,
// so we dequantize them back to f32 and run an f32 FMA micro-kernel over
// dequantized weight tiles: every product is then exactly the one llama.cpp's
// integer/f16 kernels form, and only the f32 summation order differs.
//
// Blocking (GotoBLAS style, docs/kernels.md): for each k-slice of kKc, A is
// packed into panels of MR rows ([kc][MR]); for each group of NR output
// columns the W rows are dequantized and packed ([kc][NR], L1-resident) and
// the micro-kernel sweeps all A panels (L2-resident) with an MR x NR register
// tile (AVX-512: 14 x 32, AVX2: 6 x 16).
//
// On AVX-512, quantized weights instead take int8 VNNI paths (gemm_q8.cc for
// Q8_0/Q4_0, gemm_qk.cc for K-quants): exact int32 (sub-)block sums times the
// f32 scales, as llama.cpp.
//
// Threading: Gemm computes only output columns [n_begin, n_end), so a caller
// (thread pool) can split columns; rows can be split too by offsetting a and
// c and shrinking m. Gemm itself never creates threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/quant_types.h"

namespace mneme::kernels {

// Reusable packing buffers (one per calling thread); sized on first use.
struct GemmScratch {
  std::vector<float> a_conv;     // [m][k] activations after vec-dot-type rounding
  std::vector<uint8_t> a_quant;  // one converted A row
  std::vector<float> a_pack;     // [m / MR][kc][MR]
  std::vector<float> w_rows;     // [NR][kc] dequantized W slice
  std::vector<float> w_pack;     // [kc][NR]
  // Int8 path (gemm_q8.cc): Q8_0 activations and packed Q8_0/Q4_0 weights.
  std::vector<BlockQ8_0> q8_rows;  // [m][k / 32] quantized A
  std::vector<uint8_t> q8_a;       // [m / 7][k / 32][8][7][4]
  std::vector<float> q8_a_scale;   // [m / 7][k / 32][7]
  std::vector<int32_t> q8_a_corr;  // [m / 7][k / 32][7]
  std::vector<uint8_t> q8_w;       // [k / 32][8][32][4]
  std::vector<float> q8_w_scale;   // [k / 32][32]
  std::vector<int32_t> q8_w_corr;  // [k / 32][32]
  // Int8 K-quant path (gemm_qk.cc); shares q8_a* for the packed A.
  std::vector<BlockQ8K> qk_rows;   // [m][k / 256] quantized A
  std::vector<int32_t> qk_w_sc;    // [k / 256][subs][32] sub-block scales
  std::vector<int32_t> qk_w_mins;  // [k / 256][subs / 2][32] int16 pairs
  std::vector<float> qk_w_d;       // [k / 256][32]
  std::vector<float> qk_w_e;       // [k / 256][32]
};

struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;  // k a multiple of w_type's block size
  const float* a = nullptr;
  int64_t lda = 0;
  DType w_type = DType::kF32;
  const void* w = nullptr;
  size_t w_row_bytes = 0;
  float* c = nullptr;
  int64_t ldc = 0;
};

// Computes C[:, n_begin:n_end]. `isa` must be supported by this CPU.
void Gemm(Isa isa, const GemmArgs& args, int64_t n_begin, int64_t n_end, GemmScratch* scratch);

// Naive reference: C[i][j] = sum_k a'[i][k] * w'[j][k] in double, with a' the
// vec-dot-rounded activations and w' the dequantized weights.
void GemmReference(const GemmArgs& args);

// Rounds one activation row the way the weight type's dot product sees it
// (f32 -> vec-dot type -> f32). `quant_buf` is scratch.
void RoundActivationsForDot(DType w_type, const float* x, float* out, int64_t k,
                            std::vector<uint8_t>* quant_buf);

}  // namespace mneme::kernels
