// Block formats: dequantization of hand-built blocks against values computed
// by hand from the ggml format definition, and quantize -> dequantize error
// bounds on random data.
#include "kernels/quantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/fp16.h"

namespace mneme::kernels {
namespace {

// ggml's 6-bit scale/min packing, written out from the format description
// (scales[0..3] low 6 bits: sc 0..3; scales[4..7] low 6 bits: m 0..3;
// scales[8..11]: low nibble sc 4..7, high nibble m 4..7; the top 2 bits of
// sc 4..7 sit in scales[0..3] bits 6-7 and of m 4..7 in scales[4..7] bits 6-7).
void PackK4ByHand(const int* sc, const int* m, uint8_t* out) {
  std::memset(out, 0, 12);
  for (int j = 0; j < 4; ++j) {
    out[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    out[j + 4] = static_cast<uint8_t>((m[j] & 63) | ((m[j + 4] >> 4) << 6));
    out[j + 8] = static_cast<uint8_t>((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
  }
}

const int kSc[8] = {1, 2, 3, 4, 17, 33, 50, 63};
const int kMin[8] = {0, 1, 5, 10, 20, 40, 62, 63};

TEST(Dequantize, Q4_0HandBlock) {
  BlockQ4_0 b;
  b.d = 0x3800;  // 0.5
  for (int j = 0; j < 16; ++j) b.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
  float y[32];
  DequantizeRowQ4_0(&b, y, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j - 8) * 0.5f);
    EXPECT_EQ(y[j + 16], (7 - j) * 0.5f);
  }
}

TEST(Dequantize, Q8_0HandBlock) {
  BlockQ8_0 b;
  b.d = 0x3400;  // 0.25
  for (int j = 0; j < 32; ++j) b.qs[j] = static_cast<int8_t>(4 * j - 64);
  float y[32];
  DequantizeRowQ8_0(&b, y, 32);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], (4 * j - 64) * 0.25f);
}

TEST(Dequantize, ScaleMinK4Unpacks) {
  uint8_t packed[12];
  PackK4ByHand(kSc, kMin, packed);
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    GetScaleMinK4(j, packed, &sc, &m);
    EXPECT_EQ(sc, kSc[j]) << j;
    EXPECT_EQ(m, kMin[j]) << j;
  }
}

TEST(Dequantize, Q4KHandBlock) {
  BlockQ4K b;
  b.d = 0x3c00;     // 1.0
  b.dmin = 0x3800;  // 0.5
  PackK4ByHand(kSc, kMin, b.scales);
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l)
      b.qs[32 * c + l] = static_cast<uint8_t>((l % 16) | (((l + c) % 16) << 4));
  }
  float y[256];
  DequantizeRowQ4K(&b, y, 256);
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      EXPECT_EQ(y[64 * c + l], 1.0f * kSc[2 * c] * (l % 16) - 0.5f * kMin[2 * c]);
      EXPECT_EQ(y[64 * c + 32 + l],
                1.0f * kSc[2 * c + 1] * ((l + c) % 16) - 0.5f * kMin[2 * c + 1]);
    }
  }
}

TEST(Dequantize, Q5KHandBlock) {
  BlockQ5K b;
  b.d = 0x4000;     // 2.0
  b.dmin = 0x3400;  // 0.25
  PackK4ByHand(kSc, kMin, b.scales);
  for (int l = 0; l < 32; ++l) b.qh[l] = static_cast<uint8_t>((l * 37) & 0xff);
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l)
      b.qs[32 * c + l] = static_cast<uint8_t>((l % 16) | ((15 - l % 16) << 4));
  }
  float y[256];
  DequantizeRowQ5K(&b, y, 256);
  for (int e = 0; e < 256; ++e) {
    const int sub = e / 32, l = e % 32;
    const int low = (sub % 2 == 0) ? l % 16 : 15 - l % 16;
    const int q = low + 16 * (((l * 37) & 0xff) >> sub & 1);
    EXPECT_EQ(y[e], 2.0f * kSc[sub] * q - 0.25f * kMin[sub]) << e;
  }
}

TEST(Dequantize, Q6KHandBlock) {
  // Levels L[e] in [0, 63] placed per ggml's layout: for half h and
  // l < 32, ql[64h + l] = L[128h + l] | L[128h + 64 + l] << 4,
  // ql[64h + 32 + l] = L[128h + 32 + l] | L[128h + 96 + l] << 4, and qh[32h + l]
  // holds the top 2 bits of L[128h + l + 32g] at bits 2g, 2g + 1.
  int levels[256];
  for (int e = 0; e < 256; ++e) levels[e] = (e * 5 + e / 7) % 64;
  BlockQ6K b;
  b.d = 0x3000;  // 0.125
  for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<int8_t>(j * 9 - 70);
  std::memset(b.qh, 0, sizeof(b.qh));
  for (int h = 0; h < 2; ++h) {
    for (int l = 0; l < 32; ++l) {
      const int* L = levels + 128 * h;
      b.ql[64 * h + l] = static_cast<uint8_t>((L[l] & 15) | ((L[l + 64] & 15) << 4));
      b.ql[64 * h + 32 + l] = static_cast<uint8_t>((L[l + 32] & 15) | ((L[l + 96] & 15) << 4));
      for (int g = 0; g < 4; ++g)
        b.qh[32 * h + l] |= static_cast<uint8_t>((L[l + 32 * g] >> 4) << (2 * g));
    }
  }
  float y[256];
  DequantizeRowQ6K(&b, y, 256);
  for (int e = 0; e < 256; ++e) {
    EXPECT_EQ(y[e], 0.125f * b.scales[e / 16] * (levels[e] - 32)) << e;
  }
}

