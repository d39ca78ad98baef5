// Internal: register-tile micro-kernels behind Gemm.
//
// C_tile[R][NR] (+)= sum_p a_pack[p][0..R) (outer) w_pack[p][0..NR)
// a_pack: [kc][MR] floats (R <= MR rows used), w_pack: [kc][NR] floats, C row
// stride ldc. accumulate=false overwrites the tile, true adds to it.
//
// Batch invariance: the kernel for R rows is the MR-row kernel with rows
// R..MR-1 left out; every output element sees the same FMA sequence (from 0,
// over p in order, then + C), so a row's bits do not depend on R.
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
// The kernel computing `rows` (1..kGemmMr) rows of the tile.
MicroKernelFn GemmMicroKernel(int rows);
void PackTransposed(const float* rows, int64_t ld, int nrows, int nr, int64_t kc, float* out,
                    PackRound round = PackRound::kNone);
// PackTransposed straight from F32 / F16 / BF16 weight rows (`row_bytes`
// apart), columns [k0, k0 + kc): the f32 values DequantizeRow gives.
void PackTransposedW(DType type, const uint8_t* rows, size_t row_bytes, int nrows, int nr,
                     int64_t k0, int64_t kc, float* out);
// Converts n prepacked F32 / F16 / BF16 elements to f32 (exactly).
void ConvertPacked(DType type, const uint8_t* in, int64_t n, float* out);
// Decode (1..kPackedMaxRows rows): the micro-kernel over kPackedGroup
// consecutive prepacked panels (`panel_bytes` apart, each a [kc][32] slice),
// C row stride ldc; per element the same operations as GemmMicroKernel.
inline constexpr int kPackedGroup = 4;
inline constexpr int kPackedMaxRows = 3;
using PackedKernelFn = void (*)(int64_t kc, const float* a_pack, const uint8_t* w,
                                size_t panel_bytes, float* c, int64_t ldc, bool accumulate);
PackedKernelFn GemmPackedKernel(DType type, int rows);
// Int8 (VNNI) Gemm for Q8_0 / Q4_0 weights with Q8_0 activations (gemm_q8.cc).
void GemmQ8(const GemmArgs& args, int64_t n_begin, int64_t n_end, GemmScratch* s);
// The 32 W rows of the panel at j0 (a contiguous range) copied into
// s->w_copy, as a GemmArgs whose W is that copy (n = the rows copied). One
// sequential stream from memory instead of the 32 interleaved row streams
// the packing reads (decode streams every weight from DRAM).
GemmArgs PanelCopy(const GemmArgs& args, int64_t j0, GemmScratch* s);
// Prepacked Q8_0 weights (GemmArgs::w_packed): per 32-column panel and
// 32-element block, the [8][32][4] level bytes, then per panel the f32
// scales [nb][32] and int32 corrections [nb][32].
inline constexpr size_t kQ8PanelBytesPerBlock = 32 * 32 + 32 * 4 + 32 * 4;
void PackQ8Panels(const GemmArgs& args, uint8_t* out);
// Prepacked Q4_K weights: per 32-column panel, one record per super-block:
// the [32][32][4] qs words (levels nibble-packed), u8 sub-block scales
// [8][32], u8 mins [8][32], f16 d [32], f16 dmin [32] (148 bytes per column
// and super-block; Q4_K itself has 144). Gemm packs Q4_K this way per call too.
inline constexpr size_t kQK4KLevelBytes = 32 * 32 * 4;
inline constexpr size_t kQ4KPanelBytesPerSuperBlock = kQK4KLevelBytes + 2 * 8 * 32 + 2 * 32 * 2;
void PackQ4KPanels(const GemmArgs& args, uint8_t* out);
// Int8 (VNNI) Gemm for Q4_K / Q5_K / Q6_K weights with Q8_K activations (gemm_qk.cc).
void GemmQK(const GemmArgs& args, int64_t n_begin, int64_t n_end, GemmScratch* s);
}  // namespace avx512

namespace avx2 {
inline constexpr int kGemmMr = 6;
inline constexpr int kGemmNr = 16;
MicroKernelFn GemmMicroKernel(int rows);
}  // namespace avx2

}  // namespace mneme::kernels
