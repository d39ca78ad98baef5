// Int8 prefill matmul for K-quant weights (Q4_K, Q5_K, Q6_K) with Q8_K
// activations (AVX-512 VNNI), the K-quant sibling of gemm_q8.cc.
//
// Per 256-element super-block, weight levels are unsigned (Q4_K [0,15],
// Q5_K [0,31], Q6_K q + 32 in [0,63]) and multiply the signed Q8_K bytes
// with VPDPBUSD into one int32 sum per sub-block (32 elements for Q4_K/Q5_K,
// 16 for Q6_K), scaled by the integer sub-block scale (VPMULLD). The second
// term uses the activation block sums (VPDPWSSD over int16 pairs):
//   Q4_K/Q5_K: sum = d_a * (d_w * T - dmin_w * sum_j m_j * bsum32_j)
//   Q6_K:      sum = d_a * d_w * (T - sum_j 32 sc_j * bsum16_j)   (all int)
// with T = sum_j sc_j * (levels . q8)_j, as llama.cpp's kernels compute it.
// Tile: 7 rows x 32 columns; C is updated once per super-block.
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
constexpr int kGroups = kQK_K / 4;  // 4-byte groups per super-block

// One weight row's super-block in unified form.
struct KBlock {
  uint8_t levels[kQK_K];
  int32_t scale[16];  // per sub-block (8 or 16 used)
  int32_t mins[16];   // second-term weights: m_j (Q4_K/Q5_K) or 32 * sc_j (Q6_K)
  float d, e;         // d_w and dmin_w (e unused for Q6_K)
};

void UnpackK(DType type, const uint8_t* row, int64_t sb, KBlock* out) {
  if (type == DType::kQ6_K) {
    const BlockQ6K& x = reinterpret_cast<const BlockQ6K*>(row)[sb];
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, g = (e % 128) / 32, k = e % 32;
      const uint8_t low_byte = x.ql[64 * h + 32 * (g % 2) + k];
      const int lo = g < 2 ? (low_byte & 0xF) : (low_byte >> 4);
      out->levels[e] = static_cast<uint8_t>(lo | (((x.qh[32 * h + k] >> (2 * g)) & 3) << 4));
    }
    for (int j = 0; j < 16; ++j) {
      out->scale[j] = x.scales[j];
      out->mins[j] = 32 * x.scales[j];
    }
    out->d = F16ToF32(x.d);
    out->e = 0.f;
    return;
  }
  // Q4_K and Q5_K share the layout of qs, scales, d and dmin.
  const uint8_t *qs, *scales, *qh = nullptr;
  uint16_t d, dmin;
  if (type == DType::kQ4_K) {
    const BlockQ4K& x = reinterpret_cast<const BlockQ4K*>(row)[sb];
    qs = x.qs, scales = x.scales, d = x.d, dmin = x.dmin;
  } else {
    const BlockQ5K& x = reinterpret_cast<const BlockQ5K*>(row)[sb];
    qs = x.qs, scales = x.scales, qh = x.qh, d = x.d, dmin = x.dmin;
  }
  for (int e = 0; e < kQK_K; ++e) {
    const uint8_t byte = qs[32 * (e / 64) + e % 32];
    int q = (e % 64) < 32 ? (byte & 0xF) : (byte >> 4);
    if (qh != nullptr) q |= ((qh[e % 32] >> (e / 32)) & 1) << 4;
    out->levels[e] = static_cast<uint8_t>(q);
  }
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    GetScaleMinK4(j, scales, &sc, &m);
    out->scale[j] = sc;
    out->mins[j] = m;
  }
  out->d = F16ToF32(d);
  out->e = F16ToF32(dmin);
}