TEST(Quantize, Q8KMatchesDefinition) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.f, 1.f);
  std::vector<float> x(512);
  for (float& v : x) v = dist(rng);
  x[300] = -5.f;  // ggml maps the block's extreme to -127, so d = -max / 127 > 0
  x[10] = 6.f;    // ... and here d < 0
  BlockQ8K q[2];
  QuantizeRowQ8K(x.data(), q, 512);
  EXPECT_FLOAT_EQ(q[1].d, 5.f / 127.f);
  EXPECT_EQ(q[1].qs[300 - 256], -127);
  EXPECT_FLOAT_EQ(q[0].d, -6.f / 127.f);
  EXPECT_EQ(q[0].qs[10], -127);
  for (int b = 0; b < 2; ++b) {
    for (int j = 0; j < 16; ++j) {
      int sum = 0;
      for (int l = 0; l < 16; ++l) sum += q[b].qs[16 * j + l];
      EXPECT_EQ(q[b].bsums[j], sum);
    }
    for (int i = 0; i < 256; ++i) {
      EXPECT_LE(q[b].qs[i], 127);
      EXPECT_GE(q[b].qs[i], -127);
      EXPECT_LE(std::fabs(q[b].d * q[b].qs[i] - x[256 * b + i]), std::fabs(q[b].d) * 0.5001f);
    }
  }
}

TEST(Quantize, Q8_0Avx512BitIdenticalToScalar) {
  if (!IsaSupported(Isa::kAvx512)) GTEST_SKIP() << "no AVX-512";
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.f, 3.f);
  std::vector<float> x(32 * 64);
  for (float& v : x) v = dist(rng);
  for (int j = 0; j < 32; ++j) x[32 * 5 + j] = 0.f;                   // all-zero block
  for (int j = 0; j < 32; ++j) x[32 * 6 + j] = (j - 16) * 0.5f;       // x * id hits .5 ties
  for (int j = 0; j < 32; ++j) x[32 * 7 + j] = j == 3 ? -1e-30f : 0;  // tiny amax
  std::vector<BlockQ8_0> a(64), b(64);
  QuantizeRowQ8_0(x.data(), a.data(), static_cast<int64_t>(x.size()));
  QuantizeRowQ8_0Avx512(x.data(), b.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(BlockQ8_0) * a.size()), 0);
}

TEST(Quantize, Q8KAvx512BitIdenticalToScalar) {
  if (!IsaSupported(Isa::kAvx512)) GTEST_SKIP() << "no AVX-512";
  std::mt19937 rng(12);
  std::normal_distribution<float> dist(0.f, 3.f);
  std::vector<float> x(256 * 8);
  for (float& v : x) v = dist(rng);
  for (int j = 0; j < 256; ++j) x[256 * 2 + j] = 0.f;  // all-zero block
  x[256 * 3 + 10] = 9.f;                               // equal magnitudes, opposite signs:
  x[256 * 3 + 200] = -9.f;                             // the first one sets the sign
  x[256 * 4 + 10] = -9.f;
  x[256 * 4 + 200] = 9.f;
  for (int j = 0; j < 256; ++j) x[256 * 5 + j] = (j - 128) * 0.25f;  // ties in iscale * x
  std::vector<BlockQ8K> a(8), b(8);
  QuantizeRowQ8K(x.data(), a.data(), static_cast<int64_t>(x.size()));
  QuantizeRowQ8KAvx512(x.data(), b.data(), static_cast<int64_t>(x.size()));
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(std::memcmp(&a[i], &b[i], sizeof(BlockQ8K)), 0) << "block " << i;
  }
}

// Round trip on N(0, 1) data: RMS error / RMS(x) must stay under the bound
// for the format's bit width (uniform quantizer: step / sqrt(12) per element,
// step ~ block range / levels; bounds leave ~1.5x headroom over that).
struct RoundTripCase {
  DType type;
  double max_rel_rms;
};

class QuantizeRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(QuantizeRoundTrip, ErrorBounded) {
  const RoundTripCase c = GetParam();
  const int64_t n = 4096;
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.f, 1.f);
    std::vector<float> x(n), y(n);
    for (float& v : x) v = dist(rng);
    std::vector<uint8_t> q(RowBytes(c.type, n));
    QuantizeRow(c.type, x.data(), q.data(), n);
    DequantizeRow(c.type, q.data(), y.data(), n);
    double err = 0, ref = 0;
    for (int64_t i = 0; i < n; ++i) {
      err += (x[i] - y[i]) * (x[i] - y[i]);
      ref += x[i] * x[i];
    }
    const double rel = std::sqrt(err / ref);
    EXPECT_LT(rel, c.max_rel_rms) << GetDTypeInfo(c.type)->name << " seed " << seed;
    RecordProperty(std::string(GetDTypeInfo(c.type)->name) + "_rel_rms", std::to_string(rel));
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, QuantizeRoundTrip,
    ::testing::Values(RoundTripCase{DType::kF16, 4e-4}, RoundTripCase{DType::kBF16, 3e-3},
                      RoundTripCase{DType::kQ8_0, 0.012}, RoundTripCase{DType::kQ8_K, 0.008},
                      RoundTripCase{DType::kQ4_0, 0.16}, RoundTripCase{DType::kQ4_K, 0.16},
                      RoundTripCase{DType::kQ5_K, 0.08}, RoundTripCase{DType::kQ6_K, 0.04}));

}  // namespace
}  // namespace mneme::kernels
