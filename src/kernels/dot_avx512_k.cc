// AVX-512 K-quant dot kernels: one 512-bit register covers a whole 64-element
// chunk (Q4_K/Q5_K) or four 16-element Q6_K sub-blocks, halving the
// instruction count of the AVX2 kernels.
//
// Same exact integer arithmetic as the AVX2/scalar versions: maddubs pairs
// (|q| <= 63, |q8| <= 127: no int16 saturation), then madd with the int16
// sub-block scales into int32 lanes; one f32 FMA per 256-element block.
#include <immintrin.h>

#include <cstring>

#include "kernels/dot_impl.h"
#include "kernels/fp16.h"
#include "kernels/quant_types.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq")
// GCC 12's avx512fintrin.h builds results from _mm512_undefined_*(), which
// trips -Wuninitialized when inlined (a header false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace mneme::kernels::avx512 {
namespace {

// The 8 six-bit scales (bytes 0..7) and mins (bytes 8..15) of a Q4_K/Q5_K
// block, unpacked with 32-bit masks (same result as GetScaleMinK4 for j < 8).
inline __m128i UnpackScalesMinsK4(const uint8_t* packed) {
  constexpr uint32_t kMask6 = 0x3f3f3f3f, kMask4 = 0x0f0f0f0f, kMask2 = 0x03030303;
  uint32_t u[4];
  std::memcpy(u, packed, 12);
  u[3] = ((u[2] >> 4) & kMask4) | (((u[1] >> 6) & kMask2) << 4);  // mins 4..7
  const uint32_t mins_lo = u[1] & kMask6;                         // mins 0..3
  u[1] = (u[2] & kMask4) | (((u[0] >> 6) & kMask2) << 4);         // scales 4..7
  u[2] = mins_lo;
  u[0] &= kMask6;  // scales 0..3
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(u));
}

// sum_j mins[j] * (bsums[2j] + bsums[2j + 1]).
inline int MinsDotBsums(__m128i scales_mins, const int16_t* bsums) {
  const __m128i mins = _mm_cvtepu8_epi16(_mm_srli_si128(scales_mins, 8));
  const __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bsums));
  const __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bsums + 8));
  const __m128i prod = _mm_madd_epi16(mins, _mm_hadd_epi16(b0, b1));
  __m128i s = _mm_add_epi32(prod, _mm_shuffle_epi32(prod, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

// 32 int16 lanes: lanes 0..15 = scales16[first], lanes 16..31 = scales16[first + 1].
inline __m512i PairScales(__m512i scales16, int first) {
  const __m512i idx =
      _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16(static_cast<int16_t>(first))),
                         _mm256_set1_epi16(static_cast<int16_t>(first + 1)), 1);
  return _mm512_permutexvar_epi16(idx, scales16);
}

template <bool kHasHighBit, typename Block>
inline float DotK4Style(int64_t n, const Block* w, const BlockQ8K* a) {
  __m512 acc = _mm512_setzero_ps();
  float min_total = 0.f;
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const __m512i nibble_shift = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const __m128i sm = UnpackScalesMinsK4(w[b].scales);
    const __m512i scales16 = _mm512_castsi256_si512(_mm256_cvtepu8_epi16(sm));  // lanes 0..7 used
    __m512i hbits = _mm512_setzero_si512();
    if constexpr (kHasHighBit) {
      hbits = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qh)));
    }
    __m512i sumi = _mm512_setzero_si512();
    for (int c = 0; c < 4; ++c) {
      // Low half: low nibbles (sub-block 2c); high half: high nibbles (2c + 1).
      const __m512i q2 = _mm512_broadcast_i64x4(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qs + 32 * c)));
      __m512i q = _mm512_and_si512(_mm512_srlv_epi16(q2, nibble_shift), low4);
      if constexpr (kHasHighBit) {
        const __m512i bit =
            _mm512_inserti64x4(_mm512_set1_epi8(static_cast<char>(1 << (2 * c))),
                               _mm256_set1_epi8(static_cast<char>(1 << (2 * c + 1))), 1);
        q = _mm512_mask_add_epi8(q, _mm512_test_epi8_mask(hbits, bit), q, _mm512_set1_epi8(16));
      }
      const __m512i q8 = _mm512_loadu_si512(a[b].qs + 64 * c);
      const __m512i p = _mm512_madd_epi16(_mm512_maddubs_epi16(q, q8), PairScales(scales16, 2 * c));
      sumi = _mm512_add_epi32(sumi, p);
    }
    const float d = _cvtsh_ss(w[b].d) * a[b].d;
    acc = _mm512_fmadd_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(sumi), acc);
    min_total += _cvtsh_ss(w[b].dmin) * a[b].d * static_cast<float>(MinsDotBsums(sm, a[b].bsums));
  }
  return _mm512_reduce_add_ps(acc) - min_total;
}

}  // namespace

