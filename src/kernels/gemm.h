// Matrix multiply for prefill and decode: C[m, n] = A[m, k] · W[n, k]^T.
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
// Batch invariance: each output element gets one fixed operation sequence,
// whatever m, the row's place in the batch and [n_begin, n_end) (partial
// panels run kernels instantiated for their row count), so the engine runs
// decode through Gemm too: docs/kernels.md, "Batch invariance". Weights may
// be prepacked once (PackWeightsForGemm) for the same bits without the
// per-call rearranging.
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
  std::vector<uint8_t> w_copy;     // one panel's weight rows (int8 paths)
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
  // Optional: W as PackWeightsForGemm arranged it (only where
  // GemmPrepackable; then n_begin must be a multiple of kGemmPanel). Gives
  // the same bits as `w`, without the per-call transposes.
  const void* w_packed = nullptr;
};

// Output columns per prepacked panel.
inline constexpr int64_t kGemmPanel = 32;

// Whether Gemm at `isa` can take prepacked weights of `type`: on AVX-512,
// F32 / F16 / BF16 (the f32 path; same size as W), Q8_0 (1.25 bytes per
// weight instead of 1.06) and Q4_K (0.578 instead of 0.5625: levels stay
// nibble-packed). Decode streams every weight once per token, and
// rearranging them on each call would cost more than the products. (Q4_0,
// Q5_K, Q6_K: not yet; their layout would hold a byte per level.)
bool GemmPrepackable(Isa isa, DType type);

// Bytes PackWeightsForGemm writes for an n x k matrix of `type`.
size_t GemmPackedBytes(DType type, int64_t n, int64_t k);

// Rearranges W (n rows of k elements, `w_row_bytes` apart) into panels of 32
// output columns. F32/F16/BF16: element p of column j at [j / 32][p][j % 32]
// (copied, not converted); Q8_0, Q4_K: the int8 paths' per-panel packing.
// Columns past n are zero.
void PackWeightsForGemm(DType type, const void* w, size_t w_row_bytes, int64_t n, int64_t k,
                        void* out);

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
