// AVX2 + FMA + F16C dot kernels (Haswell / Zen and later).
//
// Integer sums inside a block are exact (maddubs/madd never saturate for
// these ranges: |q4| <= 15, |q5| <= 31, q6 in [0, 63], |q8| <= 127), and the
// per-block f32 scale is applied with one FMA, as llama.cpp's AVX2 kernels do.
#include <immintrin.h>

#include "kernels/dot_impl.h"
#include "kernels/fp16.h"
#include "kernels/quant_types.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

#include "kernels/simd_avx2.h"

namespace mneme::kernels::avx2 {

float DotF32(int64_t n, const float* w, const float* a) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      acc[k] =
          _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 8 * k), _mm256_loadu_ps(a + i + 8 * k), acc[k]);
    }
  }
  float sum = HsumF32(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  for (; i < n; ++i) sum += w[i] * a[i];
  return sum;
}

float DotF16(int64_t n, const uint16_t* w, const uint16_t* a) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      const __m256 wv =
          _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + i + 8 * k)));
      const __m256 av =
          _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i + 8 * k)));
      acc[k] = _mm256_fmadd_ps(wv, av, acc[k]);
    }
  }
  float sum = HsumF32(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  for (; i < n; ++i) sum += F16ToF32(w[i]) * F16ToF32(a[i]);
  return sum;
}

static inline __m256 LoadBf16(const uint16_t* p) {
  const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}

float DotBf16(int64_t n, const uint16_t* w, const uint16_t* a) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      acc[k] = _mm256_fmadd_ps(LoadBf16(w + i + 8 * k), LoadBf16(a + i + 8 * k), acc[k]);
    }
  }
  float sum = HsumF32(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  for (; i < n; ++i) sum += Bf16ToF32(w[i]) * Bf16ToF32(a[i]);
  return sum;
}

// One block is only a few cycles of work: a second accumulator hides the
// FMA latency of the per-block scale.
static inline __m256 BlockQ8_0Term(const BlockQ8_0& w, const BlockQ8_0& a) {
  const __m256 d = _mm256_set1_ps(F16C(w.d) * F16C(a.d));
  return _mm256_mul_ps(d, _mm256_cvtepi32_ps(DotI8(LoadBytes(w.qs), LoadBytes(a.qs))));
}

static inline __m256 BlockQ4_0Term(const BlockQ4_0& w, const BlockQ8_0& a) {
  const __m256 d = _mm256_set1_ps(F16C(w.d) * F16C(a.d));
  const __m256i q = _mm256_sub_epi8(UnpackNibbles(w.qs), _mm256_set1_epi8(8));
  return _mm256_mul_ps(d, _mm256_cvtepi32_ps(DotI8(q, LoadBytes(a.qs))));
}

float DotQ8_0(int64_t n, const BlockQ8_0* w, const BlockQ8_0* a) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  const int64_t nb = n / kQK8_0;
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    acc0 = _mm256_add_ps(acc0, BlockQ8_0Term(w[b], a[b]));
    acc1 = _mm256_add_ps(acc1, BlockQ8_0Term(w[b + 1], a[b + 1]));
  }
  if (b < nb) acc0 = _mm256_add_ps(acc0, BlockQ8_0Term(w[b], a[b]));
  return HsumF32(_mm256_add_ps(acc0, acc1));
}

float DotQ4_0(int64_t n, const BlockQ4_0* w, const BlockQ8_0* a) {
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  const int64_t nb = n / kQK4_0;
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    acc0 = _mm256_add_ps(acc0, BlockQ4_0Term(w[b], a[b]));
    acc1 = _mm256_add_ps(acc1, BlockQ4_0Term(w[b + 1], a[b + 1]));
  }
  if (b < nb) acc0 = _mm256_add_ps(acc0, BlockQ4_0Term(w[b], a[b]));
  return HsumF32(_mm256_add_ps(acc0, acc1));
}

// Unsigned levels (32 bytes) x int8 activations, scaled by one int16 scale.
static inline __m256i ScaledDotU8(__m256i q, __m256i q8, int scale) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(q, q8),
                           _mm256_set1_epi16(static_cast<int16_t>(scale)));
}

