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
#include <cstddef>
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
constexpr int kGroups = kQK_K / 4;  // 4-byte groups per super-block

// Weight levels per element e of a super-block (ggml-common.h layouts):
//   Q4_K: nibble of qs[32 * (e / 64) + e % 32], low if e % 64 < 32
//   Q5_K: that | ((qh[e % 32] >> (e / 32)) & 1) << 4
//   Q6_K: h = e / 128, g = (e % 128) / 32, k = e % 32:
//         nibble of ql[64 h + 32 (g % 2) + k] (low if g < 2)
//         | ((qh[32 h + k] >> 2 g) & 3) << 4
// Sub-block scales: GetScaleMinK4 (Q4_K/Q5_K: sc_j, m_j) or scales[j]
// (Q6_K, whose second-term weight is 32 sc_j).

// a_pack: [nsb][64][kMr][4]; a_d: [nsb][kMr]; a_bs: [nsb][subs/2][kMr] (int16 pairs).
// w_pack: [nsb][64][kNr][4]; w_sc: [nsb][subs][kNr]; w_mm: [nsb][subs/2][kNr]
// (int16 pairs); w_d, w_e: [nsb][kNr]. C tile row stride ldc.
inline __m512i LoadU8x16(const uint8_t* x) {
  return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)));
}

inline __m512 LoadF16x16(const uint8_t* x) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
}

// kNibbles (Q4_K): w_pack holds per super-block a kQ4KPanelBytesPerSuperBlock
// record: the 32 qs words [32][kNr][4] (two levels per byte; sub-block j
// reads word 8 (j / 2) + g, its low nibbles for even j, high for odd j: the
// same level bytes), then u8 sc [8][kNr], u8 m [8][kNr], f16 d [kNr], f16
// dmin [kNr], widened in registers to the values of the int32/f32 arrays
// the other types use (w_sc, w_mm, w_d, w_e unused).
template <int R, int kSubs, bool kFoldMins, bool kNibbles>
void MicroKernel(int64_t nsb, const uint8_t* a_pack, const float* a_d, const int32_t* a_bs,
                 const uint8_t* w_pack, const int32_t* w_sc, const int32_t* w_mm, const float* w_d,
                 const float* w_e, float* c, int64_t ldc) {
  constexpr int kGroupsPerSub = kGroups / kSubs;
  for (int64_t sb = 0; sb < nsb; ++sb) {
    __m512i tot[R][2];
#pragma GCC unroll 7
    for (int r = 0; r < R; ++r) tot[r][0] = tot[r][1] = _mm512_setzero_si512();
    for (int j = 0; j < kSubs; ++j) {
      __m512i sub[R][2];
#pragma GCC unroll 7
      for (int r = 0; r < R; ++r) sub[r][0] = sub[r][1] = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int g = 0; g < kGroupsPerSub; ++g) {
        __m512i w0, w1;
        if constexpr (kNibbles) {
          const uint8_t* q = w_pack + ((j / 2) * 8 + g) * 4 * kNr;
          w0 = _mm512_srli_epi32(_mm512_loadu_si512(q), 4 * (j % 2));
          w1 = _mm512_srli_epi32(_mm512_loadu_si512(q + 64), 4 * (j % 2));
          w0 = _mm512_and_si512(w0, _mm512_set1_epi32(0x0F0F0F0F));
          w1 = _mm512_and_si512(w1, _mm512_set1_epi32(0x0F0F0F0F));
        } else {
          w0 = _mm512_loadu_si512(w_pack);
          w1 = _mm512_loadu_si512(w_pack + 64);
          w_pack += 4 * kNr;
        }
#pragma GCC unroll 7
        for (int r = 0; r < R; ++r) {
          int32_t bytes;
          std::memcpy(&bytes, a_pack + 4 * r, 4);
          const __m512i av = _mm512_set1_epi32(bytes);
          sub[r][0] = _mm512_dpbusd_epi32(sub[r][0], w0, av);
          sub[r][1] = _mm512_dpbusd_epi32(sub[r][1], w1, av);
        }
        a_pack += 4 * kMr;
      }
      __m512i sc0, sc1;
      if constexpr (kNibbles) {
        const uint8_t* scb = w_pack + kQK4KLevelBytes + j * kNr;
        sc0 = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scb)));
        sc1 = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scb + 16)));
      } else {
        sc0 = _mm512_loadu_si512(w_sc);
        sc1 = _mm512_loadu_si512(w_sc + 16);
        w_sc += kNr;
      }
