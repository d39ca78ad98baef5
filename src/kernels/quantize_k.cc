// Round-to-nearest K-quant weight quantizers (for synthetic test models) and
// the type-generic QuantizeRow.
//
// These are deliberately simple: per sub-block scale (and min) from the
// range, 6-bit (Q4_K/Q5_K) or int8 (Q6_K) super-block quantization of those
// scales, then each value rounded to the nearest level of its final,
// f16-rounded scale. ggml's make_qkx2_quants search gives lower error but the
// format is the same, so our dequantizers and dots read either.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/fp16.h"
#include "kernels/quantize.h"
#include "util/check.h"

namespace mneme::kernels {
namespace {

// Packs 8 six-bit scales and mins the way GetScaleMinK4 unpacks them.
void PackScalesK4(const uint8_t* ls, const uint8_t* lm, uint8_t* scales) {
  std::memset(scales, 0, kKScaleSize);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      scales[j] = ls[j];
      scales[j + 4] = lm[j];
    } else {
      scales[j + 4] = static_cast<uint8_t>((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
      scales[j - 4] |= static_cast<uint8_t>((ls[j] >> 4) << 6);
      scales[j] |= static_cast<uint8_t>((lm[j] >> 4) << 6);
    }
  }
}

// Shared by Q4_K (nmax 15) and Q5_K (nmax 31): fills d, dmin, scales and the
// integer levels L[256] in [0, nmax] of one super-block.
void QuantizeSuperBlockK(const float* x, int nmax, uint16_t* d_out, uint16_t* dmin_out,
                         uint8_t* scales, uint8_t* levels) {
  float sub_scale[8], sub_min[8];
  float max_scale = 0.f, max_min = 0.f;
  for (int j = 0; j < 8; ++j) {
    const float* v = x + 32 * j;
    float lo = v[0], hi = v[0];
    for (int l = 1; l < 32; ++l) {
      lo = std::min(lo, v[l]);
      hi = std::max(hi, v[l]);
    }
    lo = std::min(lo, 0.f);  // the min term only ever shifts down
    sub_scale[j] = (hi - lo) / static_cast<float>(nmax);
    sub_min[j] = -lo;
    max_scale = std::max(max_scale, sub_scale[j]);
    max_min = std::max(max_min, sub_min[j]);
  }
  uint8_t ls[8], lm[8];
  const float inv_scale = max_scale > 0.f ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0.f ? 63.f / max_min : 0.f;
  for (int j = 0; j < 8; ++j) {
    ls[j] = static_cast<uint8_t>(std::min(63, NearestInt(inv_scale * sub_scale[j])));
    lm[j] = static_cast<uint8_t>(std::min(63, NearestInt(inv_min * sub_min[j])));
  }
  *d_out = F32ToF16(max_scale / 63.f);
  *dmin_out = F32ToF16(max_min / 63.f);
  PackScalesK4(ls, lm, scales);
  const float d = F16ToF32(*d_out), dmin = F16ToF32(*dmin_out);
  for (int j = 0; j < 8; ++j) {
    const float dl = d * ls[j], ml = dmin * lm[j];
    for (int l = 0; l < 32; ++l) {
      const int q = dl > 0.f ? NearestInt((x[32 * j + l] + ml) / dl) : 0;
      levels[32 * j + l] = static_cast<uint8_t>(std::clamp(q, 0, nmax));
    }
  }
}

}  // namespace

void QuantizeRowQ4K(const float* x, BlockQ4K* y, int64_t n) {
  CHECK(n % kQK_K == 0);
  uint8_t levels[kQK_K];
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    QuantizeSuperBlockK(x, 15, &y[i].d, &y[i].dmin, y[i].scales, levels);
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        y[i].qs[32 * c + l] =
            static_cast<uint8_t>(levels[64 * c + l] | (levels[64 * c + 32 + l] << 4));
      }
    }
  }
}

void QuantizeRowQ5K(const float* x, BlockQ5K* y, int64_t n) {
  CHECK(n % kQK_K == 0);
  uint8_t levels[kQK_K];
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    QuantizeSuperBlockK(x, 31, &y[i].d, &y[i].dmin, y[i].scales, levels);
    std::memset(y[i].qh, 0, sizeof(y[i].qh));
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        const int lo = levels[64 * c + l], hi = levels[64 * c + 32 + l];
        y[i].qs[32 * c + l] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
      }
    }
    for (int e = 0; e < kQK_K; ++e) {
      if (levels[e] & 16) y[i].qh[e % 32] |= static_cast<uint8_t>(1u << (e / 32));
    }
  }
}

void QuantizeRowQ6K(const float* x, BlockQ6K* y, int64_t n) {
  CHECK(n % kQK_K == 0);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    float sub_scale[16];
    float max_scale = 0.f;
    for (int j = 0; j < 16; ++j) {
      float amax = 0.f;
      for (int l = 0; l < 16; ++l) amax = std::max(amax, std::fabs(x[16 * j + l]));
      sub_scale[j] = amax / 31.f;
      max_scale = std::max(max_scale, sub_scale[j]);
    }
    y[i].d = F32ToF16(max_scale / 127.f);
    const float d = F16ToF32(y[i].d);
    uint8_t levels[kQK_K];
    for (int j = 0; j < 16; ++j) {
      y[i].scales[j] =
          static_cast<int8_t>(d > 0.f ? std::min(127, NearestInt(sub_scale[j] / d)) : 0);
      const float dl = d * y[i].scales[j];
      for (int l = 0; l < 16; ++l) {
        const int q = dl > 0.f ? NearestInt(x[16 * j + l] / dl) : 0;
        levels[16 * j + l] = static_cast<uint8_t>(std::clamp(q, -32, 31) + 32);
      }
    }
    for (int h = 0; h < 2; ++h) {
      const uint8_t* lv = levels + 128 * h;
      for (int l = 0; l < 32; ++l) {
        const int q1 = lv[l], q2 = lv[l + 32], q3 = lv[l + 64], q4 = lv[l + 96];
        y[i].ql[64 * h + l] = static_cast<uint8_t>((q1 & 0xF) | ((q3 & 0xF) << 4));
        y[i].ql[64 * h + l + 32] = static_cast<uint8_t>((q2 & 0xF) | ((q4 & 0xF) << 4));
        y[i].qh[32 * h + l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) |
                                                   ((q4 >> 4) << 6));
      }
    }
  }
}

void QuantizeRow(DType type, const float* x, void* y, int64_t n) {
  switch (type) {
    case DType::kF32: std::memcpy(y, x, static_cast<size_t>(n) * sizeof(float)); return;
    case DType::kF16: F32ToF16Row(x, static_cast<uint16_t*>(y), n); return;
    case DType::kBF16: F32ToBf16Row(x, static_cast<uint16_t*>(y), n); return;
    case DType::kQ4_0: QuantizeRowQ4_0(x, static_cast<BlockQ4_0*>(y), n); return;
    case DType::kQ8_0: QuantizeRowQ8_0(x, static_cast<BlockQ8_0*>(y), n); return;
    case DType::kQ4_K: QuantizeRowQ4K(x, static_cast<BlockQ4K*>(y), n); return;
    case DType::kQ5_K: QuantizeRowQ5K(x, static_cast<BlockQ5K*>(y), n); return;
    case DType::kQ6_K: QuantizeRowQ6K(x, static_cast<BlockQ6K*>(y), n); return;
    case DType::kQ8_K: QuantizeRowQ8K(x, static_cast<BlockQ8K*>(y), n); return;
  }
  CHECK(false) << "unsupported type " << static_cast<uint32_t>(type);
}

}  // namespace mneme::kernels
