// Row conversions between F32 and F16/BF16, with F16C fast paths.
#include "kernels/fp16.h"

#include <immintrin.h>

#include "kernels/cpu_features.h"

namespace mneme::kernels {
namespace {

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

void F16ToF32RowF16c(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) dst[i] = F16ToF32(src[i]);
}

void F32ToF16RowF16c(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
  for (; i < n; ++i) dst[i] = F32ToF16(src[i]);
}

void Bf16ToF32RowAvx2(const uint16_t* src, float* dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i w =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    _mm256_storeu_ps(dst + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
  }
  for (; i < n; ++i) dst[i] = Bf16ToF32(src[i]);
}

void F32ToBf16RowAvx2(const float* src, uint16_t* dst, int64_t n) {
  int64_t i = 0;
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff);
  const __m256i inf = _mm256_set1_epi32(0x7f800000);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i half = _mm256_set1_epi32(0x7fff);
  const __m256i quiet = _mm256_set1_epi32(64);
  for (; i + 8 <= n; i += 8) {
    const __m256i u = _mm256_castps_si256(_mm256_loadu_ps(src + i));
    const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(half, lsb)), 16);
    const __m256i nan_bits = _mm256_or_si256(_mm256_srli_epi32(u, 16), quiet);
    const __m256i r = _mm256_blendv_epi8(rounded, nan_bits, is_nan);
    // Pack 8 x u32 (each < 2^16) into 8 x u16 in order.
    const __m128i lo = _mm256_castsi256_si128(r);
    const __m128i hi = _mm256_extracti128_si256(r, 1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm_packus_epi32(lo, hi));
  }
  for (; i < n; ++i) dst[i] = F32ToBf16(src[i]);
}

#pragma GCC pop_options

}  // namespace

void F16ToF32RowScalar(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = F16ToF32(src[i]);
}

void F32ToF16RowScalar(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = F32ToF16(src[i]);
}

void F16ToF32Row(const uint16_t* src, float* dst, int64_t n) {
  if (ActiveIsa() >= Isa::kAvx2) return F16ToF32RowF16c(src, dst, n);
  F16ToF32RowScalar(src, dst, n);
}

void F32ToF16Row(const float* src, uint16_t* dst, int64_t n) {
  if (ActiveIsa() >= Isa::kAvx2) return F32ToF16RowF16c(src, dst, n);
  F32ToF16RowScalar(src, dst, n);
}

void Bf16ToF32Row(const uint16_t* src, float* dst, int64_t n) {
  if (ActiveIsa() >= Isa::kAvx2) return Bf16ToF32RowAvx2(src, dst, n);
  for (int64_t i = 0; i < n; ++i) dst[i] = Bf16ToF32(src[i]);
}

void F32ToBf16Row(const float* src, uint16_t* dst, int64_t n) {
  if (ActiveIsa() >= Isa::kAvx2) return F32ToBf16RowAvx2(src, dst, n);
  for (int64_t i = 0; i < n; ++i) dst[i] = F32ToBf16(src[i]);
}

}  // namespace mneme::kernels
