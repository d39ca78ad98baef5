// AVX2 + F16C inner loops of Attention (attention_impl.h): the AVX-512 scheme
// at 8 lanes (q in registers, four key rows per pass; P·V with the output row
// in registers), one query row at a time. head_dim must be a multiple of 8 and <= 128 here; other
// shapes take the scalar loops.
#include <immintrin.h>

#include <algorithm>

#include "kernels/attention_impl.h"

#pragma GCC push_options
// No FMA contraction of separate mul/add intrinsics (GCC contracts by
// default): the rounding steps must be the ones written.
#pragma GCC optimize("fp-contract=off")
#pragma GCC target("avx2,fma,f16c")

namespace mneme::kernels::avx2 {
namespace {

constexpr int kMaxChunks = 16;

inline __m256 Load(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline __m256 Load(const float* p) {
  return _mm256_loadu_ps(p);
}

inline float Sum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

template <typename T>
void KDotsT(const TileList& t, const T* q, float* out) {
  const int hd = t.head_dim, nc = hd / 8;
  __m256 qv[kMaxChunks];
  for (int c = 0; c < nc; ++c) qv[c] = Load(q + 8 * c);
  for (int b = 0, p0 = 0; p0 < t.n_pos; ++b, p0 += t.block_size) {
    const T* k = reinterpret_cast<const T*>(t.tiles[b]);
    const int n = std::min(t.block_size, t.n_pos - p0);
    float* o = out + p0;
    int p = 0;
    for (; p + 4 <= n; p += 4) {
      const T* k0 = k + static_cast<size_t>(p) * hd;
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (int c = 0; c < nc; ++c) {
        a0 = _mm256_fmadd_ps(Load(k0 + 8 * c), qv[c], a0);
        a1 = _mm256_fmadd_ps(Load(k0 + hd + 8 * c), qv[c], a1);
        a2 = _mm256_fmadd_ps(Load(k0 + 2 * hd + 8 * c), qv[c], a2);
        a3 = _mm256_fmadd_ps(Load(k0 + 3 * hd + 8 * c), qv[c], a3);
      }
      o[p] = Sum8(a0);
      o[p + 1] = Sum8(a1);
      o[p + 2] = Sum8(a2);
      o[p + 3] = Sum8(a3);
    }
    for (; p < n; ++p) {
      const T* k0 = k + static_cast<size_t>(p) * hd;
      __m256 a0 = _mm256_setzero_ps();
      for (int c = 0; c < nc; ++c) a0 = _mm256_fmadd_ps(Load(k0 + 8 * c), qv[c], a0);
      o[p] = Sum8(a0);
    }
  }
}

template <typename T>
void PvAccumT(const TileList& t, const float* prob, float* acc) {
  const int hd = t.head_dim, nc = hd / 8;
  __m256 a[kMaxChunks];
  for (int c = 0; c < nc; ++c) a[c] = _mm256_loadu_ps(acc + 8 * c);
  for (int b = 0, p0 = 0; p0 < t.n_pos; ++b, p0 += t.block_size) {
    const T* v = reinterpret_cast<const T*>(t.tiles[b]);
    const int n = std::min(t.block_size, t.n_pos - p0);
    for (int p = 0; p < n; ++p) {
      const T* v0 = v + static_cast<size_t>(p) * hd;
      const __m256 pb = _mm256_set1_ps(prob[p0 + p]);
      for (int c = 0; c < nc; ++c) a[c] = _mm256_fmadd_ps(Load(v0 + 8 * c), pb, a[c]);
    }
  }
  for (int c = 0; c < nc; ++c) _mm256_storeu_ps(acc + 8 * c, a[c]);
}

bool Supported(int hd) {
  return hd % 8 == 0 && hd / 8 <= kMaxChunks;
}

}  // namespace

void KDots(DType type, const TileList& k, int rows, const void* const* q, float* const* out) {
  if (!Supported(k.head_dim)) return scalar::KDots(type, k, rows, q, out);
  for (int r = 0; r < rows; ++r) {
    if (type == DType::kF16) {
      KDotsT(k, static_cast<const uint16_t*>(q[r]), out[r]);
    } else {
      KDotsT(k, static_cast<const float*>(q[r]), out[r]);
    }
  }
}

void PvAccum(DType type, const TileList& v, int rows, const float* const* prob, float* const* acc) {
  if (!Supported(v.head_dim)) return scalar::PvAccum(type, v, rows, prob, acc);
  for (int r = 0; r < rows; ++r) {
    if (type == DType::kF16) {
      PvAccumT<uint16_t>(v, prob[r], acc[r]);
    } else {
      PvAccumT<float>(v, prob[r], acc[r]);
    }
  }
}

}  // namespace mneme::kernels::avx2

#pragma GCC pop_options
