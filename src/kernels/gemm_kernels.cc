// The f32 FMA register-tile micro-kernels (AVX-512 14x32, AVX2 6x16).
//
// By far most prefill time is spent in these loops. Per k step the AVX-512
// kernel loads two 16-float W vectors and broadcasts 14 A scalars straight
// from memory into 28 FMAs on 28 accumulator registers (30 of 32 zmm in use);
// the AVX2 kernel does 12 FMAs on 12 accumulators (14 of 16 ymm).
#include <immintrin.h>

#include "kernels/fp16.h"
#include "kernels/gemm_impl.h"

namespace mneme::kernels {

void PackTransposedScalar(const float* rows, int64_t ld, int nrows, int nr, int64_t kc,
                          float* out) {
  for (int64_t p = 0; p < kc; ++p) {
    for (int r = 0; r < nr; ++r) out[p * nr + r] = r < nrows ? rows[r * ld + p] : 0.f;
  }
}

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq")
// GCC 12's avx512fintrin.h builds results from _mm512_undefined_*(), which
// trips -Wuninitialized when inlined (a header false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace avx512 {

// In-register transpose of a 16 x 16 float block: r[i] = row i on input,
// column i on output (unpack, 4-lane shuffle, then two 128-bit lane shuffles).
static inline void Transpose16x16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  for (int g = 0; g < 4; ++g) {  // u[4g + c]: lane L = column 4L + c of rows 4g..4g+3
    u[4 * g + 0] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    u[4 * g + 1] = _mm512_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    u[4 * g + 2] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    u[4 * g + 3] = _mm512_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  __m512 v[16];
  for (int c = 0; c < 4; ++c) {
    v[c] = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88);
    v[4 + c] = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xdd);
    v[8 + c] = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
    v[12 + c] = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xdd);
  }
  for (int x = 0; x < 8; ++x) {
    r[x] = _mm512_shuffle_f32x4(v[x], v[8 + x], 0x88);
    r[8 + x] = _mm512_shuffle_f32x4(v[x], v[8 + x], 0xdd);
  }
}

// Round-trips 16 floats through f16 / bf16 exactly as F32ToF16 / F32ToBf16.
static inline __m512 RoundVec(__m512 x, PackRound round) {
  if (round == PackRound::kF16)
    return _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
  if (round == PackRound::kNone) return x;
  const __m512i u = _mm512_castps_si512(x);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lsb));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  const __m512i r = _mm512_mask_or_epi32(rounded, nan, u, _mm512_set1_epi32(0x00400000));
  return _mm512_castsi512_ps(_mm512_and_si512(r, _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
}

static inline float RoundScalar(float x, PackRound round) {
  if (round == PackRound::kF16) return F16ToF32(F32ToF16(x));
  if (round == PackRound::kBf16) return Bf16ToF32(F32ToBf16(x));
  return x;
}

void PackTransposed(const float* rows, int64_t ld, int nrows, int nr, int64_t kc, float* out,
                    PackRound round) {
  const int64_t kc16 = kc - kc % 16;
  for (int rb = 0; rb < nr; rb += 16) {
    const int width = nr - rb < 16 ? nr - rb : 16;
    const __mmask16 mask = static_cast<__mmask16>((1u << width) - 1);
    for (int64_t p = 0; p < kc16; p += 16) {
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) {
        r[i] = rb + i < nrows ? RoundVec(_mm512_loadu_ps(rows + (rb + i) * ld + p), round)
                              : _mm512_setzero_ps();
      }
      Transpose16x16(r);
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) _mm512_mask_storeu_ps(out + (p + i) * nr + rb, mask, r[i]);
    }
  }
  if (kc16 < kc) {
    for (int64_t p = kc16; p < kc; ++p) {
      for (int r = 0; r < nr; ++r)
        out[p * nr + r] = r < nrows ? RoundScalar(rows[r * ld + p], round) : 0.f;
    }
  }
}

void GemmMicroKernel(int64_t kc, const float* a_pack, const float* w_pack, float* c, int64_t ldc,
                     bool accumulate) {
  __m512 acc[kGemmMr][2];
#pragma GCC unroll 14
  for (int r = 0; r < kGemmMr; ++r) {
    acc[r][0] = _mm512_setzero_ps();
    acc[r][1] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 w0 = _mm512_loadu_ps(w_pack);
    const __m512 w1 = _mm512_loadu_ps(w_pack + 16);
#pragma GCC unroll 14
    for (int r = 0; r < kGemmMr; ++r) {
      const __m512 a = _mm512_set1_ps(a_pack[r]);
      acc[r][0] = _mm512_fmadd_ps(a, w0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(a, w1, acc[r][1]);
    }
    a_pack += kGemmMr;
    w_pack += kGemmNr;
  }
#pragma GCC unroll 14
  for (int r = 0; r < kGemmMr; ++r) {
    float* row = c + r * ldc;
    if (accumulate) {
      acc[r][0] = _mm512_add_ps(acc[r][0], _mm512_loadu_ps(row));
      acc[r][1] = _mm512_add_ps(acc[r][1], _mm512_loadu_ps(row + 16));
    }
    _mm512_storeu_ps(row, acc[r][0]);
    _mm512_storeu_ps(row + 16, acc[r][1]);
  }
}

}  // namespace avx512

#pragma GCC diagnostic pop
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace avx2 {

void GemmMicroKernel(int64_t kc, const float* a_pack, const float* w_pack, float* c, int64_t ldc,
                     bool accumulate) {
  __m256 acc[kGemmMr][2];
#pragma GCC unroll 6
  for (int r = 0; r < kGemmMr; ++r) {
    acc[r][0] = _mm256_setzero_ps();
    acc[r][1] = _mm256_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 w0 = _mm256_loadu_ps(w_pack);
    const __m256 w1 = _mm256_loadu_ps(w_pack + 8);
#pragma GCC unroll 6
    for (int r = 0; r < kGemmMr; ++r) {
      const __m256 a = _mm256_broadcast_ss(a_pack + r);
      acc[r][0] = _mm256_fmadd_ps(a, w0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(a, w1, acc[r][1]);
    }
    a_pack += kGemmMr;
    w_pack += kGemmNr;
  }
#pragma GCC unroll 6
  for (int r = 0; r < kGemmMr; ++r) {
    float* row = c + r * ldc;
    if (accumulate) {
      acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_loadu_ps(row));
      acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_loadu_ps(row + 8));
    }
    _mm256_storeu_ps(row, acc[r][0]);
    _mm256_storeu_ps(row + 8, acc[r][1]);
  }
}

}  // namespace avx2

#pragma GCC pop_options

}  // namespace mneme::kernels
