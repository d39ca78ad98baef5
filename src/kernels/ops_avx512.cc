// AVX-512 versions of the ops in ops.h (F/BW/VL/DQ).
//
// Exp16 is the polynomial exp of ggml's AVX-512 ggml_v_expf (ARM optimized
// routines: n = round(x / ln2), r = x - n ln2 in two parts, degree-5
// polynomial, scaled by 2^n with VSCALEFPS; |n| > 192 saturates to inf / 0).
// As in ggml, only full 16-lane groups go through it; tails use expf, and
// the softmax sum adds each group's float sum to a double.
#include <immintrin.h>

#include <cmath>

#include "kernels/ops_impl.h"

#pragma GCC push_options
// No FMA contraction of separate mul/add intrinsics (GCC contracts by
// default): the rounding steps must be the ones written.
#pragma GCC optimize("fp-contract=off")
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq")
// GCC 12's avx512fintrin.h trips -Wuninitialized when inlined (header false
// positive, as in dot_avx512.cc).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace mneme::kernels::avx512 {
namespace {

inline __m512 Exp16(__m512 x) {
  const __m512 shift = _mm512_set1_ps(0x1.8p23f);  // round-to-integer shifter
  const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), shift);  // x*log2(e)
  const __m512 n = _mm512_sub_ps(z, shift);
  const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.7f7d1cp-20f),
                                    _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.62e4p-1f), x));
  const __m512 r2 = _mm512_mul_ps(r, r);
  const __m512 hi =
      _mm512_fmadd_ps(_mm512_set1_ps(0x1.0e4020p-7f), r, _mm512_set1_ps(0x1.573e2ep-5f));
  const __m512 mid =
      _mm512_fmadd_ps(_mm512_set1_ps(0x1.555e66p-3f), r, _mm512_set1_ps(0x1.fffdb6p-2f));
  const __m512 lo = _mm512_fmadd_ps(_mm512_set1_ps(0x1.ffffecp-1f), r, _mm512_set1_ps(1.0f));
  const __m512 poly = _mm512_fmadd_ps(_mm512_fmadd_ps(hi, r2, mid), r2, lo);
  const __m512 res = _mm512_scalef_ps(poly, n);
  const __mmask16 big = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192), _CMP_GT_OQ);
  if (big == 0) return res;
  const __mmask16 neg = _mm512_cmp_ps_mask(n, _mm512_setzero_ps(), _CMP_LE_OQ);
  const __m512 sat = _mm512_mask_blend_ps(neg, _mm512_set1_ps(INFINITY), _mm512_setzero_ps());
  return _mm512_mask_blend_ps(big, res, sat);
}

inline __m512 Silu16(__m512 x) {
  const __m512 e = Exp16(_mm512_sub_ps(_mm512_setzero_ps(), x));
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

inline __mmask16 TailMask(int64_t rem) {
  return static_cast<__mmask16>((1u << rem) - 1u);
}

}  // namespace

double SumSquares(const float* x, int64_t n) {
  __m512d acc0 = _mm512_setzero_pd(), acc1 = _mm512_setzero_pd();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __m512 sq = _mm512_mul_ps(v, v);  // float products, as ggml
    acc0 = _mm512_add_pd(acc0, _mm512_cvtps_pd(_mm512_castps512_ps256(sq)));
    acc1 = _mm512_add_pd(acc1, _mm512_cvtps_pd(_mm512_extractf32x8_ps(sq, 1)));
  }
  double sum = _mm512_reduce_add_pd(_mm512_add_pd(acc0, acc1));
  for (; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
  return sum;
}

void ScaleMul(const float* x, float scale, const float* w, float* out, int64_t n) {
  const __m512 s = _mm512_set1_ps(scale);
  int64_t i = 0;
  for (; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? 0xffff : TailMask(n - i);
    __m512 y = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), s);
    if (w != nullptr) y = _mm512_mul_ps(y, _mm512_maskz_loadu_ps(m, w + i));
    _mm512_mask_storeu_ps(out + i, m, y);
  }
}

