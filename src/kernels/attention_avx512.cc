// AVX-512 inner loops of Attention (attention_impl.h): q (as f32 lanes) stays
// in registers while the keys of all blocks stream past, four positions at a
// time (independent FMA chains, one shared reduction tree); P·V keeps the
// output row in registers (two accumulator sets) and adds prob[p] * V[p] per
// position. Kernels are instantiated per head_dim / 16 so nothing spills. F16 rows are widened with
// VCVTPH2PS, so every product is exact and only the f32 summation order differs from the scalar
// level. A head_dim that is not a multiple of 16 uses masked loads.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <utility>

#include "kernels/attention_impl.h"

#pragma GCC push_options
// No FMA contraction of separate mul/add intrinsics (GCC contracts by
// default): the rounding steps must be the ones written.
#pragma GCC optimize("fp-contract=off")
#pragma GCC target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq")
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace mneme::kernels::avx512 {
namespace {

constexpr int kMaxChunks = 16;  // head_dim <= 256 in registers; larger loops in pieces

inline __m512 Load(const uint16_t* p, __mmask16 m) {
  return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}
inline __m512 Load(const float* p, __mmask16 m) {
  return _mm512_maskz_loadu_ps(m, p);
}

inline __mmask16 ChunkMask(int hd, int c) {
  const int rem = hd - 16 * c;
  return rem >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << rem) - 1u);
}

// The four horizontal sums {sum(a0), sum(a1), sum(a2), sum(a3)}: halves
// folded pairwise across vectors, so 4 reductions cost ~9 shuffles and adds.
inline __m128 Reduce4(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
  // [a0.lo256 + a0.hi256 | a1.lo256 + a1.hi256]
  const __m512 x =
      _mm512_add_ps(_mm512_shuffle_f32x4(a0, a1, 0x44), _mm512_shuffle_f32x4(a0, a1, 0xee));
  const __m512 y =
      _mm512_add_ps(_mm512_shuffle_f32x4(a2, a3, 0x44), _mm512_shuffle_f32x4(a2, a3, 0xee));
  // 128-bit lane i holds 4 partial sums of a_i
  const __m512 z =
      _mm512_add_ps(_mm512_shuffle_f32x4(x, y, 0x88), _mm512_shuffle_f32x4(x, y, 0xdd));
  const __m512 w = _mm512_add_ps(z, _mm512_permute_ps(z, 0x4e));
  const __m512 t = _mm512_add_ps(w, _mm512_permute_ps(w, 0xb1));  // every element: lane total
  return _mm512_castps512_ps128(
      _mm512_permutexvar_ps(_mm512_set_epi32(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 12, 8, 4, 0), t));
}

// Software prefetch of the next block's tile: tiles of different blocks are
// scattered through the pool, so the hardware stream prefetchers lose the
// trail at every block boundary.
inline void PrefetchTile(const TileList& t, int b, size_t row_bytes) {
  const int next_p0 = (b + 1) * t.block_size;
  if (next_p0 >= t.n_pos) return;
  const char* next = reinterpret_cast<const char*>(t.tiles[b + 1]);
  const size_t bytes = static_cast<size_t>(std::min(t.block_size, t.n_pos - next_p0)) * row_bytes;
  for (size_t off = 0; off < bytes; off += 64) _mm_prefetch(next + off, _MM_HINT_T0);
}

