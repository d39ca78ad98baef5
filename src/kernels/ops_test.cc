// Ops (ops.h): the scalar level against formulas written out in double here,
// and every SIMD level against the scalar level.
//
// Error bounds (docs/kernels.md):
//   RmsNorm        SIMD vs scalar: |d| <= 2^-22 |out|  (double sum order only)
//                  scalar vs double formula: |d| <= 1e-6 |out|
//   RoPE           SIMD vs scalar: bit-identical; scalar vs
//                  pos * base^(-2i/n) in double: angle error <= (i + 2) * 2^-23 * theta
//   Softmax        SIMD vs scalar: |d| <= 1e-6 * y + 1e-30; vs double: 2e-6 * y
//   exp (SIMD)     vs double exp: <= 2^-21 relative (ggml_v_expf: 1.95 ulp)
//   SiLU / SwiGLU  SIMD vs scalar: <= 1e-6 relative; scalar vs double: 1e-6
//                  (+1e-35 absolute: exp(-x) overflows to inf below x = -88.7,
//                  so f32 gives 0 there, as ggml does)
//   Add            bit-identical
#include "kernels/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/test_util.h"

namespace mneme::kernels {
namespace {

std::vector<Isa> SimdLevels() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (IsaSupported(isa)) out.push_back(isa);
  }
  return out;
}

const int64_t kLengths[] = {1, 7, 15, 16, 17, 64, 100, 576, 2048, 4099};

TEST(RmsNormTest, HandCase) {
  const float x[2] = {3.f, 4.f}, w[2] = {2.f, 0.5f};
  float out[2];
  RmsNorm(Isa::kScalar, x, w, 0.f, out, 2);
  // mean(x^2) = 12.5, 1/sqrt(12.5) = 0.28284271
  EXPECT_NEAR(out[0], 3 * 0.28284271 * 2, 1e-6);
  EXPECT_NEAR(out[1], 4 * 0.28284271 * 0.5, 1e-6);
}

TEST(RmsNormTest, ScalarMatchesDoubleFormula) {
  for (int64_t n : kLengths) {
    const auto x = testing::RandomFloats(n, 1), w = testing::RandomFloats(n, 2);
    std::vector<float> out(n);
    RmsNorm(Isa::kScalar, x.data(), w.data(), 1e-5f, out.data(), n);
    double ss = 0;
    for (float v : x) ss += static_cast<double>(v) * v;
    const double scale = 1.0 / std::sqrt(ss / n + 1e-5);
    for (int64_t i = 0; i < n; ++i) {
      const double ref = x[i] * scale * w[i];
      EXPECT_NEAR(out[i], ref, 1e-6 * std::fabs(ref) + 1e-30) << "n=" << n << " i=" << i;
    }
  }
}

TEST(RmsNormTest, SimdMatchesScalar) {
  for (Isa isa : SimdLevels()) {
    for (int64_t n : kLengths) {
      const auto x = testing::RandomFloats(n, 3, 5.f), w = testing::RandomFloats(n, 4);
      std::vector<float> ref(n), got(n);
      RmsNorm(Isa::kScalar, x.data(), w.data(), 1e-6f, ref.data(), n);
      RmsNormRows(isa, x.data(), w.data(), 1e-6f, got.data(), n, 1);
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_NEAR(got[i], ref[i], 0x1p-22 * std::fabs(ref[i])) << IsaName(isa) << " n=" << n;
      }
      RmsNorm(isa, x.data(), nullptr, 1e-6f, got.data(), n);  // no weight
      RmsNorm(Isa::kScalar, x.data(), nullptr, 1e-6f, ref.data(), n);
      for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(got[i], ref[i], 0x1p-22 * std::fabs(ref[i]));
    }
  }
}

// Rotated pair indices, written independently of the kernels.
std::pair<int, int> Pair(RopeMode mode, int i, int n_dims) {
  return mode == RopeMode::kNormal ? std::make_pair(2 * i, 2 * i + 1)
                                   : std::make_pair(i, i + n_dims / 2);
}

