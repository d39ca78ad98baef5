// Gemm against the naive double-precision reference for every weight type,
// shape edge (partial MR x NR tiles, several k-slices) and ISA; column-range
// splitting; bitwise batch invariance (any m, row order, column range); and
// agreement with VecDot within the error bound.
//
// Error bound (docs/kernels.md): |C - C_ref| <= 1e-5 * sum_k |a'_ik * w'_jk|.
#include "kernels/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/dot.h"
#include "kernels/quantize.h"
#include "kernels/test_util.h"
#include "util/thread_pool.h"

namespace mneme::kernels {
namespace {

constexpr double kRelTol = 1e-5;

struct Problem {
  int64_t m, n, k;
  std::vector<float> a;
  std::vector<uint8_t> w;
  GemmArgs args;
  std::vector<float> tol;  // [m][n] allowed absolute error

  Problem(DType type, int64_t m_, int64_t n_, int64_t k_, uint32_t seed) : m(m_), n(n_), k(k_) {
    a = testing::RandomFloats(m * k, seed);
    w = testing::RandomRows(type, n, k, seed + 1);
    args.m = m;
    args.n = n;
    args.k = k;
    args.a = a.data();
    args.lda = k;
    args.w_type = type;
    args.w = w.data();
    args.w_row_bytes = RowBytes(type, k);
    args.ldc = n;
    std::vector<float> ar(k), wr(k);
    std::vector<uint8_t> buf;
    tol.assign(m * n, 0.f);
    for (int64_t j = 0; j < n; ++j) {
      DequantizeRow(type, w.data() + j * args.w_row_bytes, wr.data(), k);
      for (int64_t i = 0; i < m; ++i) {
        RoundActivationsForDot(type, a.data() + i * k, ar.data(), k, &buf);
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += std::fabs(static_cast<double>(ar[p]) * wr[p]);
        tol[i * n + j] = static_cast<float>(kRelTol * s + 1e-30);
      }
    }
  }
};

class GemmTest : public ::testing::TestWithParam<DType> {};

TEST_P(GemmTest, MatchesReference) {
  const DType type = GetParam();
  const bool kquant = GetDTypeInfo(type)->block_size == kQK_K;
  struct Shape {
    int64_t m, n, k;
  };
  std::vector<Shape> shapes = {
      {1, 1, 256}, {14, 32, 256}, {13, 37, 512}, {29, 70, 768}, {6, 16, 1024}};
  if (!kquant) shapes.push_back({15, 33, 96});
  if (GetDTypeInfo(type)->block_size == 1)
    shapes.push_back({7, 45, 100});  // k tail not a multiple of 16
  for (const Shape& sh : shapes) {
    Problem p(type, sh.m, sh.n, sh.k, static_cast<uint32_t>(sh.m * 31 + sh.n));
    std::vector<float> ref(sh.m * sh.n);
    GemmArgs ra = p.args;
    ra.c = ref.data();
    GemmReference(ra);
    for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
      if (!IsaSupported(isa)) continue;
      std::vector<float> c(sh.m * sh.n, NAN);
      GemmArgs ga = p.args;
      ga.c = c.data();
      GemmScratch scratch;
      Gemm(isa, ga, 0, sh.n, &scratch);
      for (int64_t i = 0; i < sh.m * sh.n; ++i) {
        ASSERT_NEAR(c[i], ref[i], p.tol[i])
            << IsaName(isa) << " m=" << sh.m << " n=" << sh.n << " k=" << sh.k << " at " << i;
      }
    }
  }
}

TEST_P(GemmTest, HonoursStrides) {
  const DType type = GetParam();
  const int64_t m = 17, n = 35, k = 512, lda = k + 64, ldc = n + 9;
  Problem p(type, m, n, k, 12);
  std::vector<float> a_strided(m * lda, NAN);  // padding must never be read
  for (int64_t i = 0; i < m; ++i) std::copy_n(p.a.data() + i * k, k, a_strided.data() + i * lda);
  std::vector<float> ref(m * n), c(m * ldc, -7.f);
  GemmArgs ra = p.args;
  ra.c = ref.data();
  GemmReference(ra);
  GemmArgs ga = p.args;
  ga.a = a_strided.data();
  ga.lda = lda;
  ga.c = c.data();
  ga.ldc = ldc;
  GemmScratch scratch;
  Gemm(ActiveIsa(), ga, 0, n, &scratch);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) ASSERT_NEAR(c[i * ldc + j], ref[i * n + j], p.tol[i * n + j]);
    for (int64_t j = n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], -7.f) << "wrote into C's padding";
  }
}