// Scores of R query rows over all positions, head dims [d0, d0 + 16 NC),
// added into out[r][p] (preset by the caller). NC and R are compile-time so q
// and the accumulators live in registers. Each K chunk is loaded once for
// the R rows. Every (row, position) score is the same FMA chain over the
// chunks and the same Reduce4 tree whatever R and wherever p falls, so a
// score depends only on q and K_p (prefill chunking never changes bits).
template <typename T, int NC, int R>
void KDotsPart(const TileList& t, int d0, const T* const* q, float* const* out) {
  constexpr int kPos = R == 1 ? 4 : (R == 2 ? 2 : 1);  // positions per step
  const int hd = t.head_dim;
  __m512 qv[R][NC];
  __mmask16 mk[NC];
#pragma GCC unroll 16
  for (int c = 0; c < NC; ++c) mk[c] = ChunkMask(hd, d0 / 16 + c);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) qv[r][c] = Load(q[r] + d0 + 16 * c, mk[c]);
  }
  for (int b = 0, p0 = 0; p0 < t.n_pos; ++b, p0 += t.block_size) {
    if (d0 == 0) PrefetchTile(t, b, sizeof(T) * hd);
    const T* k = reinterpret_cast<const T*>(t.tiles[b]) + d0;
    const int n = std::min(t.block_size, t.n_pos - p0);
    int p = 0;
    for (; p + kPos <= n; p += kPos) {
      __m512 acc[R][kPos];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
        for (int j = 0; j < kPos; ++j) acc[r][j] = _mm512_setzero_ps();
      }
#pragma GCC unroll 16
      for (int c = 0; c < NC; ++c) {
#pragma GCC unroll 4
        for (int j = 0; j < kPos; ++j) {
          const __m512 kc = Load(k + static_cast<size_t>(p + j) * hd + 16 * c, mk[c]);
#pragma GCC unroll 4
          for (int r = 0; r < R; ++r) acc[r][j] = _mm512_fmadd_ps(kc, qv[r][c], acc[r][j]);
        }
      }
      const int pp = p0 + p;
      if constexpr (R == 1) {
        float* o = out[0] + pp;
        _mm_storeu_ps(
            o, _mm_add_ps(_mm_loadu_ps(o), Reduce4(acc[0][0], acc[0][1], acc[0][2], acc[0][3])));
      } else if constexpr (R == 2) {
        alignas(16) float sums[4];
        _mm_store_ps(sums, Reduce4(acc[0][0], acc[0][1], acc[1][0], acc[1][1]));
        out[0][pp] += sums[0];
        out[0][pp + 1] += sums[1];
        out[1][pp] += sums[2];
        out[1][pp + 1] += sums[3];
      } else {
        alignas(16) float sums[4];
        _mm_store_ps(sums, Reduce4(acc[0][0], acc[1][0], acc[2][0], acc[R - 1][0]));
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) out[r][pp] += sums[r];
      }
    }
    for (; p < n; ++p) {
      const T* k0 = k + static_cast<size_t>(p) * hd;
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        __m512 a0 = _mm512_setzero_ps();
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) a0 = _mm512_fmadd_ps(Load(k0 + 16 * c, mk[c]), qv[r][c], a0);
        out[r][p0 + p] += _mm_cvtss_f32(Reduce4(a0, a0, a0, a0));
      }
    }
  }
}

// acc[r][d0, d0 + 16 NC) += sum_p prob[r][p] * V_p for R rows; each V chunk
// is widened once for the R rows. One FMA chain per (row, chunk) in position
// order, whatever R, so a row's output does not depend on its neighbours.
template <typename T, int NC, int R>
void PvPart(const TileList& t, int d0, const float* const* prob, float* const* acc) {
  const int hd = t.head_dim;
  __m512 a[R][NC];
  __mmask16 mk[NC];
#pragma GCC unroll 16
  for (int c = 0; c < NC; ++c) mk[c] = ChunkMask(hd, d0 / 16 + c);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) a[r][c] = _mm512_maskz_loadu_ps(mk[c], acc[r] + d0 + 16 * c);
  }
  for (int blk = 0, p0 = 0; p0 < t.n_pos; ++blk, p0 += t.block_size) {
    if (d0 == 0) PrefetchTile(t, blk, sizeof(T) * hd);
    const T* v = reinterpret_cast<const T*>(t.tiles[blk]) + d0;
    const int n = std::min(t.block_size, t.n_pos - p0);
    for (int p = 0; p < n; ++p) {
      const T* v0 = v + static_cast<size_t>(p) * hd;
      __m512 pr[R];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) pr[r] = _mm512_set1_ps(prob[r][p0 + p]);
#pragma GCC unroll 16
      for (int c = 0; c < NC; ++c) {
        const __m512 vc = Load(v0 + 16 * c, mk[c]);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) a[r][c] = _mm512_fmadd_ps(vc, pr[r], a[r][c]);
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) _mm512_mask_storeu_ps(acc[r] + d0 + 16 * c, mk[c], a[r][c]);
  }
}