TEST(RopeTest, ScalarMatchesDoubleFormula) {
  for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
    for (int head_dim : {8, 64, 128}) {
      for (int n_dims : {head_dim, head_dim / 2}) {
        const std::vector<float> ff = [&] {
          std::vector<float> f(n_dims / 2);
          for (int i = 0; i < n_dims / 2; ++i) f[i] = 1.f + 0.25f * (i % 5);
          return f;
        }();
        for (bool use_ff : {false, true}) {
          RopeParams p{mode, n_dims, 500000.f, 0.5f, use_ff ? ff.data() : nullptr};
          for (int32_t pos : {0, 1, 17, 1000, 4095}) {
            const int n_heads = 3;
            const auto x = testing::RandomFloats(n_heads * head_dim, pos + 7);
            std::vector<float> y = x, cache(n_dims);
            RopeRows(Isa::kScalar, p, &pos, y.data(), 1, n_heads, head_dim, cache.data());
            for (int h = 0; h < n_heads; ++h) {
              const float* xh = x.data() + h * head_dim;
              const float* yh = y.data() + h * head_dim;
              for (int i = 0; i < n_dims / 2; ++i) {
                const double theta =
                    pos * std::pow(500000.0, -2.0 * i / n_dims) * 0.5 / (use_ff ? ff[i] : 1.0);
                const auto [a, b] = Pair(mode, i, n_dims);
                const double r0 = xh[a] * std::cos(theta) - xh[b] * std::sin(theta);
                const double r1 = xh[a] * std::sin(theta) + xh[b] * std::cos(theta);
                const double mag = std::hypot(xh[a], xh[b]);
                const double tol = mag * ((i + 2) * 0x1p-23 * theta + 1e-6);
                EXPECT_NEAR(yh[a], r0, tol) << "pos=" << pos << " i=" << i;
                EXPECT_NEAR(yh[b], r1, tol) << "pos=" << pos << " i=" << i;
              }
              for (int d = n_dims; d < head_dim; ++d) EXPECT_EQ(yh[d], xh[d]);  // pass-through
            }
          }
        }
      }
    }
  }
}

TEST(RopeTest, SimdBitIdenticalToScalar) {
  for (Isa isa : SimdLevels()) {
    for (RopeMode mode : {RopeMode::kNormal, RopeMode::kNeox}) {
      for (int head_dim : {8, 40, 64, 80, 128}) {
        for (int n_dims : {head_dim, head_dim / 2 - (head_dim / 2) % 2}) {
          RopeParams p{mode, n_dims, 10000.f, 1.f, nullptr};
          const int32_t pos[3] = {3, 250, 9000};
          auto x = testing::RandomFloats(3 * 5 * head_dim, head_dim);
          auto y = x;
          std::vector<float> cache(n_dims);
          RopeRows(Isa::kScalar, p, pos, x.data(), 3, 5, head_dim, cache.data());
          RopeRows(isa, p, pos, y.data(), 3, 5, head_dim, cache.data());
          for (size_t i = 0; i < x.size(); ++i) {
            ASSERT_EQ(FloatBits(x[i]), FloatBits(y[i])) << IsaName(isa) << " i=" << i;
          }
        }
      }
    }
  }
}

TEST(SoftmaxTest, ScalarMatchesDoubleAndMasks) {
  for (int64_t n : kLengths) {
    auto x = testing::RandomFloats(n, 11, 3.f);
    std::vector<float> mask(n, 0.f);
    for (int64_t i = 1; i < n; i += 3) mask[i] = -INFINITY;
    std::vector<double> ref(n);
    double max = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; ++i) max = std::max(max, x[i] * 0.125 + mask[i]);
    for (int64_t i = 0; i < n; ++i) sum += ref[i] = std::exp(x[i] * 0.125 + mask[i] - max);
    Softmax(Isa::kScalar, x.data(), n, 0.125f, mask.data());
    for (int64_t i = 0; i < n; ++i) {
      if (mask[i] != 0) {
        EXPECT_EQ(x[i], 0.f);
        continue;
      }
      EXPECT_NEAR(x[i], ref[i] / sum, 2e-6 * ref[i] / sum) << "n=" << n;
    }
  }
}

TEST(SoftmaxTest, SimdMatchesScalar) {
  for (Isa isa : SimdLevels()) {
    for (int64_t n : kLengths) {
      auto a = testing::RandomFloats(n, 12, 4.f);
      auto b = a;
      Softmax(Isa::kScalar, a.data(), n, 0.7f, nullptr);
      Softmax(isa, b.data(), n, 0.7f, nullptr);
      for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(b[i], a[i], 1e-6 * a[i] + 1e-30) << IsaName(isa);
    }
  }
}