float DotQ4K(int64_t n, const BlockQ4K* w, const BlockQ8K* a) {
  return DotK4Style<false>(n, w, a);
}
float DotQ5K(int64_t n, const BlockQ5K* w, const BlockQ8K* a) {
  return DotK4Style<true>(n, w, a);
}

// Q6_K: per 128-element half, one register holds elements 0..63 (low nibbles
// of ql[0..63], qh bits 0-1 / 2-3) and one holds 64..127 (high nibbles, qh
// bits 4-5 / 6-7); each is 4 sub-blocks of 16 with their own int8 scale.
float DotQ6K(int64_t n, const BlockQ6K* w, const BlockQ8K* a) {
  __m512 acc = _mm512_setzero_ps();
  float offset_total = 0.f;
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const __m512i low2 = _mm512_set1_epi8(0x03);
  const __m512i shift_02 = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
  const __m512i shift_46 = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(6), 1);
  // Lane i of quad q's scale vector: sub-block 4q + i / 8.
  __m512i quad_idx[4];
  for (int q = 0; q < 4; ++q) {
    alignas(64) int16_t idx[32];
    for (int i = 0; i < 32; ++i) idx[i] = static_cast<int16_t>(4 * q + i / 8);
    quad_idx[q] = _mm512_load_si512(idx);
  }
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const BlockQ6K& x = w[b];
    const __m256i sc16 =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x.scales)));
    const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[b].bsums));
    const __m256i off = _mm256_madd_epi16(sc16, bs);
    const int offset = _mm512_reduce_add_epi32(_mm512_zextsi256_si512(off));
    const __m512i scales16 = _mm512_castsi256_si512(sc16);
    __m512i sumi = _mm512_setzero_si512();
    for (int h = 0; h < 2; ++h) {
      const __m512i ql = _mm512_loadu_si512(x.ql + 64 * h);
      const __m512i qh = _mm512_broadcast_i64x4(
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.qh + 32 * h)));
      const __m512i hi01 =
          _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, shift_02), low2), 4);
      const __m512i hi23 =
          _mm512_slli_epi16(_mm512_and_si512(_mm512_srlv_epi16(qh, shift_46), low2), 4);
      const __m512i q01 = _mm512_or_si512(_mm512_and_si512(ql, low4), hi01);
      const __m512i q23 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), low4), hi23);
      const __m512i p01 = _mm512_maddubs_epi16(q01, _mm512_loadu_si512(a[b].qs + 128 * h));
      const __m512i p23 = _mm512_maddubs_epi16(q23, _mm512_loadu_si512(a[b].qs + 128 * h + 64));
      sumi = _mm512_add_epi32(
          sumi, _mm512_madd_epi16(p01, _mm512_permutexvar_epi16(quad_idx[2 * h], scales16)));
      sumi = _mm512_add_epi32(
          sumi, _mm512_madd_epi16(p23, _mm512_permutexvar_epi16(quad_idx[2 * h + 1], scales16)));
    }
    const float d = _cvtsh_ss(x.d) * a[b].d;
    acc = _mm512_fmadd_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(sumi), acc);
    offset_total += d * static_cast<float>(32 * offset);
  }
  return _mm512_reduce_add_ps(acc) - offset_total;
}

}  // namespace mneme::kernels::avx512

#pragma GCC diagnostic pop
#pragma GCC pop_options
