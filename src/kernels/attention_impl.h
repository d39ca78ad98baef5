// Internal: per-ISA inner loops of Attention (attention.cc drives them).
// `tiles[i]` is one kv head's [block_size, head_dim] tile of the i-th block
// of the sequence; position p is row p % block_size of tiles[p / block_size].
// Passing the whole list keeps q / the output row in registers across blocks.
// Both take `rows` query rows of one head (a prefill chunk shares each K / V
// load between rows); a row's result never depends on the other rows.
//   KDots:   out[r][p] = sum_d q[r][d] * K_p[d] for p < n_pos; q[r] is F16
//            bits when type is kF16 (already rounded), f32 otherwise.
//   PvAccum: acc[r][d] += sum_p prob[r][p] * V_p[d] for p < n_pos (prob
//            already rounded to F16 values for kF16). f32 accumulation.
#pragma once

#include <cstdint>

#include "kernels/quant_types.h"

namespace mneme::kernels {

struct TileList {
  const uint8_t* const* tiles;
  int block_size;
  int n_pos;
  int head_dim;
};

#define MNEME_DECLARE_ATTN                                                                      \
  void KDots(DType type, const TileList& k, int rows, const void* const* q, float* const* out); \
  void PvAccum(DType type, const TileList& v, int rows, const float* const* prob,               \
               float* const* acc);

namespace scalar {
MNEME_DECLARE_ATTN
}
namespace avx2 {
MNEME_DECLARE_ATTN
}
namespace avx512 {
MNEME_DECLARE_ATTN
}

#undef MNEME_DECLARE_ATTN

}  // namespace mneme::kernels