TEST_P(GemmTest, ColumnRangesComposeExactly) {
  const DType type = GetParam();
  const int64_t k = GetDTypeInfo(type)->block_size == kQK_K ? 512 : 320;
  Problem p(type, 20, 75, k, 5);
  std::vector<float> whole(20 * 75), parts(20 * 75, NAN);
  GemmArgs wa = p.args;
  wa.c = whole.data();
  GemmScratch scratch;
  Gemm(ActiveIsa(), wa, 0, 75, &scratch);
  GemmArgs pa = p.args;
  pa.c = parts.data();
  Gemm(ActiveIsa(), pa, 0, 29, &scratch);
  for (int64_t i = 0; i < 20; ++i)
    EXPECT_TRUE(std::isnan(parts[i * 75 + 29])) << "wrote outside its range";
  Gemm(ActiveIsa(), pa, 29, 75, &scratch);
  for (size_t i = 0; i < whole.size(); ++i) ASSERT_EQ(parts[i], whole[i]) << i;
}

// A row's result depends only on that row and W, never on the batch around
// it (tile position, m): prefix-cached and recomputed prefills agree bit for bit.
TEST_P(GemmTest, RowsAreBatchInvariant) {
  const DType type = GetParam();
  const int64_t k = GetDTypeInfo(type)->block_size == kQK_K ? 768 : 544;
  Problem p(type, 29, 40, k, 6);
  std::vector<float> batch(29 * 40);
  GemmArgs ba = p.args;
  ba.c = batch.data();
  GemmScratch scratch;
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (!IsaSupported(isa)) continue;
    Gemm(isa, ba, 0, 40, &scratch);
    for (int64_t row : {0, 13, 14, 28}) {
      std::vector<float> single(40);
      GemmArgs sa = p.args;
      sa.m = 1;
      sa.a = p.a.data() + row * k;
      sa.c = single.data();
      Gemm(isa, sa, 0, 40, &scratch);
      for (int64_t j = 0; j < 40; ++j)
        ASSERT_EQ(single[j], batch[row * 40 + j]) << IsaName(isa) << " row " << row;
    }
  }
}

// Batch invariance, bit for bit, for every ISA: a row's outputs do not
// depend on m (1..20, 37, 64: full and partial register tiles), on the row's
// place in the batch (shuffled rows) nor on the column range computed (the
// engine's thread split: multiples of 32). The engine runs every matmul
// through Gemm, so a token's K/V and logits are the same whether it was
// decoded alone, batched with others or computed in any prefill chunk.
// Where the ISA takes prepacked weights (GemmPrepackable), the batches use
// them and the single rows do not: both give the same bits too.
TEST_P(GemmTest, BatchInvariantBitwise) {
  const DType type = GetParam();
  const int64_t n = 166, k = 512, max_m = 64;  // 5 full 32-column panels + 6
  Problem p(type, max_m, n, k, 21);
  std::vector<uint8_t> packed;
  const void* w_packed = nullptr;  // prepacked W, where the ISA takes it
  const auto run = [&](Isa isa, const float* a, int64_t m, int64_t n_begin, int64_t n_end,
                       float* c, GemmScratch* scratch) {
    GemmArgs ga = p.args;
    ga.m = m;
    ga.a = a;
    ga.c = c;
    ga.w_packed = w_packed;
    Gemm(isa, ga, n_begin, n_end, scratch);
  };
  const auto same_row = [&](const float* got, const float* want) {
    return std::memcmp(got, want, n * sizeof(float)) == 0;
  };
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (!IsaSupported(isa)) continue;
    GemmScratch scratch;
    std::vector<float> alone(max_m * n);
    w_packed = nullptr;
    for (int64_t i = 0; i < max_m; ++i) {
      run(isa, p.a.data() + i * k, 1, 0, n, alone.data() + i * n, &scratch);
    }
    if (GemmPrepackable(isa, type)) {  // the batches below read the prepacked W
      packed.assign(GemmPackedBytes(type, n, k), 0xAB);
      PackWeightsForGemm(type, p.w.data(), p.args.w_row_bytes, n, k, packed.data());
      w_packed = packed.data();
    }
    std::vector<int64_t> sizes;
    for (int64_t m = 1; m <= 20; ++m) sizes.push_back(m);
    sizes.insert(sizes.end(), {37, 64});
    for (int64_t m : sizes) {
      std::vector<float> c(m * n, NAN);
      run(isa, p.a.data(), m, 0, n, c.data(), &scratch);
      for (int64_t i = 0; i < m; ++i) {
        ASSERT_TRUE(same_row(c.data() + i * n, alone.data() + i * n))
            << IsaName(isa) << " m=" << m << " row " << i;
      }
      // Column ranges as the thread split makes them, each its own call.
      std::vector<float> split(m * n, NAN);
      for (auto [j0, j1] : {std::pair<int64_t, int64_t>{32, 160}, {0, 32}, {160, n}}) {
        run(isa, p.a.data(), m, j0, j1, split.data(), &scratch);
      }
      ASSERT_EQ(std::memcmp(split.data(), c.data(), c.size() * sizeof(float)), 0)
          << IsaName(isa) << " m=" << m << " column split";
    }
    // The same rows in another order, inside a batch of another size.
    std::vector<int64_t> order(37);
    for (int64_t i = 0; i < 37; ++i) order[i] = (i * 17 + 5) % 37;  // a permutation
    std::vector<float> shuffled(37 * k), c(37 * n);
    for (int64_t i = 0; i < 37; ++i) {
      std::copy_n(p.a.data() + order[i] * k, k, shuffled.data() + i * k);
    }
    run(isa, shuffled.data(), 37, 0, n, c.data(), &scratch);
    for (int64_t i = 0; i < 37; ++i) {
      ASSERT_TRUE(same_row(c.data() + i * n, alone.data() + order[i] * n))
          << IsaName(isa) << " shuffled row " << i;
    }
  }
}

