// AVX-512 dot kernels (F/BW/VL + VNNI + BF16; Zen 4, Sapphire Rapids).
//
// Float rows use 512-bit FMAs (BF16 uses VDPBF16PS, as llama.cpp does on
// AVX512_BF16 CPUs); Q8_0 / Q4_0 use VPDPBUSD (VNNI), two blocks per zmm (the
// 256-bit helpers handle a trailing odd block). K-quants: dot_avx512_k.cc.
#include <immintrin.h>

#include "kernels/dot_impl.h"
#include "kernels/fp16.h"
#include "kernels/quant_types.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx512bf16")
// GCC 12's avx512fintrin.h builds results from _mm512_undefined_*(), which
// trips -Wuninitialized when inlined (a header false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "kernels/simd_avx2.h"

namespace mneme::kernels::avx512 {

float DotF32(int64_t n, const float* w, const float* a) {
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                   _mm512_setzero_ps()};
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    for (int k = 0; k < 4; ++k) {
      acc[k] =
          _mm512_fmadd_ps(_mm512_loadu_ps(w + i + 16 * k), _mm512_loadu_ps(a + i + 16 * k), acc[k]);
    }
  }
  float sum = _mm512_reduce_add_ps(
      _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
  for (; i < n; ++i) sum += w[i] * a[i];
  return sum;
}

float DotF16(int64_t n, const uint16_t* w, const uint16_t* a) {
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                   _mm512_setzero_ps()};
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    for (int k = 0; k < 4; ++k) {
      const __m512 wv =
          _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + i + 16 * k)));
      const __m512 av =
          _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i + 16 * k)));
      acc[k] = _mm512_fmadd_ps(wv, av, acc[k]);
    }
  }
  float sum = _mm512_reduce_add_ps(
      _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3])));
  for (; i < n; ++i) sum += F16ToF32(w[i]) * F16ToF32(a[i]);
  return sum;
}

float DotBf16(int64_t n, const uint16_t* w, const uint16_t* a) {
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    acc0 = _mm512_dpbf16_ps(acc0, (__m512bh)_mm512_loadu_si512(w + i),
                            (__m512bh)_mm512_loadu_si512(a + i));
    acc1 = _mm512_dpbf16_ps(acc1, (__m512bh)_mm512_loadu_si512(w + i + 32),
                            (__m512bh)_mm512_loadu_si512(a + i + 32));
  }
  float sum = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
  for (; i < n; ++i) sum += Bf16ToF32(w[i]) * Bf16ToF32(a[i]);
  return sum;
}

static inline __m256i DotI8Vnni(__m256i x, __m256i y) {
  const __m256i ax = _mm256_sign_epi8(x, x);
  const __m256i sy = _mm256_sign_epi8(y, x);
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), ax, sy);
}

// One block is only a few cycles of work: a second accumulator hides the
// FMA latency of the per-block scale.
static inline __m256 BlockQ8_0Term(const BlockQ8_0& w, const BlockQ8_0& a) {
  const __m256 d = _mm256_set1_ps(avx2::F16C(w.d) * avx2::F16C(a.d));
  return _mm256_mul_ps(d,
                       _mm256_cvtepi32_ps(DotI8Vnni(avx2::LoadBytes(w.qs), avx2::LoadBytes(a.qs))));
}

static inline __m256 BlockQ4_0Term(const BlockQ4_0& w, const BlockQ8_0& a) {
  const __m256 d = _mm256_set1_ps(avx2::F16C(w.d) * avx2::F16C(a.d));
  const __m256i q = _mm256_sub_epi8(avx2::UnpackNibbles(w.qs), _mm256_set1_epi8(8));
  return _mm256_mul_ps(d, _mm256_cvtepi32_ps(DotI8Vnni(q, avx2::LoadBytes(a.qs))));
}

// Two blocks per zmm: VPDPBUSD needs one unsigned side, so the weights are
// biased to w + 128 (xor 0x80) and 128 * sum(q8) is subtracted again.
float DotQ8_0(int64_t n, const BlockQ8_0* w, const BlockQ8_0* a) {
  __m512 acc = _mm512_setzero_ps();
  const __m512i bias = _mm512_set1_epi8(static_cast<char>(0x80));
  const int64_t nb = n / kQK8_0;
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    const __m512i x = _mm512_inserti64x4(_mm512_castsi256_si512(avx2::LoadBytes(w[b].qs)),
                                         avx2::LoadBytes(w[b + 1].qs), 1);
    const __m512i y = _mm512_inserti64x4(_mm512_castsi256_si512(avx2::LoadBytes(a[b].qs)),
                                         avx2::LoadBytes(a[b + 1].qs), 1);
    const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_xor_si512(x, bias), y);
    const __m512i offset = _mm512_dpbusd_epi32(_mm512_setzero_si512(), bias, y);
    const __m256 d0 = _mm256_set1_ps(avx2::F16C(w[b].d) * avx2::F16C(a[b].d));
    const __m256 d1 = _mm256_set1_ps(avx2::F16C(w[b + 1].d) * avx2::F16C(a[b + 1].d));
    const __m512 d = _mm512_insertf32x8(_mm512_castps256_ps512(d0), d1, 1);
    acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(_mm512_sub_epi32(dot, offset)), acc);
  }
  float sum = _mm512_reduce_add_ps(acc);
  if (b < nb) sum += avx2::HsumF32(BlockQ8_0Term(w[b], a[b]));
  return sum;
}

// Two blocks per zmm: unsigned nibbles q + 8 times the activations with
// VPDPBUSD, minus 8 * sum(q8) (a second VPDPBUSD against a vector of 8s);
// lanes 0-7 belong to block b, lanes 8-15 to block b + 1.
float DotQ4_0(int64_t n, const BlockQ4_0* w, const BlockQ8_0* a) {
  __m512 acc = _mm512_setzero_ps();
  const __m512i eights = _mm512_set1_epi8(8);
  const int64_t nb = n / kQK4_0;
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    const __m256i q0 = avx2::UnpackNibbles(w[b].qs);
    const __m256i q1 = avx2::UnpackNibbles(w[b + 1].qs);
    const __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(q0), q1, 1);
    const __m512i y = _mm512_inserti64x4(_mm512_castsi256_si512(avx2::LoadBytes(a[b].qs)),
                                         avx2::LoadBytes(a[b + 1].qs), 1);
    const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q, y);
    const __m512i offset = _mm512_dpbusd_epi32(_mm512_setzero_si512(), eights, y);
    const __m256 d0 = _mm256_set1_ps(avx2::F16C(w[b].d) * avx2::F16C(a[b].d));
    const __m256 d1 = _mm256_set1_ps(avx2::F16C(w[b + 1].d) * avx2::F16C(a[b + 1].d));
    const __m512 d = _mm512_insertf32x8(_mm512_castps256_ps512(d0), d1, 1);
    acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(_mm512_sub_epi32(dot, offset)), acc);
  }
  float sum = _mm512_reduce_add_ps(acc);
  if (b < nb) sum += avx2::HsumF32(BlockQ4_0Term(w[b], a[b]));
  return sum;
}

}  // namespace mneme::kernels::avx512

#pragma GCC diagnostic pop
#pragma GCC pop_options