void RopeApply(RopeMode mode, int n_dims, const float* cache, float* x, int n_heads, int head_dim) {
  const int half = n_dims / 2;
  if (mode == RopeMode::kNormal) {
    for (int h = 0; h < n_heads; ++h) {
      float* v = x + static_cast<int64_t>(h) * head_dim;
      for (int j = 0; j < n_dims; j += 16) {
        const __mmask16 m = n_dims - j >= 16 ? 0xffff : TailMask(n_dims - j);
        const __m512 xv = _mm512_maskz_loadu_ps(m, v + j);            // x0 x1 x2 x3 ...
        const __m512 cs = _mm512_maskz_loadu_ps(m, cache + j);        // c0 s0 c1 s1 ...
        const __m512 pa = _mm512_mul_ps(xv, _mm512_moveldup_ps(cs));  // x0c x1c
        const __m512 pb = _mm512_mul_ps(_mm512_permute_ps(xv, 0xb1), _mm512_movehdup_ps(cs));
        // even lanes x0c - x1s, odd lanes x1c + x0s
        const __m512 y = _mm512_mask_sub_ps(_mm512_add_ps(pa, pb), 0x5555, pa, pb);
        _mm512_mask_storeu_ps(v + j, m, y);
      }
    }
    return;
  }
  const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + static_cast<int64_t>(h) * head_dim;
    for (int i = 0; i < half; i += 16) {
      const int rem = half - i >= 16 ? 16 : half - i;
      const __mmask16 m = TailMask(rem);
      const __mmask16 m_lo = rem >= 8 ? 0xffff : TailMask(2 * rem);
      const __mmask16 m_hi = rem > 8 ? TailMask(2 * rem - 16) : 0;
      const __m512 c_lo = _mm512_maskz_loadu_ps(m_lo, cache + 2 * i);
      const __m512 c_hi = _mm512_maskz_loadu_ps(m_hi, cache + 2 * i + 16);
      const __m512 c = _mm512_permutex2var_ps(c_lo, even, c_hi);
      const __m512 s = _mm512_permutex2var_ps(c_lo, odd, c_hi);
      const __m512 x0 = _mm512_maskz_loadu_ps(m, v + i);
      const __m512 x1 = _mm512_maskz_loadu_ps(m, v + i + half);
      const __m512 y0 = _mm512_sub_ps(_mm512_mul_ps(x0, c), _mm512_mul_ps(x1, s));
      const __m512 y1 = _mm512_add_ps(_mm512_mul_ps(x0, s), _mm512_mul_ps(x1, c));
      _mm512_mask_storeu_ps(v + i, m, y0);
      _mm512_mask_storeu_ps(v + i + half, m, y1);
    }
  }
}

void ScaleMask(float* x, int64_t n, float scale, const float* mask) {
  const __m512 s = _mm512_set1_ps(scale);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? 0xffff : TailMask(n - i);
    __m512 y = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), s);
    if (mask != nullptr) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(m, mask + i));
    _mm512_mask_storeu_ps(x + i, m, y);
  }
}

float Max(const float* x, int64_t n) {
  __m512 m = _mm512_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) m = _mm512_max_ps(m, _mm512_loadu_ps(x + i));
  float r = _mm512_reduce_max_ps(m);
  for (; i < n; ++i) r = r > x[i] ? r : x[i];
  return r;
}

double ExpSubSum(const float* x, float* y, int64_t n, float max) {
  const __m512 mv = _mm512_set1_ps(max);
  double sum = 0.0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 e = Exp16(_mm512_sub_ps(_mm512_loadu_ps(x + i), mv));
    _mm512_storeu_ps(y + i, e);
    sum += static_cast<double>(_mm512_reduce_add_ps(e));
  }
  for (; i < n; ++i) {
    const float e = std::exp(x[i] - max);
    sum += static_cast<double>(e);
    y[i] = e;
  }
  return sum;
}

double ExpSubSumPadded(const float* x, float* y, int64_t n, float max) {
  const int64_t full = n & ~int64_t{15};
  double sum = full > 0 ? ExpSubSum(x, y, full, max) : 0.0;
  if (full < n) {  // the tail as a vector padded with -inf (exp gives exact zeros)
    const __mmask16 m = TailMask(n - full);
    const __m512 xv = _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), m, x + full);
    const __m512 e = Exp16(_mm512_sub_ps(xv, _mm512_set1_ps(max)));
    _mm512_mask_storeu_ps(y + full, m, e);
    sum += static_cast<double>(_mm512_reduce_add_ps(e));
  }
  return sum;
}

void Scale(float* x, int64_t n, float s) {
  const __m512 sv = _mm512_set1_ps(s);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? 0xffff : TailMask(n - i);
    _mm512_mask_storeu_ps(x + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), sv));
  }
}

void Silu(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, Silu16(_mm512_loadu_ps(x + i)));
  for (; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(-x[i]));
}

void SwiGlu(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 s = Silu16(_mm512_loadu_ps(gate + i));
    _mm512_storeu_ps(out + i, _mm512_mul_ps(s, _mm512_loadu_ps(up + i)));
  }
  for (; i < n; ++i) {
    const float g = gate[i];
    out[i] = (g / (1.0f + std::exp(-g))) * up[i];
  }
}

void Add(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = n - i >= 16 ? 0xffff : TailMask(n - i);
    const __m512 y =
        _mm512_add_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i));
    _mm512_mask_storeu_ps(out + i, m, y);
  }
}

}  // namespace mneme::kernels::avx512

#pragma GCC diagnostic pop
#pragma GCC pop_options
