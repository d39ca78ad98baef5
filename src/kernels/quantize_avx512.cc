// AVX-512 Q8_0 / Q8_K activation quantization: the per-token cost in front
// of every int8 matmul (gemm_q8.cc, gemm_qk.cc), bit-identical to the scalar
// QuantizeRowQ8_0 / QuantizeRowQ8K for finite inputs (max |x| is
// order-independent, products round the same, and VCVTPS2DQ rounds half to
// even like NearestInt).
#include <immintrin.h>

#include <cstring>

#include "kernels/fp16.h"
#include "kernels/quantize.h"
#include "util/check.h"

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq")
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace mneme::kernels {

void QuantizeRowQ8_0Avx512(const float* x, BlockQ8_0* y, int64_t n) {
  CHECK(n % kQK8_0 == 0);
  const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
  for (int64_t i = 0; i < n / kQK8_0; ++i, x += kQK8_0) {
    const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
    const float amax = _mm512_reduce_max_ps(
        _mm512_max_ps(_mm512_and_ps(v0, abs_mask), _mm512_and_ps(v1, abs_mask)));
    y[i].d = F32ToF16(amax / 127.f);
    const __m512 id = _mm512_set1_ps(amax != 0.f ? 127.f / amax : 0.f);
    const __m128i q0 = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v0, id)));
    const __m128i q1 = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v1, id)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y[i].qs), q0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y[i].qs + 16), q1);
  }
}

void QuantizeRowQ8KAvx512(const float* x, BlockQ8K* y, int64_t n) {
  CHECK(n % kQK_K == 0);
  const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    __m512 vmax = _mm512_setzero_ps();
    for (int j = 0; j < kQK_K; j += 16)
      vmax = _mm512_max_ps(vmax, _mm512_and_ps(_mm512_loadu_ps(x + j), abs_mask));
    const float amax = _mm512_reduce_max_ps(vmax);
    if (amax == 0.f) {
      std::memset(&y[i], 0, sizeof(y[i]));
      continue;
    }
    // ggml keeps the signed value of the first element of largest magnitude.
    float max = 0.f;
    for (int j = 0; j < kQK_K; j += 16) {
      const __mmask16 hit = _mm512_cmp_ps_mask(_mm512_and_ps(_mm512_loadu_ps(x + j), abs_mask),
                                               _mm512_set1_ps(amax), _CMP_EQ_OQ);
      if (hit != 0) {
        max = x[j + __builtin_ctz(hit)];
        break;
      }
    }
    const float iscale = -127.f / max;
    const __m512 vscale = _mm512_set1_ps(iscale);
    for (int j = 0; j < kQK_K; j += 16) {
      __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(vscale, _mm512_loadu_ps(x + j)));
      q = _mm512_min_epi32(q, _mm512_set1_epi32(127));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(y[i].qs + j), _mm512_cvtepi32_epi8(q));
      y[i].bsums[j / 16] = static_cast<int16_t>(_mm512_reduce_add_epi32(q));
    }
    y[i].d = 1.f / iscale;
  }
}

}  // namespace mneme::kernels

#pragma GCC diagnostic pop
#pragma GCC pop_options