// a_pack: [nsb][64][kMr][4]; a_d: [nsb][kMr]; a_bs: [nsb][subs/2][kMr] (int16 pairs).
// w_pack: [nsb][64][kNr][4]; w_sc: [nsb][subs][kNr]; w_mm: [nsb][subs/2][kNr]
// (int16 pairs); w_d, w_e: [nsb][kNr]. C tile row stride ldc.
template <int kSubs, bool kFoldMins>
void MicroKernel(int64_t nsb, const uint8_t* a_pack, const float* a_d, const int32_t* a_bs,
                 const uint8_t* w_pack, const int32_t* w_sc, const int32_t* w_mm, const float* w_d,
                 const float* w_e, float* c, int64_t ldc) {
  constexpr int kGroupsPerSub = kGroups / kSubs;
  for (int64_t sb = 0; sb < nsb; ++sb) {
    __m512i tot[kMr][2];
#pragma GCC unroll 7
    for (int r = 0; r < kMr; ++r) tot[r][0] = tot[r][1] = _mm512_setzero_si512();
    for (int j = 0; j < kSubs; ++j) {
      __m512i sub[kMr][2];
#pragma GCC unroll 7
      for (int r = 0; r < kMr; ++r) sub[r][0] = sub[r][1] = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int g = 0; g < kGroupsPerSub; ++g) {
        const __m512i w0 = _mm512_loadu_si512(w_pack);
        const __m512i w1 = _mm512_loadu_si512(w_pack + 64);
#pragma GCC unroll 7
        for (int r = 0; r < kMr; ++r) {
          int32_t bytes;
          std::memcpy(&bytes, a_pack + 4 * r, 4);
          const __m512i av = _mm512_set1_epi32(bytes);
          sub[r][0] = _mm512_dpbusd_epi32(sub[r][0], w0, av);
          sub[r][1] = _mm512_dpbusd_epi32(sub[r][1], w1, av);
        }
        a_pack += 4 * kMr;
        w_pack += 4 * kNr;
      }
      const __m512i sc0 = _mm512_loadu_si512(w_sc), sc1 = _mm512_loadu_si512(w_sc + 16);
      w_sc += kNr;
#pragma GCC unroll 7
      for (int r = 0; r < kMr; ++r) {
        tot[r][0] = _mm512_add_epi32(tot[r][0], _mm512_mullo_epi32(sub[r][0], sc0));
        tot[r][1] = _mm512_add_epi32(tot[r][1], _mm512_mullo_epi32(sub[r][1], sc1));
      }
    }
    const __m512 d0 = _mm512_loadu_ps(w_d), d1 = _mm512_loadu_ps(w_d + 16);
    const __m512 e0 = _mm512_loadu_ps(w_e), e1 = _mm512_loadu_ps(w_e + 16);
    for (int r = 0; r < kMr; ++r) {
      __m512i m0 = _mm512_setzero_si512(), m1 = _mm512_setzero_si512();
      for (int p = 0; p < kSubs / 2; ++p) {
        const __m512i bs = _mm512_set1_epi32(a_bs[p * kMr + r]);
        m0 = _mm512_dpwssd_epi32(m0, _mm512_loadu_si512(w_mm + p * kNr), bs);
        m1 = _mm512_dpwssd_epi32(m1, _mm512_loadu_si512(w_mm + p * kNr + 16), bs);
      }
      const __m512 da = _mm512_set1_ps(a_d[r]);
      __m512 f0, f1;
      if constexpr (kFoldMins) {
        f0 = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(tot[r][0], m0)),
                           _mm512_mul_ps(d0, da));
        f1 = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(tot[r][1], m1)),
                           _mm512_mul_ps(d1, da));
      } else {
        f0 = _mm512_fmsub_ps(_mm512_cvtepi32_ps(tot[r][0]), _mm512_mul_ps(d0, da),
                             _mm512_mul_ps(_mm512_cvtepi32_ps(m0), _mm512_mul_ps(e0, da)));
        f1 = _mm512_fmsub_ps(_mm512_cvtepi32_ps(tot[r][1]), _mm512_mul_ps(d1, da),
                             _mm512_mul_ps(_mm512_cvtepi32_ps(m1), _mm512_mul_ps(e1, da)));
      }
      float* row = c + r * ldc;
      if (sb > 0) {
        f0 = _mm512_add_ps(_mm512_loadu_ps(row), f0);
        f1 = _mm512_add_ps(_mm512_loadu_ps(row + 16), f1);
      }
      _mm512_storeu_ps(row, f0);
      _mm512_storeu_ps(row + 16, f1);
    }
    a_d += kMr;
    a_bs += kSubs / 2 * kMr;
    w_mm += kSubs / 2 * kNr;
    w_d += kNr;
    w_e += kNr;
  }
}

int32_t PackPair(int lo, int hi) {
  return static_cast<int32_t>((static_cast<uint32_t>(static_cast<uint16_t>(hi)) << 16) |
                              static_cast<uint16_t>(lo));
}

// Quantizes A to Q8_K and packs it per 7-row panel.
void PackA(const GemmArgs& args, int subs, GemmScratch* s) {
  const int64_t nsb = args.k / kQK_K;
  const int64_t panels = (args.m + kMr - 1) / kMr;
  s->qk_rows.resize(static_cast<size_t>(args.m * nsb));
  for (int64_t i = 0; i < args.m; ++i) {
    QuantizeRowQ8KAvx512(args.a + i * args.lda, s->qk_rows.data() + i * nsb, args.k);
  }
  s->q8_a.assign(static_cast<size_t>(panels * nsb * kGroups * kMr * 4), 0);
  s->q8_a_scale.assign(static_cast<size_t>(panels * nsb * kMr), 0.f);
  s->q8_a_corr.assign(static_cast<size_t>(panels * nsb * (subs / 2) * kMr), 0);
  for (int64_t i = 0; i < args.m; ++i) {
    const int64_t p = i / kMr, r = i % kMr;
    for (int64_t sb = 0; sb < nsb; ++sb) {
      const BlockQ8K& blk = s->qk_rows[static_cast<size_t>(i * nsb + sb)];
      uint8_t* dst = s->q8_a.data() + ((p * nsb + sb) * kGroups * kMr + r) * 4;
      for (int g = 0; g < kGroups; ++g) std::memcpy(dst + g * kMr * 4, blk.qs + 4 * g, 4);
      s->q8_a_scale[static_cast<size_t>((p * nsb + sb) * kMr + r)] = blk.d;
      int32_t* bs = s->q8_a_corr.data() + (p * nsb + sb) * (subs / 2) * kMr + r;
      for (int q = 0; q < subs / 2; ++q) {
        int lo, hi;
        if (subs == 16) {
          lo = blk.bsums[2 * q], hi = blk.bsums[2 * q + 1];
        } else {
          lo = blk.bsums[4 * q] + blk.bsums[4 * q + 1];
          hi = blk.bsums[4 * q + 2] + blk.bsums[4 * q + 3];
        }
        bs[q * kMr] = PackPair(lo, hi);
      }
    }
  }
}

