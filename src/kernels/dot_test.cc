// Dot kernels: every SIMD level against the scalar reference, and the scalar
// reference against dequantize-then-multiply (which checks the dot's reading
// of each block layout against the dequantizer's, written independently).
//
// Error bound (stated in docs/kernels.md):
//   |VecDot_simd - VecDot_scalar| <= 1e-5 * sum_i |w_i * a_i|
// with w, a the dequantized values: quantized kernels sum integers exactly,
// so only the f32 accumulation order of per-block terms differs.
#include "kernels/dot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/quantize.h"
#include "kernels/test_util.h"

namespace mneme::kernels {
namespace {

constexpr double kRelTol = 1e-5;

struct DotFixture {
  std::vector<uint8_t> w;  // one weight row
  std::vector<uint8_t> a;  // activations in the vec-dot type
  double exact = 0;        // sum w_i * a_i in double from dequantized values
  double abs_sum = 0;      // sum |w_i * a_i|
};

DotFixture MakeFixture(DType type, int64_t n, uint32_t seed) {
  DotFixture f;
  f.w = testing::RandomRows(type, 1, n, seed);
  const DType act_type = GetDTypeInfo(type)->vec_dot_type;
  const std::vector<float> x = testing::RandomFloats(n, seed + 1000);
  f.a.resize(RowBytes(act_type, n));
  ConvertActivations(act_type, x.data(), f.a.data(), n);
  std::vector<float> wf(n), af(n);
  DequantizeRow(type, f.w.data(), wf.data(), n);
  DequantizeRow(act_type, f.a.data(), af.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    f.exact += static_cast<double>(wf[i]) * af[i];
    f.abs_sum += std::fabs(static_cast<double>(wf[i]) * af[i]);
  }
  return f;
}

class DotTest : public ::testing::TestWithParam<DType> {};

std::vector<int64_t> Lengths(DType type) {
  const int bs = GetDTypeInfo(type)->block_size;
  if (bs == 1) return {1, 7, 31, 32, 33, 100, 576, 2048, 4099};
  if (bs == 32) return {32, 64, 96, 576, 2048, 4096};
  return {256, 512, 768, 2048, 4096};
}

TEST_P(DotTest, ScalarMatchesDequantizedProduct) {
  const DType type = GetParam();
  for (int64_t n : Lengths(type)) {
    for (uint32_t seed : {1u, 2u, 3u}) {
      const DotFixture f = MakeFixture(type, n, seed);
      const float got = VecDot(Isa::kScalar, type, n, f.w.data(), f.a.data());
      EXPECT_NEAR(got, f.exact, kRelTol * f.abs_sum + 1e-30) << "n=" << n << " seed=" << seed;
    }
  }
}

TEST_P(DotTest, SimdMatchesScalar) {
  const DType type = GetParam();
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (!IsaSupported(isa)) continue;
    for (int64_t n : Lengths(type)) {
      for (uint32_t seed : {1u, 2u, 3u}) {
        const DotFixture f = MakeFixture(type, n, seed);
        const float ref = VecDot(Isa::kScalar, type, n, f.w.data(), f.a.data());
        const float got = VecDot(isa, type, n, f.w.data(), f.a.data());
        EXPECT_NEAR(got, ref, kRelTol * f.abs_sum + 1e-30)
            << IsaName(isa) << " n=" << n << " seed=" << seed;
      }
    }
  }
}

TEST_P(DotTest, MatVecRowsEqualVecDot) {
  const DType type = GetParam();
  const int64_t n = GetDTypeInfo(type)->block_size == 1 ? 96 : 512;
  const int64_t rows = 5;
  const std::vector<uint8_t> w = testing::RandomRows(type, rows, n, 9);
  const DType act_type = GetDTypeInfo(type)->vec_dot_type;
  const std::vector<float> x = testing::RandomFloats(n, 10);
  std::vector<uint8_t> a(RowBytes(act_type, n));
  ConvertActivations(act_type, x.data(), a.data(), n);
  std::vector<float> out(rows, -1.f);
  const size_t row_bytes = RowBytes(type, n);
  MatVec(ActiveIsa(), type, n, w.data(), row_bytes, a.data(), out.data(), 1, 4);
  EXPECT_EQ(out[0], -1.f);
  EXPECT_EQ(out[4], -1.f);
  for (int64_t r = 1; r < 4; ++r) {
    EXPECT_EQ(out[r], VecDot(ActiveIsa(), type, n, w.data() + r * row_bytes, a.data()));
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, DotTest,
                         ::testing::Values(DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0,
                                           DType::kQ4_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(GetDTypeInfo(info.param)->name);
                         });

// ggml-quantized files may hold negative Q6_K scales and Q8_0 weights of
// -128; the kernels must agree on those too.
TEST(DotEdgeCases, NegativeQ6KScalesAndQ8_0Minus128) {
  const int64_t n = 512;
  DotFixture f = MakeFixture(DType::kQ6_K, n, 4);
  auto* blocks = reinterpret_cast<BlockQ6K*>(f.w.data());
  blocks[0].scales[3] = -77;
  blocks[1].scales[15] = -128;
  DotFixture g = MakeFixture(DType::kQ8_0, n, 5);
  reinterpret_cast<BlockQ8_0*>(g.w.data())[2].qs[7] = -128;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (!IsaSupported(isa)) continue;
    const float r6 = VecDot(Isa::kScalar, DType::kQ6_K, n, f.w.data(), f.a.data());
    EXPECT_NEAR(VecDot(isa, DType::kQ6_K, n, f.w.data(), f.a.data()), r6,
                1e-5 * std::fabs(f.abs_sum) * 2);
    const float r8 = VecDot(Isa::kScalar, DType::kQ8_0, n, g.w.data(), g.a.data());
    EXPECT_NEAR(VecDot(isa, DType::kQ8_0, n, g.w.data(), g.a.data()), r8, 1e-5 * g.abs_sum * 2);
  }
}

}  // namespace
}  // namespace mneme::kernels