// Rows handled together for NC chunks: as many as keep q (or the
// accumulators) within 16 registers, at most 4.
constexpr int RowsFor(int nc) {
  return nc >= 16 ? 1 : (16 / nc >= 4 ? 4 : 16 / nc);
}

template <typename T, int NC>
void KDotsN(const TileList& t, int d0, int rows, const T* const* q, float* const* out) {
  constexpr int kR = RowsFor(NC);
  int r = 0;
  for (; r + kR <= rows; r += kR) KDotsPart<T, NC, kR>(t, d0, q + r, out + r);
  for (; r < rows; ++r) KDotsPart<T, NC, 1>(t, d0, q + r, out + r);
}

template <typename T, int NC>
void PvN(const TileList& t, int d0, int rows, const float* const* prob, float* const* acc) {
  constexpr int kR = RowsFor(NC);
  int r = 0;
  for (; r + kR <= rows; r += kR) PvPart<T, NC, kR>(t, d0, prob + r, acc + r);
  for (; r < rows; ++r) PvPart<T, NC, 1>(t, d0, prob + r, acc + r);
}

template <typename T>
using KDotsFn = void (*)(const TileList&, int, int, const T* const*, float* const*);
template <typename T>
using PvFn = void (*)(const TileList&, int, int, const float* const*, float* const*);

// Entry i handles i + 1 chunks of 16 dims.
template <typename T, size_t... I>
constexpr std::array<KDotsFn<T>, sizeof...(I)> KDotsTable(std::index_sequence<I...>) {
  return {&KDotsN<T, static_cast<int>(I) + 1>...};
}
template <typename T, size_t... I>
constexpr std::array<PvFn<T>, sizeof...(I)> PvTable(std::index_sequence<I...>) {
  return {&PvN<T, static_cast<int>(I) + 1>...};
}

template <typename T>
void KDotsT(const TileList& t, int rows, const void* const* q, float* const* out) {
  static constexpr auto kTable = KDotsTable<T>(std::make_index_sequence<kMaxChunks>());
  const T* const* qt = reinterpret_cast<const T* const*>(q);
  const int chunks = (t.head_dim + 15) / 16;
  for (int c0 = 0; c0 < chunks; c0 += kMaxChunks) {
    kTable[std::min(kMaxChunks, chunks - c0) - 1](t, 16 * c0, rows, qt, out);
  }
}

template <typename T>
void PvT(const TileList& t, int rows, const float* const* prob, float* const* acc) {
  static constexpr auto kTable = PvTable<T>(std::make_index_sequence<kMaxChunks>());
  const int chunks = (t.head_dim + 15) / 16;
  for (int c0 = 0; c0 < chunks; c0 += kMaxChunks) {
    kTable[std::min(kMaxChunks, chunks - c0) - 1](t, 16 * c0, rows, prob, acc);
  }
}

}  // namespace

void KDots(DType type, const TileList& k, int rows, const void* const* q, float* const* out) {
  for (int r = 0; r < rows; ++r) std::fill(out[r], out[r] + k.n_pos, 0.f);
  if (type == DType::kF16) {
    KDotsT<uint16_t>(k, rows, q, out);
  } else {
    KDotsT<float>(k, rows, q, out);
  }
}

void PvAccum(DType type, const TileList& v, int rows, const float* const* prob, float* const* acc) {
  if (type == DType::kF16) {
    PvT<uint16_t>(v, rows, prob, acc);
  } else {
    PvT<float>(v, rows, prob, acc);
  }
}

}  // namespace mneme::kernels::avx512

#pragma GCC diagnostic pop
#pragma GCC pop_options
