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

#include "kernels/gemm_avx512.h"

namespace mneme::kernels::avx512 {
namespace {

constexpr int kMr = 7;
constexpr int kNr = 32;
constexpr int kGroups = kQK8_0 / 4;  // 4-byte groups per block

// a_pack: [nb][8][kMr][4] bytes; a_scale/a_corr: [nb][kMr].
// w_pack: [nb][8][kNr][4] bytes; w_scale/w_corr: [nb][kNr].
template <int R, bool kWeightsUnsigned>
void MicroKernel(int64_t nb, const uint8_t* a_pack, const float* a_scale, const int32_t* a_corr,
                 const uint8_t* w_pack, const float* w_scale, const int32_t* w_corr, float* c,
                 int64_t ldc) {
  __m512 facc[R][2];
  for (int r = 0; r < R; ++r) facc[r][0] = facc[r][1] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    __m512i iacc[R][2];
#pragma GCC unroll 7
    for (int r = 0; r < R; ++r) iacc[r][0] = iacc[r][1] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int g = 0; g < kGroups; ++g) {
      const __m512i w0 = _mm512_loadu_si512(w_pack);
      const __m512i w1 = _mm512_loadu_si512(w_pack + 64);
#pragma GCC unroll 7
      for (int r = 0; r < R; ++r) {
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
    for (int r = 0; r < R; ++r) {
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
  for (int r = 0; r < R; ++r) {
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

// Packs W rows [j0, j0 + 32) (zero past n) over all of k, 16 rows at a
// time: a 16 x 16 transpose of 4-byte words turns 2 Q8_0 (4 Q4_0) blocks of
// 16 rows into the [group][column] layout; scales come from one gather.
void PackW(const GemmArgs& args, int64_t j0, GemmScratch* s) {
  const int64_t nb = args.k / kQK8_0;
  s->q8_w.resize(static_cast<size_t>(nb * kGroups * kNr * 4));
  s->q8_w_scale.resize(static_cast<size_t>(nb * kNr));
  s->q8_w_corr.resize(static_cast<size_t>(nb * kNr));
  const bool q4 = args.w_type == DType::kQ4_0;
  const int64_t bb = q4 ? sizeof(BlockQ4_0) : sizeof(BlockQ8_0);
  const int words = q4 ? 4 : 8;  // 4-byte words of qs per block
  const int per = 16 / words;    // blocks per transpose
  const __m512i lane = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i idx =
      _mm512_mullo_epi32(lane, _mm512_set1_epi32(static_cast<int>(args.w_row_bytes)));
  const __m512i nib = _mm512_set1_epi32(0x0F0F0F0F);
  const __m512i ones = _mm512_set1_epi32(0x01010101);
  const __m512i zero = _mm512_setzero_si512();
  int32_t* w_words = reinterpret_cast<int32_t*>(s->q8_w.data());
  for (int half = 0; half < 2; ++half) {
    const int64_t c0 = j0 + 16 * half;
    const int valid = static_cast<int>(std::clamp<int64_t>(args.n - c0, 0, 16));
    const __mmask16 mask = static_cast<__mmask16>((1u << valid) - 1);
    const uint8_t* base =
        static_cast<const uint8_t*>(args.w) + (valid > 0 ? c0 : 0) * args.w_row_bytes;
    for (int64_t b0 = 0; b0 < nb; b0 += per) {
      const int blocks = static_cast<int>(std::min<int64_t>(per, nb - b0));
      __m512i r[16];
      for (int i = 0; i < 16; ++i) {
        r[i] = zero;
        if (i >= valid) continue;
        const uint8_t* blk = base + i * args.w_row_bytes + b0 * bb;
        // The same bytes of the next panel's rows (streams from DRAM at decode).
        _mm_prefetch(reinterpret_cast<const char*>(blk + kNr * args.w_row_bytes), _MM_HINT_T1);
        const auto qs = [&](int q) { return blk + q * bb + 2; };
        if (q4) {
          __m128i x[4];
          for (int q = 0; q < 4; ++q) {
            x[q] = q < blocks ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs(q)))
                              : _mm_setzero_si128();
          }
          r[i] = _mm512_inserti32x4(_mm512_castsi128_si512(x[0]), x[1], 1);
          r[i] = _mm512_inserti32x4(r[i], x[2], 2);
          r[i] = _mm512_inserti32x4(r[i], x[3], 3);
        } else {
          const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs(0)));
          const __m256i hi = blocks > 1
                                 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs(1)))
                                 : _mm256_setzero_si256();
          r[i] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
        }
      }
      Transpose16x16(r);  // r[i]: word i % words of block b0 + i / words, 16 rows
      for (int q = 0; q < blocks; ++q) {
        const int64_t b = b0 + q;
        int32_t* out = w_words + b * kGroups * kNr + 16 * half;
        __m512i sum = zero;
        for (int w = 0; w < words; ++w) {
          const __m512i v = r[q * words + w];
          if (q4) {  // low nibbles: elements 4w.., high: 16 + 4w..
            _mm512_storeu_si512(out + w * kNr, _mm512_and_si512(v, nib));
            _mm512_storeu_si512(out + (w + 4) * kNr,
                                _mm512_and_si512(_mm512_srli_epi32(v, 4), nib));
          } else {
            _mm512_storeu_si512(out + w * kNr, v);
            sum = _mm512_dpbusd_epi32(sum, ones, v);  // sum of the signed weights
          }
        }
        const __m512i d =
            _mm512_mask_i32gather_epi32(zero, mask, idx, base + b * bb, 1);  // d: first 2 bytes
        _mm512_storeu_ps(s->q8_w_scale.data() + b * kNr + 16 * half,
                         _mm512_cvtph_ps(_mm512_cvtepi32_epi16(d)));
        _mm512_storeu_si512(s->q8_w_corr.data() + b * kNr + 16 * half, _mm512_slli_epi32(sum, 7));
      }
    }
  }
}

