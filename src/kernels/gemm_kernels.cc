// The f32 FMA register-tile micro-kernels (AVX-512 14x32, AVX2 6x16), one
// instantiation per row count (a partial panel computes only its rows).
//
// By far most prefill time is spent in these loops. Per k step the AVX-512
// kernel loads two 16-float W vectors and broadcasts 14 A scalars straight
// from memory into 28 FMAs on 28 accumulator registers (30 of 32 zmm in use);
// the AVX2 kernel does 12 FMAs on 12 accumulators (14 of 16 ymm).
#include <immintrin.h>

#include <cstring>

#include "kernels/fp16.h"
#include "kernels/gemm_impl.h"

namespace mneme::kernels {

void PackTransposedScalar(const float* rows, int64_t ld, int nrows, int nr, int64_t kc,
                          float* out) {
  for (int64_t p = 0; p < kc; ++p) {
    for (int r = 0; r < nr; ++r) out[p * nr + r] = r < nrows ? rows[r * ld + p] : 0.f;
  }
}

}  // namespace mneme::kernels

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq")
// GCC 12's avx512fintrin.h builds results from _mm512_undefined_*(), which
// trips -Wuninitialized when inlined (a header false positive).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "kernels/gemm_avx512.h"

namespace mneme::kernels {
namespace avx512 {

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

// Loads 16 weights of row `row` at column p as f32 (exactly DequantizeRow).
template <DType type>
static inline __m512 LoadW16(const uint8_t* row, int64_t p) {
  if constexpr (type == DType::kF32) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + p);
  }
  const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * p));
  if constexpr (type == DType::kF16) return _mm512_cvtph_ps(h);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

static inline float LoadW1(DType type, const uint8_t* row, int64_t p) {
  if (type == DType::kF32) return reinterpret_cast<const float*>(row)[p];
  uint16_t h;
  std::memcpy(&h, row + 2 * p, 2);
  return type == DType::kF16 ? F16ToF32(h) : Bf16ToF32(h);
}

template <DType type>
static void PackTransposedWT(const uint8_t* rows, size_t row_bytes, int nrows, int nr, int64_t k0,
                             int64_t kc, float* out) {
  const int64_t kc16 = kc - kc % 16;
  for (int rb = 0; rb < nr; rb += 16) {
    const int width = nr - rb < 16 ? nr - rb : 16;
    const __mmask16 mask = static_cast<__mmask16>((1u << width) - 1);
    for (int64_t p = 0; p < kc16; p += 16) {
      __m512 r[16];
      if (rb + 16 <= nrows) {
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) r[i] = LoadW16<type>(rows + (rb + i) * row_bytes, k0 + p);
      } else {
        for (int i = 0; i < 16; ++i) {
          r[i] = rb + i < nrows ? LoadW16<type>(rows + (rb + i) * row_bytes, k0 + p)
                                : _mm512_setzero_ps();
        }
      }
      Transpose16x16(r);
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i) _mm512_mask_storeu_ps(out + (p + i) * nr + rb, mask, r[i]);
    }
  }
  for (int64_t p = kc16; p < kc; ++p) {
    for (int r = 0; r < nr; ++r)
      out[p * nr + r] = r < nrows ? LoadW1(type, rows + r * row_bytes, k0 + p) : 0.f;
  }
}

void PackTransposedW(DType type, const uint8_t* rows, size_t row_bytes, int nrows, int nr,
                     int64_t k0, int64_t kc, float* out) {
  if (type == DType::kF32) return PackTransposedWT<DType::kF32>(rows, row_bytes, nrows, nr, k0, kc, out);
  if (type == DType::kF16) return PackTransposedWT<DType::kF16>(rows, row_bytes, nrows, nr, k0, kc, out);
  PackTransposedWT<DType::kBF16>(rows, row_bytes, nrows, nr, k0, kc, out);
}

void ConvertPacked(DType type, const uint8_t* in, int64_t n, float* out) {
  int64_t i = 0;
  if (type == DType::kF16) {
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, LoadW16<DType::kF16>(in, i));
  } else if (type == DType::kBF16) {
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, LoadW16<DType::kBF16>(in, i));
  }
  for (; i < n; ++i) out[i] = LoadW1(type, in, i);
}

// MicroKernel<R> over kPackedGroup prepacked panels at once, reading the
// weights straight from the [k][32] panels (converted in registers): each
// output element sees the same FMA sequence as in MicroKernel<R>, and the
// 2 * kPackedGroup * R independent chains hide the FMA latency at R = 1.
template <DType type, int R>
static void PackedKernel(int64_t kc, const float* a_pack, const uint8_t* w, size_t panel_bytes,
                         float* c, int64_t ldc, bool accumulate) {
  constexpr int kG = kPackedGroup;
  constexpr int64_t kElt = type == DType::kF32 ? 4 : 2;
  __m512 acc[R][kG][2];
  for (int r = 0; r < R; ++r) {
    for (int g = 0; g < kG; ++g) acc[r][g][0] = acc[r][g][1] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
#pragma GCC unroll 4
    for (int g = 0; g < kG; ++g) {
      const uint8_t* wp = w + g * panel_bytes + p * kGemmNr * kElt;
      const __m512 w0 = LoadW16<type>(wp, 0);
      const __m512 w1 = LoadW16<type>(wp, 16);
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r) {
        const __m512 a = _mm512_set1_ps(a_pack[r]);
        acc[r][g][0] = _mm512_fmadd_ps(a, w0, acc[r][g][0]);
        acc[r][g][1] = _mm512_fmadd_ps(a, w1, acc[r][g][1]);
      }
    }
    a_pack += kGemmMr;
  }
  for (int r = 0; r < R; ++r) {
    for (int g = 0; g < kG; ++g) {
      float* row = c + r * ldc + g * kGemmNr;
      if (accumulate) {
        acc[r][g][0] = _mm512_add_ps(acc[r][g][0], _mm512_loadu_ps(row));
        acc[r][g][1] = _mm512_add_ps(acc[r][g][1], _mm512_loadu_ps(row + 16));
      }
      _mm512_storeu_ps(row, acc[r][g][0]);
      _mm512_storeu_ps(row + 16, acc[r][g][1]);
    }
  }
}