#pragma GCC unroll 7
      for (int r = 0; r < R; ++r) {
        tot[r][0] = _mm512_add_epi32(tot[r][0], _mm512_mullo_epi32(sub[r][0], sc0));
        tot[r][1] = _mm512_add_epi32(tot[r][1], _mm512_mullo_epi32(sub[r][1], sc1));
      }
    }
    __m512 d0, d1, e0, e1;
    __m512i mm[kSubs / 2][2];  // min (or 32 sc) pairs, int16 x 2 per column
    if constexpr (kNibbles) {
      const uint8_t* mb = w_pack + kQK4KLevelBytes + 8 * kNr;
      for (int p = 0; p < kSubs / 2; ++p) {
        for (int h = 0; h < 2; ++h) {
          mm[p][h] = _mm512_or_si512(
              LoadU8x16(mb + 2 * p * kNr + 16 * h),
              _mm512_slli_epi32(LoadU8x16(mb + (2 * p + 1) * kNr + 16 * h), 16));
        }
      }
      const uint8_t* db = mb + 8 * kNr;
      d0 = LoadF16x16(db), d1 = LoadF16x16(db + 32);
      e0 = LoadF16x16(db + 64), e1 = LoadF16x16(db + 96);
      w_pack += kQ4KPanelBytesPerSuperBlock;
    } else {
      for (int p = 0; p < kSubs / 2; ++p) {
        mm[p][0] = _mm512_loadu_si512(w_mm + p * kNr);
        mm[p][1] = _mm512_loadu_si512(w_mm + p * kNr + 16);
      }
      d0 = _mm512_loadu_ps(w_d), d1 = _mm512_loadu_ps(w_d + 16);
      e0 = _mm512_loadu_ps(w_e), e1 = _mm512_loadu_ps(w_e + 16);
    }
    for (int r = 0; r < R; ++r) {
      __m512i m0 = _mm512_setzero_si512(), m1 = _mm512_setzero_si512();
      for (int p = 0; p < kSubs / 2; ++p) {
        const __m512i bs = _mm512_set1_epi32(a_bs[p * kMr + r]);
        m0 = _mm512_dpwssd_epi32(m0, mm[p][0], bs);
        m1 = _mm512_dpwssd_epi32(m1, mm[p][1], bs);
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
    if constexpr (!kNibbles) {
      w_mm += kSubs / 2 * kNr;
      w_d += kNr;
      w_e += kNr;
    }
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

inline __m512i ByteAt(__m512i v, int t) { return _mm512_srli_epi32(v, 8 * t); }

// 16 rows' 64-byte slices at `offset` in super-block sb, transposed:
// out[w] = 4-byte word w of the slice for the 16 rows (zero rows past valid).
void Load16x16(const uint8_t* base, size_t row_bytes, int valid, size_t offset, __m512i out[16],
               int bytes = 64) {
  const __mmask64 mask = bytes == 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1;
  for (int i = 0; i < 16; ++i) {
    out[i] = i < valid ? _mm512_maskz_loadu_epi8(mask, base + i * row_bytes + offset)
                       : _mm512_setzero_si512();
  }
  Transpose16x16(out);
}

// Packs W rows [j0, j0 + 32) (zero past n) over all of k: the levels above
// and the scales, 16 rows at a time (16 x 16 transposes of 4-byte words).
void PackW(const GemmArgs& args, int64_t j0, int subs, GemmScratch* s) {
  const int64_t nsb = args.k / kQK_K;
  const bool nibbles = args.w_type == DType::kQ4_K;  // see MicroKernel
  s->q8_w.resize(static_cast<size_t>(nsb) *
                 (nibbles ? kQ4KPanelBytesPerSuperBlock : kGroups * kNr * 4));
  s->qk_w_sc.resize(static_cast<size_t>(nsb * subs * kNr));
  s->qk_w_mins.resize(static_cast<size_t>(nsb * (subs / 2) * kNr));
  s->qk_w_d.resize(static_cast<size_t>(nsb * kNr));
  s->qk_w_e.resize(static_cast<size_t>(nsb * kNr));
  const DType type = args.w_type;
  const size_t sb_bytes = GetDTypeInfo(type)->block_bytes;
  const __m512i nib = _mm512_set1_epi32(0x0F0F0F0F);
  const __m512i bit = _mm512_set1_epi32(0x01010101);
  const __m512i two = _mm512_set1_epi32(0x03030303);
  const __m512i m6 = _mm512_set1_epi32(63);
  const __m512i m4 = _mm512_set1_epi32(15);
  const __m512i m2 = _mm512_set1_epi32(3);
  for (int half = 0; half < 2; ++half) {
    const int64_t c0 = j0 + 16 * half;
    const int valid = static_cast<int>(std::clamp<int64_t>(args.n - c0, 0, 16));
    const uint8_t* base =
        static_cast<const uint8_t*>(args.w) + (valid > 0 ? c0 : 0) * args.w_row_bytes;
    for (int64_t sb = 0; sb < nsb; ++sb) {
      const size_t off = static_cast<size_t>(sb) * sb_bytes;
      uint8_t* rec = s->q8_w.data() + sb * kQ4KPanelBytesPerSuperBlock;  // Q4_K (MicroKernel)
      int32_t* out = nibbles ? reinterpret_cast<int32_t*>(rec) + 16 * half
                             : reinterpret_cast<int32_t*>(s->q8_w.data()) + sb * kGroups * kNr +
                                   16 * half;
      int32_t* sc = s->qk_w_sc.data() + sb * subs * kNr + 16 * half;
      int32_t* mm = s->qk_w_mins.data() + sb * (subs / 2) * kNr + 16 * half;
      float* dd = s->qk_w_d.data() + sb * kNr + 16 * half;
      float* ee = s->qk_w_e.data() + sb * kNr + 16 * half;
      __m512i hdr[16], lo_t[2][16], hi_t[16];
      if (type == DType::kQ6_K) {
        Load16x16(base, args.w_row_bytes, valid, off + offsetof(BlockQ6K, ql), lo_t[0]);
        Load16x16(base, args.w_row_bytes, valid, off + offsetof(BlockQ6K, ql) + 64, lo_t[1]);
        Load16x16(base, args.w_row_bytes, valid, off + offsetof(BlockQ6K, qh), hi_t);
        // scales[16] and d: the last 18 bytes of the block.
        Load16x16(base, args.w_row_bytes, valid, off + offsetof(BlockQ6K, scales), hdr, 18);
        // Group g (elements 4g..4g+3): h = g / 32, g2 = (g % 32) / 8, kk = g % 8.
        for (int h = 0; h < 2; ++h) {
          for (int kk = 0; kk < 8; ++kk) {
            for (int g2 = 0; g2 < 4; ++g2) {
              const __m512i src = lo_t[h][8 * (g2 % 2) + kk];
              const __m512i low = g2 < 2 ? _mm512_and_si512(src, nib)
                                         : _mm512_and_si512(_mm512_srli_epi32(src, 4), nib);
              const __m512i high =
                  _mm512_and_si512(_mm512_srli_epi32(hi_t[8 * h + kk], 2 * g2), two);
              _mm512_storeu_si512(out + (32 * h + 8 * g2 + kk) * kNr,
                                  _mm512_or_si512(low, _mm512_slli_epi32(high, 4)));
            }
          }
        }
        __m512i scale[16];
        for (int j = 0; j < 16; ++j) {  // int8 scales[j], sign-extended
          scale[j] = _mm512_srai_epi32(_mm512_slli_epi32(hdr[j / 4], 24 - 8 * (j % 4)), 24);
          _mm512_storeu_si512(sc + j * kNr, scale[j]);
        }
        for (int q = 0; q < 8; ++q) {
          const __m512i lo16 = _mm512_and_si512(_mm512_slli_epi32(scale[2 * q], 5),
                                                _mm512_set1_epi32(0xFFFF));
          _mm512_storeu_si512(mm + q * kNr,
                              _mm512_or_si512(lo16, _mm512_slli_epi32(scale[2 * q + 1], 21)));
        }
        _mm512_storeu_ps(dd, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(hdr[4])));
        _mm512_storeu_ps(ee, _mm512_setzero_ps());
        continue;
      }
      // Q4_K / Q5_K. Group g: chunk c = g / 16 of 64 elements; gi = g % 16 < 8:
      // low nibbles of qs word 8c + gi, else high nibbles of word 8c + gi - 8.
      const bool q5 = type == DType::kQ5_K;
      const size_t qs_off = off + (q5 ? offsetof(BlockQ5K, qs) : offsetof(BlockQ4K, qs));
      Load16x16(base, args.w_row_bytes, valid, off, hdr, q5 ? 48 : 16);  // d, dmin, scales, qh
      Load16x16(base, args.w_row_bytes, valid, qs_off, lo_t[0]);
      Load16x16(base, args.w_row_bytes, valid, qs_off + 64, lo_t[1]);
      for (int c = 0; c < 4 && nibbles; ++c) {
        for (int w = 0; w < 8; ++w) _mm512_storeu_si512(out + (8 * c + w) * kNr, lo_t[c / 2][8 * (c % 2) + w]);
      }
      for (int c = 0; c < 4 && !nibbles; ++c) {
        for (int w = 0; w < 8; ++w) {
          const __m512i v = lo_t[c / 2][8 * (c % 2) + w];
          __m512i lo = _mm512_and_si512(v, nib);
          __m512i hi = _mm512_and_si512(_mm512_srli_epi32(v, 4), nib);
          if (q5) {  // bit 4 of element e: (qh[e % 32] >> (e / 32)) & 1; qh word w = hdr[4 + w]
            const __m512i qh = hdr[4 + w];
            lo = _mm512_or_si512(
                lo, _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(qh, 2 * c), bit), 4));
            hi = _mm512_or_si512(
                hi, _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(qh, 2 * c + 1), bit), 4));
          }
          _mm512_storeu_si512(out + (16 * c + w) * kNr, lo);
          _mm512_storeu_si512(out + (16 * c + 8 + w) * kNr, hi);
        }
      }
      // GetScaleMinK4 on the 12 scale bytes (words hdr[1..3]) of 16 rows.
      const __m512i s0 = hdr[1], s1 = hdr[2], s2 = hdr[3];
      __m512i mins[8];
      for (int j = 0; j < 8; ++j) {
        __m512i scv, mv;
        if (j < 4) {
          scv = _mm512_and_si512(ByteAt(s0, j), m6);
          mv = _mm512_and_si512(ByteAt(s1, j), m6);
        } else {
          const int t = j - 4;
          scv = _mm512_or_si512(
              _mm512_and_si512(ByteAt(s2, t), m4),
              _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(s0, 8 * t + 6), m2), 4));
          mv = _mm512_or_si512(
              _mm512_and_si512(_mm512_srli_epi32(s2, 8 * t + 4), m4),
              _mm512_slli_epi32(_mm512_and_si512(_mm512_srli_epi32(s1, 8 * t + 6), m2), 4));
        }
        if (nibbles) {  // u8 sc, u8 m (values < 64)
          uint8_t* scb = rec + kQK4KLevelBytes + j * kNr + 16 * half;
          _mm_storeu_si128(reinterpret_cast<__m128i*>(scb), _mm512_cvtepi32_epi8(scv));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(scb + 8 * kNr), _mm512_cvtepi32_epi8(mv));
        } else {
          _mm512_storeu_si512(sc + j * kNr, scv);
        }
        mins[j] = mv;
      }
      const __m256i d16 = _mm512_cvtepi32_epi16(hdr[0]);
      const __m256i e16 = _mm512_cvtepi32_epi16(_mm512_srli_epi32(hdr[0], 16));
      if (nibbles) {  // f16 d, dmin as stored
        uint8_t* db = rec + kQK4KLevelBytes + 16 * kNr + 32 * half;
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(db), d16);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(db + 64), e16);
        continue;
      }
      for (int q = 0; q < 4; ++q) {
        _mm512_storeu_si512(mm + q * kNr,
                            _mm512_or_si512(mins[2 * q], _mm512_slli_epi32(mins[2 * q + 1], 16)));
      }
      _mm512_storeu_ps(dd, _mm512_cvtph_ps(d16));
      _mm512_storeu_ps(ee, _mm512_cvtph_ps(e16));
    }
  }
}

