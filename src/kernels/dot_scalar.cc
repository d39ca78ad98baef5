// Scalar reference dot products: the definition the SIMD kernels are tested
// against. Float rows accumulate in double (a tighter reference than any
// SIMD order); quantized rows sum integers exactly per block and apply the
// f32 scales per block in the order ggml's reference does.
#include <cstdlib>

#include "kernels/dot_impl.h"
#include "kernels/fp16.h"
#include "kernels/quant_types.h"

namespace mneme::kernels::scalar {

float DotF32(int64_t n, const float* w, const float* a) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(w[i]) * a[i];
  return static_cast<float>(sum);
}

float DotF16(int64_t n, const uint16_t* w, const uint16_t* a) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(F16ToF32(w[i])) * F16ToF32(a[i]);
  return static_cast<float>(sum);
}

float DotBf16(int64_t n, const uint16_t* w, const uint16_t* a) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(Bf16ToF32(w[i])) * Bf16ToF32(a[i]);
  return static_cast<float>(sum);
}

float DotQ8_0(int64_t n, const BlockQ8_0* w, const BlockQ8_0* a) {
  float sum = 0.f;
  for (int64_t b = 0; b < n / kQK8_0; ++b) {
    int isum = 0;
    for (int j = 0; j < kQK8_0; ++j) isum += w[b].qs[j] * a[b].qs[j];
    sum += static_cast<float>(isum) * (F16ToF32(w[b].d) * F16ToF32(a[b].d));
  }
  return sum;
}

float DotQ4_0(int64_t n, const BlockQ4_0* w, const BlockQ8_0* a) {
  float sum = 0.f;
  for (int64_t b = 0; b < n / kQK4_0; ++b) {
    int isum = 0;
    for (int j = 0; j < kQK4_0 / 2; ++j) {
      isum += ((w[b].qs[j] & 0x0F) - 8) * a[b].qs[j];
      isum += ((w[b].qs[j] >> 4) - 8) * a[b].qs[j + 16];
    }
    sum += static_cast<float>(isum) * (F16ToF32(w[b].d) * F16ToF32(a[b].d));
  }
  return sum;
}

namespace {

// Q4_K and Q5_K share everything but the 5th bit: level of element e.
template <typename Block>
int KLevel(const Block& x, int e);

template <>
int KLevel<BlockQ4K>(const BlockQ4K& x, int e) {
  const uint8_t byte = x.qs[32 * (e / 64) + e % 32];
  return (e % 64) < 32 ? (byte & 0xF) : (byte >> 4);
}

template <>
int KLevel<BlockQ5K>(const BlockQ5K& x, int e) {
  const uint8_t byte = x.qs[32 * (e / 64) + e % 32];
  const int lo = (e % 64) < 32 ? (byte & 0xF) : (byte >> 4);
  return lo | (((x.qh[e % 32] >> (e / 32)) & 1) << 4);
}

// sum over blocks of d * sum_j sc_j * (q . q8)_j - dmin * sum_j m_j * sum(q8)_j
template <typename Block>
float DotK4Style(int64_t n, const Block* w, const BlockQ8K* a) {
  float sum = 0.f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    int isum = 0, msum = 0;
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      GetScaleMinK4(j, w[b].scales, &sc, &m);
      int sub = 0;
      for (int l = 0; l < 32; ++l) sub += KLevel(w[b], 32 * j + l) * a[b].qs[32 * j + l];
      isum += sc * sub;
      msum += m * (a[b].bsums[2 * j] + a[b].bsums[2 * j + 1]);
    }
    const float d = F16ToF32(w[b].d) * a[b].d;
    const float dmin = F16ToF32(w[b].dmin) * a[b].d;
    sum += d * static_cast<float>(isum) - dmin * static_cast<float>(msum);
  }
  return sum;
}

}  // namespace

float DotQ4K(int64_t n, const BlockQ4K* w, const BlockQ8K* a) {
  return DotK4Style(n, w, a);
}
float DotQ5K(int64_t n, const BlockQ5K* w, const BlockQ8K* a) {
  return DotK4Style(n, w, a);
}

float DotQ6K(int64_t n, const BlockQ6K* w, const BlockQ8K* a) {
  float sum = 0.f;
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const BlockQ6K& x = w[b];
    int isum = 0;
    for (int j = 0; j < 16; ++j) {
      int sub = 0;
      for (int l = 0; l < 16; ++l) {
        const int e = 16 * j + l;
        const int h = e / 128, g = (e % 128) / 32, k = e % 32;
        const uint8_t low_byte = x.ql[64 * h + 32 * (g % 2) + k];
        const int lo = g < 2 ? (low_byte & 0xF) : (low_byte >> 4);
        const int hi = (x.qh[32 * h + k] >> (2 * g)) & 3;
        sub += ((lo | (hi << 4)) - 32) * a[b].qs[e];
      }
      isum += x.scales[j] * sub;
    }
    sum += F16ToF32(x.d) * a[b].d * static_cast<float>(isum);
  }
  return sum;
}

}  // namespace mneme::kernels::scalar
