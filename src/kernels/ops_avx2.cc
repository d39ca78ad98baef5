// AVX2 + FMA versions of the ops in ops.h.
//
// Exp8 is the polynomial exp of ggml's AVX2 ggml_v_expf (same ARM
// optimized-routines algorithm as the AVX-512 one, but the result is formed
// as k + k*poly with k = 2^n built from the exponent bits, and |n| > 126 takes
// a two-factor scaling path so no intermediate overflows). RoPE reuses the
// scalar kernel (bit-identical, and not a hot spot).
#include <immintrin.h>

#include <cmath>

#include "kernels/ops_impl.h"

#pragma GCC push_options
// No FMA contraction of separate mul/add intrinsics (GCC contracts by
// default): the rounding steps must be the ones written.
#pragma GCC optimize("fp-contract=off")
#pragma GCC target("avx2,fma,f16c")

namespace mneme::kernels::avx2 {
namespace {

inline __m256 Exp8(__m256 x) {
  const __m256 shift = _mm256_set1_ps(0x1.8p23f);
  const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), shift);
  const __m256 n = _mm256_sub_ps(z, shift);
  const __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f),
                                    _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
  const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);  // n in the exponent field
  const __m256 k = _mm256_castsi256_ps(_mm256_add_epi32(e, _mm256_set1_epi32(0x3f800000)));
  const __m256 abs_n = _mm256_andnot_ps(_mm256_set1_ps(-0.f), n);
  const __m256 large = _mm256_cmp_ps(abs_n, _mm256_set1_ps(126), _CMP_GT_OQ);
  const __m256 r2 = _mm256_mul_ps(r, r);
  const __m256 hi =
      _mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), r, _mm256_set1_ps(0x1.573e2ep-5f));
  const __m256 mid =
      _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), r, _mm256_set1_ps(0x1.fffdb6p-2f));
  const __m256 poly = _mm256_fmadd_ps(_mm256_fmadd_ps(hi, r2, mid), r2,
                                      _mm256_mul_ps(_mm256_set1_ps(0x1.ffffecp-1f), r));
  if (_mm256_movemask_ps(large) == 0) return _mm256_fmadd_ps(poly, k, k);
  // 2^n split as s1 * s2 (s1 = 2^127 or 2^-125 by sign of n) so neither overflows.
  const __m256i sign_bits =
      _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ)),
                       _mm256_set1_epi32(static_cast<int>(0x82000000u)));
  const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(sign_bits, _mm256_set1_epi32(0x7f000000)));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, sign_bits));
  const __m256 huge = _mm256_cmp_ps(abs_n, _mm256_set1_ps(192), _CMP_GT_OQ);
  const __m256 scaled = _mm256_mul_ps(_mm256_fmadd_ps(s2, poly, s2), s1);
  const __m256 normal = _mm256_fmadd_ps(k, poly, k);
  const __m256 mid_res = _mm256_blendv_ps(normal, scaled, large);
  return _mm256_blendv_ps(mid_res, _mm256_mul_ps(s1, s1), huge);
}

inline __m256 Silu8(__m256 x) {
  const __m256 e = Exp8(_mm256_sub_ps(_mm256_setzero_ps(), x));
  return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

}  // namespace

double SumSquares(const float* x, int64_t n) {
  __m256d acc0 = _mm256_setzero_pd(), acc1 = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 sq = _mm256_mul_ps(v, v);
    acc0 = _mm256_add_pd(acc0, _mm256_cvtps_pd(_mm256_castps256_ps128(sq)));
    acc1 = _mm256_add_pd(acc1, _mm256_cvtps_pd(_mm256_extractf128_ps(sq, 1)));
  }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, _mm256_add_pd(acc0, acc1));
  double sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  for (; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
  return sum;
}

void ScaleMul(const float* x, float scale, const float* w, float* out, int64_t n) {
  const __m256 s = _mm256_set1_ps(scale);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 y = _mm256_mul_ps(_mm256_loadu_ps(x + i), s);
    if (w != nullptr) y = _mm256_mul_ps(y, _mm256_loadu_ps(w + i));
    _mm256_storeu_ps(out + i, y);
  }
  scalar::ScaleMul(x + i, scale, w == nullptr ? nullptr : w + i, out + i, n - i);
}

void RopeApply(RopeMode mode, int n_dims, const float* cache, float* x, int n_heads, int head_dim) {
  scalar::RopeApply(mode, n_dims, cache, x, n_heads, head_dim);
}

void ScaleMask(float* x, int64_t n, float scale, const float* mask) {
  const __m256 s = _mm256_set1_ps(scale);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 y = _mm256_mul_ps(_mm256_loadu_ps(x + i), s);
    if (mask != nullptr) y = _mm256_add_ps(y, _mm256_loadu_ps(mask + i));
    _mm256_storeu_ps(x + i, y);
  }
  scalar::ScaleMask(x + i, n - i, scale, mask == nullptr ? nullptr : mask + i);
}

float Max(const float* x, int64_t n) {
  __m256 m = _mm256_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) m = _mm256_max_ps(m, _mm256_loadu_ps(x + i));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, m);
  float r = -INFINITY;
  for (float v : lanes) r = r > v ? r : v;
  for (; i < n; ++i) r = r > x[i] ? r : x[i];
  return r;
}

double ExpSubSum(const float* x, float* y, int64_t n, float max) {
  const __m256 mv = _mm256_set1_ps(max);
  double sum = 0.0;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = Exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
    _mm256_storeu_ps(y + i, e);
    // ggml: horizontal float sum of the 8 lanes ((0+4)+(1+5)...) then to double.
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(e), _mm256_extractf128_ps(e, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    sum += static_cast<double>(_mm_cvtss_f32(s));
  }
  return sum + scalar::ExpSubSum(x + i, y + i, n - i, max);
}

double ExpSubSumPadded(const float* x, float* y, int64_t n, float max) {
  const int64_t full = n & ~int64_t{7};
  double sum = full > 0 ? ExpSubSum(x, y, full, max) : 0.0;
  if (full < n) {  // the tail as a vector padded with -inf (exp gives exact zeros)
    alignas(32) float buf[8];
    for (int i = 0; i < 8; ++i) buf[i] = full + i < n ? x[full + i] : -INFINITY;
    float out[8];
    sum += ExpSubSum(buf, out, 8, max);
    for (int64_t i = full; i < n; ++i) y[i] = out[i - full];
  }
  return sum;
}

void Scale(float* x, int64_t n, float s) {
  const __m256 sv = _mm256_set1_ps(s);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), sv));
  scalar::Scale(x + i, n - i, s);
}

void Silu(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, Silu8(_mm256_loadu_ps(x + i)));
  scalar::Silu(x + i, y + i, n - i);
}

void SwiGlu(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 s = Silu8(_mm256_loadu_ps(gate + i));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(s, _mm256_loadu_ps(up + i)));
  }
  scalar::SwiGlu(gate + i, up + i, out + i, n - i);
}

void Add(const float* a, const float* b, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  }
  scalar::Add(a + i, b + i, out + i, n - i);
}

}  // namespace mneme::kernels::avx2

#pragma GCC pop_options
