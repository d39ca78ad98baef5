// Int8 prefill matmul for Q8_0 and Q4_0 weights (AVX-512 VNNI).
//
// llama.cpp multiplies these types as integers: activations are quantized to
// Q8_0, each 32-element block product is an exact int32 sum, and the block's
// f32 scale d_w * d_a is applied once. We do the same, 64 MACs per VPDPBUSD
// instead of 16 per f32 FMA, in a 7 x 32 register tile (14 int32 block
// accumulators + 14 f32 accumulators + 2 weight vectors).
//
// VPDPBUSD multiplies unsigned by signed bytes, so one side is biased:
//   Q8_0 weights: A is stored as qa + 128 (u8); the extra 128 * sum(qw) per
//                 column and block is subtracted (w_corr).
//   Q4_0 weights: W is stored as its raw nibble q + 8 in [0, 15] (u8); the
//                 extra 8 * sum(qa) per row and block is subtracted (a_corr).
// Per output the blocks are summed in order, as ggml's scalar reference does.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/fp16.h"
#include "kernels/gemm_impl.h"
#include "kernels/quantize.h"
#include "util/check.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace mneme::kernels::avx512 {
namespace {

constexpr int kMr = 7;
constexpr int kNr = 32;
constexpr int kGroups = kQK8_0 / 4;  // 4-byte groups per block

// a_pack: [nb][8][kMr][4] bytes; a_scale/a_corr: [nb][kMr].
// w_pack: [nb][8][kNr][4] bytes; w_scale/w_corr: [nb][kNr].
template <bool kWeightsUnsigned>
void MicroKernel(int64_t nb, const uint8_t* a_pack, const float* a_scale, const int32_t* a_corr,
                 const uint8_t* w_pack, const float* w_scale, const int32_t* w_corr, float* c,
                 int64_t ldc) {
  __m512 facc[kMr][2];
  for (int r = 0; r < kMr; ++r) facc[r][0] = facc[r][1] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    __m512i iacc[kMr][2];
#pragma GCC unroll 7
    for (int r = 0; r < kMr; ++r) iacc[r][0] = iacc[r][1] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int g = 0; g < kGroups; ++g) {
      const __m512i w0 = _mm512_loadu_si512(w_pack);
      const __m512i w1 = _mm512_loadu_si512(w_pack + 64);
#pragma GCC unroll 7
      for (int r = 0; r < kMr; ++r) {
        int32_t bytes;
        std::memcpy(&bytes, a_pack + 4 * r, 4);
        const __m512i av = _mm512_set1_epi32(bytes);
        if constexpr (kWeightsUnsigned) {
          iacc[r][0] = _mm512_dpbusd_epi32(iacc[r][0], w0, av);
          iacc[r][1] = _mm512_dpbusd_epi32(iacc[r][1], w1, av);
        } else {
          iacc[r][0] = _mm512_dpbusd_epi32(iacc[r][0], av, w0);
          iacc[r][1] = _mm512_dpbusd_epi32(iacc[r][1], av, w1);
        }
      }
      a_pack += 4 * kMr;
      w_pack += 4 * kNr;
    }
    const __m512 ws0 = _mm512_loadu_ps(w_scale), ws1 = _mm512_loadu_ps(w_scale + 16);
    __m512i wc0 = _mm512_setzero_si512(), wc1 = _mm512_setzero_si512();
    if constexpr (!kWeightsUnsigned) {
      wc0 = _mm512_loadu_si512(w_corr);
      wc1 = _mm512_loadu_si512(w_corr + 16);
    }
#pragma GCC unroll 7
    for (int r = 0; r < kMr; ++r) {
      if constexpr (kWeightsUnsigned) {
        const __m512i ac = _mm512_set1_epi32(a_corr[r]);
        iacc[r][0] = _mm512_sub_epi32(iacc[r][0], ac);
        iacc[r][1] = _mm512_sub_epi32(iacc[r][1], ac);
      } else {
        iacc[r][0] = _mm512_sub_epi32(iacc[r][0], wc0);
        iacc[r][1] = _mm512_sub_epi32(iacc[r][1], wc1);
      }
      const __m512 da = _mm512_set1_ps(a_scale[r]);
      facc[r][0] =
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(iacc[r][0]), _mm512_mul_ps(ws0, da), facc[r][0]);
      facc[r][1] =
          _mm512_fmadd_ps(_mm512_cvtepi32_ps(iacc[r][1]), _mm512_mul_ps(ws1, da), facc[r][1]);
    }
    a_scale += kMr;
    a_corr += kMr;
    w_scale += kNr;
    w_corr += kNr;
  }
  for (int r = 0; r < kMr; ++r) {
    _mm512_storeu_ps(c + r * ldc, facc[r][0]);
    _mm512_storeu_ps(c + r * ldc + 16, facc[r][1]);
  }
}