// The padded variant equals Softmax on the row padded with -inf entries
// (what llama.cpp's masked, padded KV rows compute), bit for bit.
TEST(SoftmaxTest, PaddedEqualsSoftmaxOfPaddedRow) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (!IsaSupported(isa)) continue;
    for (int64_t n : kLengths) {
      const int64_t padded_n = (n + 31) / 32 * 32;
      auto x = testing::RandomFloats(n, 13, 4.f);
      std::vector<float> padded(padded_n, 0.f), mask(padded_n, 0.f);
      for (int64_t i = 0; i < padded_n; ++i) {
        if (i < n)
          padded[i] = x[i];
        else
          mask[i] = -INFINITY;
      }
      SoftmaxPadded(isa, x.data(), n, 0.3f);
      if (isa == Isa::kScalar) {  // scalar: exactly Softmax (no vector lanes)
        Softmax(isa, padded.data(), n, 0.3f, nullptr);
      } else {
        Softmax(isa, padded.data(), padded_n, 0.3f, mask.data());
      }
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(FloatBits(x[i]), FloatBits(padded[i])) << n;
    }
  }
}

TEST(ExpTest, SimdExpAccuracy) {
  std::vector<float> x;
  for (float v = -103.f; v < 88.7f; v += 0.0137f) x.push_back(v);
  x.insert(x.end(), {0.f, -0.f, 88.72f, -104.f, -1000.f, -INFINITY});
  std::vector<float> y(x.size());
  for (Isa isa : SimdLevels()) {
    ExpSubSum(isa, x.data(), y.data(), static_cast<int64_t>(x.size()), 0.f);
    for (size_t i = 0; i < x.size(); ++i) {
      const double ref = std::exp(static_cast<double>(x[i]));
      if (ref < 0x1p-126) {  // subnormal / flushed range: absolute
        EXPECT_LE(std::fabs(y[i] - ref), 0x1p-126) << x[i];
      } else {
        EXPECT_NEAR(y[i], ref, 0x1p-21 * ref) << IsaName(isa) << " x=" << x[i];
      }
    }
  }
}

TEST(SiluTest, ScalarMatchesDoubleAndSimdMatchesScalar) {
  std::vector<float> x;
  for (float v = -100.f; v <= 100.f; v += 0.031f) x.push_back(v);
  const auto up = testing::RandomFloats(static_cast<int64_t>(x.size()), 5);
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> s(n), g(n);
  Silu(Isa::kScalar, x.data(), s.data(), n);
  SwiGlu(Isa::kScalar, x.data(), up.data(), g.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const double ref = x[i] / (1.0 + std::exp(-static_cast<double>(x[i])));
    EXPECT_NEAR(s[i], ref, 1e-6 * std::fabs(ref) + 1e-35) << x[i];
    EXPECT_NEAR(g[i], ref * up[i], 1e-6 * std::fabs(ref * up[i]) + 1e-35) << x[i];
  }
  for (Isa isa : SimdLevels()) {
    for (int64_t len : {n, int64_t{13}, int64_t{33}}) {
      std::vector<float> s2(len), g2(len);
      Silu(isa, x.data(), s2.data(), len);
      SwiGlu(isa, x.data(), up.data(), g2.data(), len);
      for (int64_t i = 0; i < len; ++i) {
        EXPECT_NEAR(s2[i], s[i], 1e-6 * std::fabs(s[i]) + 1e-37) << IsaName(isa) << " " << x[i];
        EXPECT_NEAR(g2[i], g[i], 1e-6 * std::fabs(g[i]) + 1e-37) << IsaName(isa) << " " << x[i];
      }
    }
  }
}

TEST(AddTest, AllLevelsExact) {
  for (int64_t n : kLengths) {
    const auto a = testing::RandomFloats(n, 21), b = testing::RandomFloats(n, 22);
    for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
      if (!IsaSupported(isa)) continue;
      std::vector<float> out = a;
      Add(isa, out.data(), b.data(), out.data(), n);  // in place, as the residual add
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] + b[i]);
    }
  }
}

}  // namespace
}  // namespace mneme::kernels