// Packs W rows [j0, j0 + 32) (zero past n) over all of k.
void PackW(const GemmArgs& args, int64_t j0, int subs, GemmScratch* s) {
  const int64_t nsb = args.k / kQK_K;
  s->q8_w.assign(static_cast<size_t>(nsb * kGroups * kNr * 4), 0);
  s->qk_w_sc.assign(static_cast<size_t>(nsb * subs * kNr), 0);
  s->qk_w_mins.assign(static_cast<size_t>(nsb * (subs / 2) * kNr), 0);
  s->qk_w_d.assign(static_cast<size_t>(nsb * kNr), 0.f);
  s->qk_w_e.assign(static_cast<size_t>(nsb * kNr), 0.f);
  KBlock kb;
  for (int c = 0; c < kNr && j0 + c < args.n; ++c) {
    const uint8_t* row = static_cast<const uint8_t*>(args.w) + (j0 + c) * args.w_row_bytes;
    for (int64_t sb = 0; sb < nsb; ++sb) {
      UnpackK(args.w_type, row, sb, &kb);
      for (int g = 0; g < kGroups; ++g) {
        std::memcpy(s->q8_w.data() + ((sb * kGroups + g) * kNr + c) * 4, kb.levels + 4 * g, 4);
      }
      for (int j = 0; j < subs; ++j)
        s->qk_w_sc[static_cast<size_t>((sb * subs + j) * kNr + c)] = kb.scale[j];
      for (int q = 0; q < subs / 2; ++q) {
        s->qk_w_mins[static_cast<size_t>((sb * (subs / 2) + q) * kNr + c)] =
            PackPair(kb.mins[2 * q], kb.mins[2 * q + 1]);
      }
      s->qk_w_d[static_cast<size_t>(sb * kNr + c)] = kb.d;
      s->qk_w_e[static_cast<size_t>(sb * kNr + c)] = kb.e;
    }
  }
}

}  // namespace

void GemmQK(const GemmArgs& args, int64_t n_begin, int64_t n_end, GemmScratch* s) {
  CHECK(args.w_type == DType::kQ4_K || args.w_type == DType::kQ5_K || args.w_type == DType::kQ6_K);
  const bool q6 = args.w_type == DType::kQ6_K;
  const int subs = q6 ? 16 : 8;
  const int64_t nsb = args.k / kQK_K;
  PackA(args, subs, s);
  float edge[kMr * kNr];
  for (int64_t j0 = n_begin; j0 < n_end; j0 += kNr) {
    PackW(args, j0, subs, s);
    const int64_t cols = std::min<int64_t>(kNr, n_end - j0);
    for (int64_t i0 = 0; i0 < args.m; i0 += kMr) {
      const int64_t p = i0 / kMr;
      const int64_t rows = std::min<int64_t>(kMr, args.m - i0);
      const bool full = rows == kMr && cols == kNr;
      float* c = full ? args.c + i0 * args.ldc + j0 : edge;
      const int64_t ldc = full ? args.ldc : kNr;
      const uint8_t* ap = s->q8_a.data() + p * nsb * kGroups * kMr * 4;
      const float* ad = s->q8_a_scale.data() + p * nsb * kMr;
      const int32_t* abs = s->q8_a_corr.data() + p * nsb * (subs / 2) * kMr;
      if (q6) {
        MicroKernel<16, true>(nsb, ap, ad, abs, s->q8_w.data(), s->qk_w_sc.data(),
                              s->qk_w_mins.data(), s->qk_w_d.data(), s->qk_w_e.data(), c, ldc);
      } else {
        MicroKernel<8, false>(nsb, ap, ad, abs, s->q8_w.data(), s->qk_w_sc.data(),
                              s->qk_w_mins.data(), s->qk_w_d.data(), s->qk_w_e.data(), c, ldc);
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
