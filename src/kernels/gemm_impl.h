// Internal: register-tile micro-kernels behind Gemm.
//
// C_tile[MR][NR] (+)= sum_p a_pack[p][0..MR) (outer) w_pack[p][0..NR)
// a_pack: [kc][MR] floats, w_pack: [kc][NR] floats, C row stride ldc.
// accumulate=false overwrites the tile, true adds to it.
#pragma once

#include <cstdint>

#include "kernels/gemm.h"

namespace mneme::kernels {

using MicroKernelFn = void (*)(int64_t kc, const float* a_pack, const float* w_pack, float* c,
                               int64_t ldc, bool accumulate);

// Packing: out[p * nr + r] = rows[r * ld + p] for p < kc, r < nrows, and 0
// for nrows <= r < nr (nr <= 32). The AVX-512 version uses 16 x 16 register
// transposes; the scalar one is the reference.
void PackTransposedScalar(const float* rows, int64_t ld, int nrows, int nr, int64_t kc, float* out);

// Optional rounding applied while packing A (f32 -> f16/bf16 -> f32), so
// F16/BF16 weights need no separate activation-rounding pass.
enum class PackRound { kNone, kF16, kBf16 };

namespace avx512 {
inline constexpr int kGemmMr = 14;
inline constexpr int kGemmNr = 32;
void GemmMicroKernel(int64_t kc, const float* a_pack, const float* w_pack, float* c, int64_t ldc,
                     bool accumulate);
void PackTransposed(const float* rows, int64_t ld, int nrows, int nr, int64_t kc, float* out,
                    PackRound round = PackRound::kNone);
// Int8 (VNNI) Gemm for Q8_0 / Q4_0 weights with Q8_0 activations (gemm_q8.cc).
void GemmQ8(const GemmArgs& args, int64_t n_begin, int64_t n_end, GemmScratch* s);
// Int8 (VNNI) Gemm for Q4_K / Q5_K / Q6_K weights with Q8_K activations (gemm_qk.cc).
void GemmQK(const GemmArgs& args, int64_t n_begin, int64_t n_end, GemmScratch* s);
}  // namespace avx512

namespace avx2 {
inline constexpr int kGemmMr = 6;
inline constexpr int kGemmNr = 16;
void GemmMicroKernel(int64_t kc, const float* a_pack, const float* w_pack, float* c, int64_t ldc,
                     bool accumulate);
}  // namespace avx2

}  // namespace mneme::kernels
