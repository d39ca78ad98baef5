// Internal: AVX-512 register helpers shared by the Gemm packing routines.
// Include only inside a `#pragma GCC target("...avx512f...")` region (as
// simd_avx2.h), after <immintrin.h>.
#pragma once

namespace mneme::kernels::avx512 {

// In-register transpose of a 16 x 16 float block: r[i] = row i on input,
// column i on output (unpack, 4-lane shuffle, then two 128-bit lane shuffles).
inline void Transpose16x16(__m512 r[16]) {
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

// The same transpose for 32-bit integers (4-byte groups of weight levels).
inline void Transpose16x16(__m512i r[16]) {
  __m512 f[16];
  for (int i = 0; i < 16; ++i) f[i] = _mm512_castsi512_ps(r[i]);
  Transpose16x16(f);
  for (int i = 0; i < 16; ++i) r[i] = _mm512_castps_si512(f[i]);
}

}  // namespace mneme::kernels::avx512
