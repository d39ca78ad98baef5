// F16 / BF16 conversions: exhaustive F16 -> F32, F32 -> F16 against the F16C
// instruction (the IEEE oracle), hand-checked edge values, and row versions
// equal to the scalar ones.
#include "kernels/fp16.h"

#include <gtest/gtest.h>
#include <immintrin.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu_features.h"

namespace mneme::kernels {
namespace {

__attribute__((target("f16c"))) float HwF16ToF32(uint16_t h) {
  return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h)));
}
__attribute__((target("f16c"))) uint16_t HwF32ToF16(float f) {
  return static_cast<uint16_t>(
      _mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT), 0));
}

TEST(Fp16, HandValues) {
  EXPECT_EQ(F16ToF32(0x3c00), 1.0f);
  EXPECT_EQ(F16ToF32(0xc000), -2.0f);
  EXPECT_EQ(F16ToF32(0x7bff), 65504.0f);
  EXPECT_EQ(F16ToF32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(F16ToF32(0x03ff), 1023 * std::ldexp(1.0f, -24));
  EXPECT_EQ(F16ToF32(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_TRUE(std::isinf(F16ToF32(0x7c00)));
  EXPECT_TRUE(std::isnan(F16ToF32(0x7e00)));
  EXPECT_TRUE(std::signbit(F16ToF32(0x8000)));

  EXPECT_EQ(F32ToF16(1.0f), 0x3c00);
  EXPECT_EQ(F32ToF16(65504.0f), 0x7bff);
  EXPECT_EQ(F32ToF16(65519.99f), 0x7bff);
  EXPECT_EQ(F32ToF16(65520.0f), 0x7c00);                      // tie rounds to even: inf
  EXPECT_EQ(F32ToF16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie -> even
  EXPECT_EQ(F32ToF16(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(F32ToF16(std::ldexp(1.0f, -25)), 0x0000);  // half the smallest subnormal: tie -> 0
  EXPECT_EQ(F32ToF16(3 * std::ldexp(1.0f, -25)), 0x0002);
  EXPECT_EQ(F32ToF16(-std::ldexp(1.0f, -14)), 0x8400);
  EXPECT_EQ(F32ToF16(INFINITY), 0x7c00);
  EXPECT_EQ(F32ToF16(-INFINITY), 0xfc00);
  EXPECT_EQ(F32ToF16(-0.0f), 0x8000);
  EXPECT_EQ(F32ToF16(NAN) & 0x7e00, 0x7e00);
}

TEST(Fp16, F16ToF32ExhaustiveAgainstF16c) {
  if (!IsaSupported(Isa::kAvx2)) GTEST_SKIP() << "no F16C";
  for (uint32_t h = 0; h < 65536; ++h) {
    ASSERT_EQ(FloatBits(F16ToF32(static_cast<uint16_t>(h))),
              FloatBits(HwF16ToF32(static_cast<uint16_t>(h))))
        << std::hex << h;
  }
}

TEST(Fp16, F32ToF16SampledAgainstF16c) {
  if (!IsaSupported(Isa::kAvx2)) GTEST_SKIP() << "no F16C";
  // Every 4093rd bit pattern (~1M floats across all exponents, both signs)
  // plus every pattern in the subnormal/normal and overflow boundary ranges.
  for (uint64_t u = 0; u < (1ull << 32); u += 4093) {
    const float f = BitsToFloat(static_cast<uint32_t>(u));
    ASSERT_EQ(F32ToF16(f), HwF32ToF16(f)) << std::hex << u;
  }
  for (uint32_t u = 0x38000000u - 70000; u < 0x38800000u + 70000; u += 7) {
    ASSERT_EQ(F32ToF16(BitsToFloat(u)), HwF32ToF16(BitsToFloat(u))) << std::hex << u;
  }
  for (uint32_t u = 0x477fe000u - 70000; u < 0x47800000u + 70000; ++u) {
    ASSERT_EQ(F32ToF16(BitsToFloat(u)), HwF32ToF16(BitsToFloat(u))) << std::hex << u;
  }
}

TEST(Bf16, HandValues) {
  EXPECT_EQ(F32ToBf16(1.0f), 0x3f80);
  EXPECT_EQ(F32ToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);      // tie -> even
  EXPECT_EQ(F32ToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie -> even (up)
  EXPECT_EQ(F32ToBf16(-2.0f), 0xc000);
  EXPECT_EQ(F32ToBf16(INFINITY), 0x7f80);
  EXPECT_EQ(F32ToBf16(BitsToFloat(0x7f800001u)), 0x7fc0);  // signalling NaN is quieted
  EXPECT_EQ(Bf16ToF32(0x3f80), 1.0f);
  EXPECT_EQ(Bf16ToF32(0x0001), BitsToFloat(0x00010000u));  // subnormal kept
}

TEST(Fp16, RowsMatchScalar) {
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.f, 100.f);
  for (int n = 0; n < 70; ++n) {
    std::vector<float> x(n);
    for (float& v : x) v = dist(rng);
    if (n > 3) x[3] = NAN;
    std::vector<uint16_t> h(n), b(n);
    F32ToF16Row(x.data(), h.data(), n);
    F32ToBf16Row(x.data(), b.data(), n);
    std::vector<float> back_h(n), back_b(n);
    F16ToF32Row(h.data(), back_h.data(), n);
    Bf16ToF32Row(b.data(), back_b.data(), n);
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(h[i], F32ToF16(x[i])) << i;
      ASSERT_EQ(b[i], F32ToBf16(x[i])) << i;
      ASSERT_EQ(FloatBits(back_h[i]), FloatBits(F16ToF32(h[i]))) << i;
      ASSERT_EQ(FloatBits(back_b[i]), FloatBits(Bf16ToF32(b[i]))) << i;
    }
  }
}

TEST(CpuFeatures, OverrideOnlyLowers) {
  EXPECT_EQ(ChooseIsa(Isa::kAvx512, nullptr), Isa::kAvx512);
  EXPECT_EQ(ChooseIsa(Isa::kAvx512, "avx2"), Isa::kAvx2);
  EXPECT_EQ(ChooseIsa(Isa::kAvx512, "scalar"), Isa::kScalar);
  EXPECT_EQ(ChooseIsa(Isa::kAvx2, "avx512"), Isa::kAvx2);  // never above the CPU
  EXPECT_EQ(ChooseIsa(Isa::kAvx2, "bogus"), Isa::kAvx2);
  EXPECT_LE(static_cast<int>(ActiveIsa()), static_cast<int>(DetectIsa()));
}

}  // namespace
}  // namespace mneme::kernels