// Shared Q4_K / Q5_K body; `HighBits` adds the Q5_K fifth bit (or nothing).
template <bool kHasHighBit, typename Block>
static inline float DotK4Style(int64_t n, const Block* w, const BlockQ8K* a) {
  __m256 acc = _mm256_setzero_ps();
  float min_total = 0.f;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    uint8_t sc[8], mn[8];
    int msum = 0;
    for (int j = 0; j < 8; ++j) {
      GetScaleMinK4(j, w[b].scales, &sc[j], &mn[j]);
      msum += mn[j] * (a[b].bsums[2 * j] + a[b].bsums[2 * j + 1]);
    }
    __m256i hbits = _mm256_setzero_si256();
    if constexpr (kHasHighBit) hbits = LoadBytes(w[b].qh);
    __m256i sumi = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
      const __m256i q = LoadBytes(w[b].qs + 32 * c);
      __m256i lo = _mm256_and_si256(q, low4);
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
      if constexpr (kHasHighBit) {
        const __m256i m_lo = _mm256_set1_epi8(static_cast<char>(1 << (2 * c)));
        const __m256i m_hi = _mm256_set1_epi8(static_cast<char>(1 << (2 * c + 1)));
        const __m256i sixteen = _mm256_set1_epi8(16);
        lo = _mm256_or_si256(
            lo, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hbits, m_lo), m_lo), sixteen));
        hi = _mm256_or_si256(
            hi, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hbits, m_hi), m_hi), sixteen));
      }
      sumi = _mm256_add_epi32(sumi, ScaledDotU8(lo, LoadBytes(a[b].qs + 64 * c), sc[2 * c]));
      sumi =
          _mm256_add_epi32(sumi, ScaledDotU8(hi, LoadBytes(a[b].qs + 64 * c + 32), sc[2 * c + 1]));
    }
    const float d = F16C(w[b].d) * a[b].d;
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    min_total += F16C(w[b].dmin) * a[b].d * static_cast<float>(msum);
  }
  return HsumF32(acc) - min_total;
}

float DotQ4K(int64_t n, const BlockQ4K* w, const BlockQ8K* a) {
  return DotK4Style<false>(n, w, a);
}
float DotQ5K(int64_t n, const BlockQ5K* w, const BlockQ8K* a) {
  return DotK4Style<true>(n, w, a);
}

// Q6_K: levels are unsigned q + 32 in [0, 63]; the -32 offset is applied via
// the activation block sums: sum_j sc_j * 32 * bsums_j.
float DotQ6K(int64_t n, const BlockQ6K* w, const BlockQ8K* a) {
  __m256 acc = _mm256_setzero_ps();
  float offset_total = 0.f;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i low2 = _mm256_set1_epi8(0x03);
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const BlockQ6K& x = w[b];
    int offset = 0;
    for (int j = 0; j < 16; ++j) offset += x.scales[j] * a[b].bsums[j];
    __m256i sumi = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
      const __m256i ql0 = LoadBytes(x.ql + 64 * h);
      const __m256i ql1 = LoadBytes(x.ql + 64 * h + 32);
      const __m256i qh = LoadBytes(x.qh + 32 * h);
      __m256i q[4];
      q[0] = _mm256_or_si256(_mm256_and_si256(ql0, low4),
                             _mm256_slli_epi16(_mm256_and_si256(qh, low2), 4));
      q[1] =
          _mm256_or_si256(_mm256_and_si256(ql1, low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), low2), 4));
      q[2] =
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), low2), 4));
      q[3] =
          _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4),
                          _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), low2), 4));
      for (int g = 0; g < 4; ++g) {
        const int s = 8 * h + 2 * g;  // scale of the first 16 of these 32 elements
        const __m256i p = _mm256_maddubs_epi16(q[g], LoadBytes(a[b].qs + 128 * h + 32 * g));
        const __m256i scales =
            _mm256_set_m128i(_mm_set1_epi16(x.scales[s + 1]), _mm_set1_epi16(x.scales[s]));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(p, scales));
      }
    }
    const float d = F16C(x.d) * a[b].d;
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    offset_total += d * static_cast<float>(32 * offset);
  }
  return HsumF32(acc) - offset_total;
}

}  // namespace mneme::kernels::avx2

#pragma GCC pop_options
