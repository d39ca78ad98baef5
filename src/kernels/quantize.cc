// Scalar (de)quantization: the bit-level definition of each block format.
#include "kernels/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/fp16.h"
#include "util/check.h"

namespace mneme::kernels {

void DequantizeRowQ4_0(const BlockQ4_0* x, float* y, int64_t n) {
  CHECK(n % kQK4_0 == 0);
  for (int64_t i = 0; i < n / kQK4_0; ++i) {
    const float d = F16ToF32(x[i].d);
    for (int j = 0; j < kQK4_0 / 2; ++j) {
      y[j] = static_cast<float>((x[i].qs[j] & 0x0F) - 8) * d;
      y[j + kQK4_0 / 2] = static_cast<float>((x[i].qs[j] >> 4) - 8) * d;
    }
    y += kQK4_0;
  }
}

void DequantizeRowQ8_0(const BlockQ8_0* x, float* y, int64_t n) {
  CHECK(n % kQK8_0 == 0);
  for (int64_t i = 0; i < n / kQK8_0; ++i) {
    const float d = F16ToF32(x[i].d);
    for (int j = 0; j < kQK8_0; ++j) *y++ = static_cast<float>(x[i].qs[j]) * d;
  }
}

void DequantizeRowQ4K(const BlockQ4K* x, float* y, int64_t n) {
  CHECK(n % kQK_K == 0);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = F16ToF32(x[i].d);
    const float dmin = F16ToF32(x[i].dmin);
    const uint8_t* q = x[i].qs;
    for (int c = 0; c < 4; ++c, q += 32) {  // 64-element chunks
      uint8_t sc, m;
      GetScaleMinK4(2 * c, x[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      GetScaleMinK4(2 * c + 1, x[i].scales, &sc, &m);
      const float d2 = d * sc, m2 = dmin * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
    }
  }
}

void DequantizeRowQ5K(const BlockQ5K* x, float* y, int64_t n) {
  CHECK(n % kQK_K == 0);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = F16ToF32(x[i].d);
    const float dmin = F16ToF32(x[i].dmin);
    const uint8_t* ql = x[i].qs;
    const uint8_t* qh = x[i].qh;
    uint8_t u1 = 1, u2 = 2;
    for (int c = 0; c < 4; ++c, ql += 32, u1 <<= 2, u2 <<= 2) {
      uint8_t sc, m;
      GetScaleMinK4(2 * c, x[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = dmin * m;
      GetScaleMinK4(2 * c + 1, x[i].scales, &sc, &m);
      const float d2 = d * sc, m2 = dmin * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * ((ql[l] & 0xF) + ((qh[l] & u1) ? 16 : 0)) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * ((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
    }
  }
}

// Q6_K layout, per 128-element half h (ql += 64, qh += 32, scales += 8):
//   element 128h + 32g + l (g = 0..3, l = 0..31) has
//   low 4 bits:  ql[l + 32 * (g % 2)], low nibble for g < 2, high for g >= 2;
//   high 2 bits: (qh[l] >> 2g) & 3;   scale: scales[e / 16].
void DequantizeRowQ6K(const BlockQ6K* x, float* y, int64_t n) {
  CHECK(n % kQK_K == 0);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    const float d = F16ToF32(x[i].d);
    const uint8_t* ql = x[i].ql;
    const uint8_t* qh = x[i].qh;
    const int8_t* sc = x[i].scales;
    for (int h = 0; h < 2; ++h, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * sc[is] * q1;
        y[l + 32] = d * sc[is + 2] * q2;
        y[l + 64] = d * sc[is + 4] * q3;
        y[l + 96] = d * sc[is + 6] * q4;
      }
    }
  }
}

void DequantizeRowQ8K(const BlockQ8K* x, float* y, int64_t n) {
  CHECK(n % kQK_K == 0);
  for (int64_t i = 0; i < n / kQK_K; ++i) {
    for (int j = 0; j < kQK_K; ++j) *y++ = x[i].d * x[i].qs[j];
  }
}

void DequantizeRow(DType type, const void* x, float* y, int64_t n) {
  switch (type) {
    case DType::kF32: std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::kF16: F16ToF32Row(static_cast<const uint16_t*>(x), y, n); return;
    case DType::kBF16: Bf16ToF32Row(static_cast<const uint16_t*>(x), y, n); return;
    case DType::kQ4_0: DequantizeRowQ4_0(static_cast<const BlockQ4_0*>(x), y, n); return;
    case DType::kQ8_0: DequantizeRowQ8_0(static_cast<const BlockQ8_0*>(x), y, n); return;
    case DType::kQ4_K: DequantizeRowQ4K(static_cast<const BlockQ4K*>(x), y, n); return;
    case DType::kQ5_K: DequantizeRowQ5K(static_cast<const BlockQ5K*>(x), y, n); return;
    case DType::kQ6_K: DequantizeRowQ6K(static_cast<const BlockQ6K*>(x), y, n); return;
    case DType::kQ8_K: DequantizeRowQ8K(static_cast<const BlockQ8K*>(x), y, n); return;
  }
  CHECK(false) << "unsupported type " << static_cast<uint32_t>(type);
}

// ---- quantization ----------------------------------------------------------

void QuantizeRowQ4_0(const float* x, BlockQ4_0* y, int64_t n) {
  CHECK(n % kQK4_0 == 0);
  for (int64_t i = 0; i < n / kQK4_0; ++i, x += kQK4_0) {
    float amax = 0.f, max = 0.f;  // max: the signed value of largest magnitude
    for (int j = 0; j < kQK4_0; ++j) {
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    const float d = max / -8.f;
    const float id = d != 0.f ? 1.f / d : 0.f;
    y[i].d = F32ToF16(d);
    for (int j = 0; j < kQK4_0 / 2; ++j) {
      const int q0 = std::min(15, static_cast<int>(static_cast<int8_t>(x[j] * id + 8.5f)));
      const int q1 = std::min(15, static_cast<int>(static_cast<int8_t>(x[j + 16] * id + 8.5f)));
      y[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void QuantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n) {
  CHECK(n % kQK8_0 == 0);
  for (int64_t i = 0; i < n / kQK8_0; ++i, x += kQK8_0) {
    float amax = 0.f;
    for (int j = 0; j < kQK8_0; ++j) amax = std::max(amax, std::fabs(x[j]));
    y[i].d = F32ToF16(amax / 127.f);
    const float id = amax != 0.f ? 127.f / amax : 0.f;
    for (int j = 0; j < kQK8_0; ++j) y[i].qs[j] = static_cast<int8_t>(NearestInt(x[j] * id));
  }
}

void QuantizeRowQ8K(const float* x, BlockQ8K* y, int64_t n) {
  CHECK(n % kQK_K == 0);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    float amax = 0.f, max = 0.f;
    for (int j = 0; j < kQK_K; ++j) {
      if (std::fabs(x[j]) > amax) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    }
    if (amax == 0.f) {
      std::memset(&y[i], 0, sizeof(y[i]));
      continue;
    }
    const float iscale = -127.f / max;
    for (int j = 0; j < kQK_K; ++j) {
      y[i].qs[j] = static_cast<int8_t>(std::min(127, NearestInt(iscale * x[j])));
    }
    for (int j = 0; j < kQK_K / 16; ++j) {
      int sum = 0;
      for (int l = 0; l < 16; ++l) sum += y[i].qs[16 * j + l];
      y[i].bsums[j] = static_cast<int16_t>(sum);
    }
    y[i].d = 1.f / iscale;
  }
}

}  // namespace mneme::kernels