using KernelFn = void (*)(int64_t, const uint8_t*, const float*, const int32_t*, const uint8_t*,
                         const float*, const int32_t*, float*, int64_t);

// The kernel for `rows` (1..7) rows: a partial panel computes only its rows,
// with each output's operation sequence unchanged (batch invariance).
template <bool kWeightsUnsigned>
KernelFn KernelFor(int rows) {
  static constexpr KernelFn kTable[kMr] = {
      MicroKernel<1, kWeightsUnsigned>, MicroKernel<2, kWeightsUnsigned>,
      MicroKernel<3, kWeightsUnsigned>, MicroKernel<4, kWeightsUnsigned>,
      MicroKernel<5, kWeightsUnsigned>, MicroKernel<6, kWeightsUnsigned>,
      MicroKernel<7, kWeightsUnsigned>};
  return kTable[rows - 1];
}

}  // namespace

void GemmQ8(const GemmArgs& args, int64_t n_begin, int64_t n_end, GemmScratch* s) {
  CHECK(args.w_type == DType::kQ8_0 || args.w_type == DType::kQ4_0);
  const bool w_unsigned = args.w_type == DType::kQ4_0;
  const int64_t nb = args.k / kQK8_0;
  PackA(args, /*bias=*/!w_unsigned, s);
  float edge[kMr * kNr];
  const size_t panel_bytes = static_cast<size_t>(nb) * kQ8PanelBytesPerBlock;
  for (int64_t j0 = n_begin; j0 < n_end; j0 += kNr) {
    // Weights: the prepacked panel (PackQ8Panels) or packed here.
    const uint8_t* wq = s->q8_w.data();
    const float* ws = s->q8_w_scale.data();
    const int32_t* wc = s->q8_w_corr.data();
    if (args.w_packed != nullptr) {
      wq = static_cast<const uint8_t*>(args.w_packed) + (j0 / kNr) * panel_bytes;
      ws = reinterpret_cast<const float*>(wq + nb * kGroups * kNr * 4);
      wc = reinterpret_cast<const int32_t*>(ws + nb * kNr);
    } else {
      PackW(PanelCopy(args, j0, s), 0, s);
      wq = s->q8_w.data();
      ws = s->q8_w_scale.data();
      wc = s->q8_w_corr.data();
    }
    const int64_t cols = std::min<int64_t>(kNr, n_end - j0);
    for (int64_t i0 = 0; i0 < args.m; i0 += kMr) {
      const int64_t p = i0 / kMr;
      const int64_t rows = std::min<int64_t>(kMr, args.m - i0);
      const bool full = cols == kNr;
      float* c = full ? args.c + i0 * args.ldc + j0 : edge;
      const int64_t ldc = full ? args.ldc : kNr;
      const uint8_t* ap = s->q8_a.data() + p * nb * kGroups * kMr * 4;
      const float* as = s->q8_a_scale.data() + p * nb * kMr;
      const int32_t* ac = s->q8_a_corr.data() + p * nb * kMr;
      const auto kernel = w_unsigned ? KernelFor<true>(static_cast<int>(rows))
                                     : KernelFor<false>(static_cast<int>(rows));
      kernel(nb, ap, as, ac, wq, ws, wc, c, ldc);
      if (!full) {
        for (int64_t r = 0; r < rows; ++r) {
          std::copy_n(edge + r * kNr, cols, args.c + (i0 + r) * args.ldc + j0);
        }
      }
    }
  }
}

void PackQ8Panels(const GemmArgs& args, uint8_t* out) {
  CHECK(args.w_type == DType::kQ8_0);
  const int64_t nb = args.k / kQK8_0;
  GemmScratch s;
  for (int64_t j0 = 0; j0 < args.n; j0 += kNr) {
    PackW(args, j0, &s);
    uint8_t* panel = out + static_cast<size_t>(j0 / kNr * nb) * kQ8PanelBytesPerBlock;
    std::memcpy(panel, s.q8_w.data(), s.q8_w.size());
    std::memcpy(panel + s.q8_w.size(), s.q8_w_scale.data(), s.q8_w_scale.size() * sizeof(float));
    std::memcpy(panel + s.q8_w.size() + s.q8_w_scale.size() * sizeof(float), s.q8_w_corr.data(),
                s.q8_w_corr.size() * sizeof(int32_t));
  }
}

}  // namespace mneme::kernels::avx512

#pragma GCC diagnostic pop
#pragma GCC pop_options
