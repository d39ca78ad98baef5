// Internal: small AVX2 helpers shared by the AVX2 kernels. Include only from
// a .cc file, after `#pragma GCC target("avx2,fma,f16c")`.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace mneme::kernels::avx2 {

static inline float HsumF32(__m256 x) {
  __m128 r = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  r = _mm_add_ps(r, _mm_movehl_ps(r, r));
  r = _mm_add_ss(r, _mm_movehdup_ps(r));
  return _mm_cvtss_f32(r);
}

// 32 signed x 32 signed int8 -> 8 int32 lanes, each the sum of 4 products.
// Exact while no operand of `y` is -128 (our activations are in [-127, 127]).
static inline __m256i DotI8(__m256i x, __m256i y) {
  const __m256i ax = _mm256_sign_epi8(x, x);
  const __m256i sy = _mm256_sign_epi8(y, x);
  return _mm256_madd_epi16(_mm256_maddubs_epi16(ax, sy), _mm256_set1_epi16(1));
}

// 16 bytes of packed nibbles -> 32 bytes: low nibbles first, then high ones.
static inline __m256i UnpackNibbles(const void* p) {
  const __m128i tmp = _mm_loadu_si128(static_cast<const __m128i*>(p));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(tmp, 4), tmp);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

// F16 -> F32 with the F16C instruction (same value as F16ToF32, no branches).
static inline float F16C(uint16_t h) {
  return _cvtsh_ss(h);
}

static inline __m256i LoadBytes(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}

}  // namespace mneme::kernels::avx2