PackedKernelFn GemmPackedKernel(DType type, int rows) {
  static constexpr PackedKernelFn kF32[kPackedMaxRows] = {
      PackedKernel<DType::kF32, 1>, PackedKernel<DType::kF32, 2>, PackedKernel<DType::kF32, 3>};
  static constexpr PackedKernelFn kF16[kPackedMaxRows] = {
      PackedKernel<DType::kF16, 1>, PackedKernel<DType::kF16, 2>, PackedKernel<DType::kF16, 3>};
  static constexpr PackedKernelFn kBf16[kPackedMaxRows] = {
      PackedKernel<DType::kBF16, 1>, PackedKernel<DType::kBF16, 2>, PackedKernel<DType::kBF16, 3>};
  if (type == DType::kF32) return kF32[rows - 1];
  if (type == DType::kF16) return kF16[rows - 1];
  return kBf16[rows - 1];
}

template <int R>
static void MicroKernel(int64_t kc, const float* a_pack, const float* w_pack, float* c,
                        int64_t ldc, bool accumulate) {
  __m512 acc[R][2];
#pragma GCC unroll 14
  for (int r = 0; r < R; ++r) {
    acc[r][0] = _mm512_setzero_ps();
    acc[r][1] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m512 w0 = _mm512_loadu_ps(w_pack);
    const __m512 w1 = _mm512_loadu_ps(w_pack + 16);
#pragma GCC unroll 14
    for (int r = 0; r < R; ++r) {
      const __m512 a = _mm512_set1_ps(a_pack[r]);
      acc[r][0] = _mm512_fmadd_ps(a, w0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(a, w1, acc[r][1]);
    }
    a_pack += kGemmMr;
    w_pack += kGemmNr;
  }
#pragma GCC unroll 14
  for (int r = 0; r < R; ++r) {
    float* row = c + r * ldc;
    if (accumulate) {
      acc[r][0] = _mm512_add_ps(acc[r][0], _mm512_loadu_ps(row));
      acc[r][1] = _mm512_add_ps(acc[r][1], _mm512_loadu_ps(row + 16));
    }
    _mm512_storeu_ps(row, acc[r][0]);
    _mm512_storeu_ps(row + 16, acc[r][1]);
  }
}

MicroKernelFn GemmMicroKernel(int rows) {
  static constexpr MicroKernelFn kTable[kGemmMr] = {
      MicroKernel<1>, MicroKernel<2>,  MicroKernel<3>,  MicroKernel<4>,  MicroKernel<5>,
      MicroKernel<6>, MicroKernel<7>,  MicroKernel<8>,  MicroKernel<9>,  MicroKernel<10>,
      MicroKernel<11>, MicroKernel<12>, MicroKernel<13>, MicroKernel<14>};
  return kTable[rows - 1];
}

}  // namespace avx512

#pragma GCC diagnostic pop
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")

namespace avx2 {

template <int R>
static void MicroKernel(int64_t kc, const float* a_pack, const float* w_pack, float* c,
                        int64_t ldc, bool accumulate) {
  __m256 acc[R][2];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    acc[r][0] = _mm256_setzero_ps();
    acc[r][1] = _mm256_setzero_ps();
  }
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 w0 = _mm256_loadu_ps(w_pack);
    const __m256 w1 = _mm256_loadu_ps(w_pack + 8);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 a = _mm256_broadcast_ss(a_pack + r);
      acc[r][0] = _mm256_fmadd_ps(a, w0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(a, w1, acc[r][1]);
    }
    a_pack += kGemmMr;
    w_pack += kGemmNr;
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    float* row = c + r * ldc;
    if (accumulate) {
      acc[r][0] = _mm256_add_ps(acc[r][0], _mm256_loadu_ps(row));
      acc[r][1] = _mm256_add_ps(acc[r][1], _mm256_loadu_ps(row + 8));
    }
    _mm256_storeu_ps(row, acc[r][0]);
    _mm256_storeu_ps(row + 8, acc[r][1]);
  }
}

MicroKernelFn GemmMicroKernel(int rows) {
  static constexpr MicroKernelFn kTable[kGemmMr] = {MicroKernel<1>, MicroKernel<2>, MicroKernel<3>,
                                                    MicroKernel<4>, MicroKernel<5>, MicroKernel<6>};
  return kTable[rows - 1];
}

}  // namespace avx2

#pragma GCC pop_options

}  // namespace mneme::kernels