using KernelFn = void (*)(int64_t, const uint8_t*, const float*, const int32_t*, const uint8_t*,
                         const int32_t*, const int32_t*, const float*, const float*, float*,
                         int64_t);

// The kernel for `rows` (1..7) rows: a partial panel computes only its rows,
// with each output's operation sequence unchanged (batch invariance).
template <int kSubs, bool kFoldMins, bool kNibbles>
KernelFn KernelFor(int rows) {
  static constexpr KernelFn kTable[kMr] = {
      MicroKernel<1, kSubs, kFoldMins, kNibbles>, MicroKernel<2, kSubs, kFoldMins, kNibbles>,
      MicroKernel<3, kSubs, kFoldMins, kNibbles>, MicroKernel<4, kSubs, kFoldMins, kNibbles>,
      MicroKernel<5, kSubs, kFoldMins, kNibbles>, MicroKernel<6, kSubs, kFoldMins, kNibbles>,
      MicroKernel<7, kSubs, kFoldMins, kNibbles>};
  return kTable[rows - 1];
}

}  // namespace

void GemmQK(const GemmArgs& args, int64_t n_begin, int64_t n_end, GemmScratch* s) {
  CHECK(args.w_type == DType::kQ4_K || args.w_type == DType::kQ5_K || args.w_type == DType::kQ6_K);
  const bool q6 = args.w_type == DType::kQ6_K;
  const int subs = q6 ? 16 : 8;
  const int64_t nsb = args.k / kQK_K;
  PackA(args, subs, s);
  float edge[kMr * kNr];
  const bool q4 = args.w_type == DType::kQ4_K;
  const size_t panel_bytes = static_cast<size_t>(nsb) * kQ4KPanelBytesPerSuperBlock;
  for (int64_t j0 = n_begin; j0 < n_end; j0 += kNr) {
    // Weights: the prepacked panel (PackQ4KPanels) or packed here.
    const uint8_t* wq;
    const int32_t *wsc, *wmm;
    const float *wd, *we;
    if (args.w_packed != nullptr) {  // Q4_K records (MicroKernel)
      wq = static_cast<const uint8_t*>(args.w_packed) + (j0 / kNr) * panel_bytes;
      wsc = wmm = nullptr;
      wd = we = nullptr;
    } else {
      PackW(PanelCopy(args, j0, s), 0, subs, s);
      wq = s->q8_w.data();
      wsc = s->qk_w_sc.data();
      wmm = s->qk_w_mins.data();
      wd = s->qk_w_d.data();
      we = s->qk_w_e.data();
    }
    const int64_t cols = std::min<int64_t>(kNr, n_end - j0);
    for (int64_t i0 = 0; i0 < args.m; i0 += kMr) {
      const int64_t p = i0 / kMr;
      const int64_t rows = std::min<int64_t>(kMr, args.m - i0);
      const bool full = cols == kNr;
      float* c = full ? args.c + i0 * args.ldc + j0 : edge;
      const int64_t ldc = full ? args.ldc : kNr;
      const uint8_t* ap = s->q8_a.data() + p * nsb * kGroups * kMr * 4;
      const float* ad = s->q8_a_scale.data() + p * nsb * kMr;
      const int32_t* abs = s->q8_a_corr.data() + p * nsb * (subs / 2) * kMr;
      const int r = static_cast<int>(rows);
      const KernelFn kernel = q6   ? KernelFor<16, true, false>(r)
                              : q4 ? KernelFor<8, false, true>(r)
                                   : KernelFor<8, false, false>(r);
      kernel(nsb, ap, ad, abs, wq, wsc, wmm, wd, we, c, ldc);
      if (!full) {
        for (int64_t r = 0; r < rows; ++r) {
          std::copy_n(edge + r * kNr, cols, args.c + (i0 + r) * args.ldc + j0);
        }
      }
    }
  }
}

void PackQ4KPanels(const GemmArgs& args, uint8_t* out) {
  CHECK(args.w_type == DType::kQ4_K);
  const int64_t nsb = args.k / kQK_K;
  GemmScratch s;
  for (int64_t j0 = 0; j0 < args.n; j0 += kNr) {
    PackW(args, j0, 8, &s);
    uint8_t* dst = out + static_cast<size_t>(j0 / kNr * nsb) * kQ4KPanelBytesPerSuperBlock;
    const auto append = [&dst](const auto& v) {
      const size_t bytes = v.size() * sizeof(v[0]);
      std::memcpy(dst, v.data(), bytes);
      dst += bytes;
    };
    append(s.q8_w);  // the Q4_K records hold everything
  }
}

}  // namespace mneme::kernels::avx512

#pragma GCC diagnostic pop
#pragma GCC pop_options