// Quantizes A to Q8_0 (as ConvertActivations) and packs it per 7-row panel.
void PackA(const GemmArgs& args, bool bias, GemmScratch* s) {
  const int64_t nb = args.k / kQK8_0;
  const int64_t panels = (args.m + kMr - 1) / kMr;
  s->q8_rows.resize(static_cast<size_t>(args.m * nb));
  for (int64_t i = 0; i < args.m; ++i) {
    QuantizeRowQ8_0Avx512(args.a + i * args.lda, s->q8_rows.data() + i * nb, args.k);
  }
  s->q8_a.assign(static_cast<size_t>(panels * nb * kGroups * kMr * 4), 0);
  s->q8_a_scale.assign(static_cast<size_t>(panels * nb * kMr), 0.f);
  s->q8_a_corr.assign(static_cast<size_t>(panels * nb * kMr), 0);
  const uint8_t flip = bias ? 0x80 : 0x00;
  for (int64_t i = 0; i < args.m; ++i) {
    const int64_t p = i / kMr, r = i % kMr;
    for (int64_t b = 0; b < nb; ++b) {
      const BlockQ8_0& blk = s->q8_rows[static_cast<size_t>(i * nb + b)];
      uint8_t* dst = s->q8_a.data() + ((p * nb + b) * kGroups * kMr + r) * 4;
      int sum = 0;
      for (int g = 0; g < kGroups; ++g) {
        for (int t = 0; t < 4; ++t) {
          dst[g * kMr * 4 + t] = static_cast<uint8_t>(blk.qs[4 * g + t]) ^ flip;
          sum += blk.qs[4 * g + t];
        }
      }
      s->q8_a_scale[static_cast<size_t>((p * nb + b) * kMr + r)] = F16ToF32(blk.d);
      s->q8_a_corr[static_cast<size_t>((p * nb + b) * kMr + r)] = 8 * sum;
    }
  }
}

// Packs W rows [j0, j0 + 32) (zero past n) over all of k.
void PackW(const GemmArgs& args, int64_t j0, GemmScratch* s) {
  const int64_t nb = args.k / kQK8_0;
  s->q8_w.assign(static_cast<size_t>(nb * kGroups * kNr * 4), 0);
  s->q8_w_scale.assign(static_cast<size_t>(nb * kNr), 0.f);
  s->q8_w_corr.assign(static_cast<size_t>(nb * kNr), 0);
  const bool q4 = args.w_type == DType::kQ4_0;
  for (int c = 0; c < kNr && j0 + c < args.n; ++c) {
    const uint8_t* row = static_cast<const uint8_t*>(args.w) + (j0 + c) * args.w_row_bytes;
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t q[kQK8_0];
      uint16_t d;
      if (q4) {
        const auto& blk = reinterpret_cast<const BlockQ4_0*>(row)[b];
        for (int t = 0; t < 16; ++t) {
          q[t] = blk.qs[t] & 0x0F;
          q[t + 16] = blk.qs[t] >> 4;
        }
        d = blk.d;
      } else {
        const auto& blk = reinterpret_cast<const BlockQ8_0*>(row)[b];
        std::memcpy(q, blk.qs, kQK8_0);
        d = blk.d;
      }
      int sum = 0;
      for (int g = 0; g < kGroups; ++g) {
        uint8_t* dst = s->q8_w.data() + ((b * kGroups + g) * kNr + c) * 4;
        for (int t = 0; t < 4; ++t) {
          dst[t] = q[4 * g + t];
          sum += static_cast<int8_t>(q[4 * g + t]);
        }
      }
      s->q8_w_scale[static_cast<size_t>(b * kNr + c)] = F16ToF32(d);
      s->q8_w_corr[static_cast<size_t>(b * kNr + c)] = 128 * sum;
    }
  }
}

}  // namespace

void GemmQ8(const GemmArgs& args, int64_t n_begin, int64_t n_end, GemmScratch* s) {
  CHECK(args.w_type == DType::kQ8_0 || args.w_type == DType::kQ4_0);
  const bool w_unsigned = args.w_type == DType::kQ4_0;
  const int64_t nb = args.k / kQK8_0;
  PackA(args, /*bias=*/!w_unsigned, s);
  float edge[kMr * kNr];
  for (int64_t j0 = n_begin; j0 < n_end; j0 += kNr) {
    PackW(args, j0, s);
    const int64_t cols = std::min<int64_t>(kNr, n_end - j0);
    for (int64_t i0 = 0; i0 < args.m; i0 += kMr) {
      const int64_t p = i0 / kMr;
      const int64_t rows = std::min<int64_t>(kMr, args.m - i0);
      const bool full = rows == kMr && cols == kNr;
      float* c = full ? args.c + i0 * args.ldc + j0 : edge;
      const int64_t ldc = full ? args.ldc : kNr;
      const uint8_t* ap = s->q8_a.data() + p * nb * kGroups * kMr * 4;
      const float* as = s->q8_a_scale.data() + p * nb * kMr;
      const int32_t* ac = s->q8_a_corr.data() + p * nb * kMr;
      if (w_unsigned) {
        MicroKernel<true>(nb, ap, as, ac, s->q8_w.data(), s->q8_w_scale.data(), s->q8_w_corr.data(),
                          c, ldc);
      } else {
        MicroKernel<false>(nb, ap, as, ac, s->q8_w.data(), s->q8_w_scale.data(),
                           s->q8_w_corr.data(), c, ldc);
      }
      if (!full) {
        for (int64_t r = 0; r < rows; ++r) {
          std::copy_n(edge + r * kNr, cols, args.c + (i0 + r) * args.ldc + j0);
        }
      }
    }
  }
}

}  // namespace mneme::kernels::avx512

#pragma GCC diagnostic pop
#pragma GCC pop_options