// The intended threading: a ThreadPool splits output columns in groups of 32,
// one GemmScratch per thread; the result equals the single-threaded one.
TEST_P(GemmTest, ThreadPoolSplitEqualsSingleThread) {
  const DType type = GetParam();
  const int64_t k = GetDTypeInfo(type)->block_size == kQK_K ? 512 : 288;
  Problem p(type, 23, 100, k, 13);
  std::vector<float> single(23 * 100), threaded(23 * 100, NAN);
  GemmArgs sa = p.args;
  sa.c = single.data();
  GemmScratch scratch;
  Gemm(ActiveIsa(), sa, 0, 100, &scratch);
  ThreadPool pool(3);
  std::vector<GemmScratch> per_thread(3);
  GemmArgs ta = p.args;
  ta.c = threaded.data();
  pool.ParallelForWithThread((100 + 31) / 32, [&](int thread, int64_t g0, int64_t g1) {
    Gemm(ActiveIsa(), ta, g0 * 32, std::min<int64_t>(100, g1 * 32), &per_thread[thread]);
  });
  for (size_t i = 0; i < single.size(); ++i) ASSERT_EQ(threaded[i], single[i]) << i;
}

TEST_P(GemmTest, AgreesWithDecodeDot) {
  const DType type = GetParam();
  Problem p(type, 3, 9, 512, 8);
  std::vector<float> c(3 * 9);
  GemmArgs ga = p.args;
  ga.c = c.data();
  GemmScratch scratch;
  Gemm(ActiveIsa(), ga, 0, 9, &scratch);
  const DType act = GetDTypeInfo(type)->vec_dot_type;
  std::vector<uint8_t> a_conv(RowBytes(act, 512));
  for (int64_t i = 0; i < 3; ++i) {
    ConvertActivations(act, p.a.data() + i * 512, a_conv.data(), 512);
    for (int64_t j = 0; j < 9; ++j) {
      const float d =
          VecDot(ActiveIsa(), type, 512, p.w.data() + j * p.args.w_row_bytes, a_conv.data());
      EXPECT_NEAR(c[i * 9 + j], d, 2 * p.tol[i * 9 + j]) << i << "," << j;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GemmTest,
                         ::testing::Values(DType::kF32, DType::kF16, DType::kBF16, DType::kQ8_0,
                                           DType::kQ4_0, DType::kQ4_K, DType::kQ5_K, DType::kQ6_K),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(GetDTypeInfo(info.param)->name);
                         });

}  // namespace
}  // namespace mneme::kernels
