// Attention over a paged KV cache: every level (scalar f32 loops, AVX2,
// AVX-512) against AttentionReference (double dots and softmax, same F16
// roundings), on random data with shuffled block tables; plus hand cases that
// need no reference, and head-range splits.
//
// Error bound per output element (docs/kernels.md), with P the reference
// probabilities:
//   F32 KV: |out - ref| <= 1e-5 * sum_p P_p |V_pd| + 1e-7
//   F16 KV: |out - ref| <= 2^-10 * sum_p P_p |V_pd| + 1e-7   (a probability
//           may round to the other F16 neighbour: one F16 ulp = 2^-10 P)
#include "kernels/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/test_util.h"

namespace mneme::kernels {
namespace {

// A KV pool of `n_blocks` blocks for one layer, K and V of a block adjacent
// (block_stride = 2 tiles), filled with `len` random tokens of a sequence
// whose block table is a shuffled set of block indices.
struct Fixture {
  KvLayerView kv;
  std::vector<uint8_t> pool;
  std::vector<int32_t> table;
  std::vector<float> q, out, ref;
  AttentionArgs args;

  Fixture(DType type, int bs, int n_heads, int n_kv, int hd, int pos0, int n_rows, uint32_t seed) {
    const int len = pos0 + n_rows;
    const int used = (len + bs - 1) / bs;
    const int n_blocks = used + 3;
    kv.type = type;
    kv.block_size = bs;
    kv.n_kv_heads = n_kv;
    kv.head_dim = hd;
    const size_t kv_bytes = static_cast<size_t>(n_kv) * bs * hd * kv.ElementSize();
    kv.block_stride = 2 * kv_bytes;
    pool.assign(kv.block_stride * n_blocks, 0xff);  // unused slots: F16 NaN, never read
    kv.k = pool.data();
    kv.v = pool.data() + kv_bytes;
    std::vector<int32_t> all(n_blocks);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), std::mt19937(seed));
    table.assign(all.begin(), all.begin() + used);
    for (int p = 0; p < len; ++p) {
      const auto k = testing::RandomFloats(n_kv * hd, seed * 1000 + p);
      const auto v = testing::RandomFloats(n_kv * hd, seed * 1000 + p + 500000);
      StoreKv(kv, table.data(), p, k.data(), v.data());
    }
    q = testing::RandomFloats(static_cast<int64_t>(n_rows) * n_heads * hd, seed + 77, 1.5f);
    out.assign(q.size(), -1.f);
    ref.assign(q.size(), -2.f);
    args.q = q.data();
    args.n_rows = n_rows;
    args.n_heads = n_heads;
    args.pos0 = pos0;
    args.block_table = table.data();
    args.kv = kv;
    args.scale = 1.f / std::sqrt(static_cast<float>(hd));
  }

  void Run(Isa isa) {
    AttentionScratch scratch;
    args.out = out.data();
    Attention(isa, args, 0, args.n_heads, &scratch);
    args.out = ref.data();
    AttentionReference(args, 0, args.n_heads);
  }

  // sum_p P_p |V_pd| is at most max |V_pd|; bound with the row's max |V|.
  double MaxAbsV() const {
    double m = 0;
    for (int p = 0; p < args.pos0 + args.n_rows; ++p) {
      for (int h = 0; h < kv.n_kv_heads; ++h) {
        const uint8_t* tile = kv.VTile(table[p / kv.block_size], h);
        for (int d = 0; d < kv.head_dim; ++d) {
          const size_t i = static_cast<size_t>(p % kv.block_size) * kv.head_dim + d;
          const double x = kv.type == DType::kF16
                               ? F16ToF32(reinterpret_cast<const uint16_t*>(tile)[i])
                               : reinterpret_cast<const float*>(tile)[i];
          m = std::max(m, std::fabs(x));
        }
      }
    }
    return m;
  }
};

struct Shape {
  int bs, n_heads, n_kv, hd, pos0, n_rows;
};

TEST(AttentionTest, AllLevelsMatchReference) {
  const Shape shapes[] = {
      {16, 8, 8, 64, 0, 1},    {16, 8, 4, 64, 37, 1},  {32, 8, 2, 128, 100, 1},
      {16, 4, 4, 8, 0, 23},    {32, 8, 8, 64, 5, 40},  {16, 16, 4, 128, 61, 19},
      {32, 12, 6, 64, 512, 1}, {16, 8, 2, 8, 70, 9},   {16, 2, 1, 80, 33, 3},
      {32, 4, 1, 256, 47, 2},  {16, 2, 2, 320, 20, 2}, {16, 2, 1, 12, 17, 4},
  };
  double worst[2] = {0, 0};
  for (DType type : {DType::kF16, DType::kF32}) {
    for (const Shape& s : shapes) {
      Fixture f(type, s.bs, s.n_heads, s.n_kv, s.hd, s.pos0, s.n_rows, s.hd + s.pos0);
      const double tol_rel = type == DType::kF16 ? 0x1p-10 : 1e-5;
      const double max_v = f.MaxAbsV();
      const double tol = tol_rel * max_v + 1e-7;
      for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
        if (!IsaSupported(isa)) continue;
        f.Run(isa);
        for (size_t i = 0; i < f.out.size(); ++i) {
          const double err = std::fabs(f.out[i] - f.ref[i]);
          worst[type == DType::kF16] = std::max(worst[type == DType::kF16], err / max_v);
          ASSERT_LE(err, tol) << IsaName(isa) << " type " << static_cast<int>(type) << " bs "
                              << s.bs << " heads " << s.n_heads << "/" << s.n_kv << " hd " << s.hd
                              << " pos0 " << s.pos0 << " rows " << s.n_rows << " i " << i;
        }
      }
    }
  }
  std::printf("worst |out - ref| / max|V|: f32 %.3g, f16 %.3g\n", worst[0], worst[1]);
}

// One position: softmax weight 1, so the output is that position's V exactly.
TEST(AttentionTest, SinglePositionReturnsV) {
  for (DType type : {DType::kF16, DType::kF32}) {
    Fixture f(type, 16, 4, 2, 64, 0, 1, 3);
    for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
      if (!IsaSupported(isa)) continue;
      f.Run(isa);
      for (int h = 0; h < 4; ++h) {
        const uint8_t* tile = f.kv.VTile(f.table[0], h / 2);
        for (int d = 0; d < 64; ++d) {
          const float v = type == DType::kF16 ? F16ToF32(reinterpret_cast<const uint16_t*>(tile)[d])
                                              : reinterpret_cast<const float*>(tile)[d];
          ASSERT_EQ(f.out[h * 64 + d], v) << IsaName(isa);
        }
      }
    }
  }
}

// Equal keys: uniform weights 1/n, the output is the mean of V (F32 KV).
TEST(AttentionTest, EqualKeysAverageV) {
  const int n = 37;
  Fixture f(DType::kF32, 16, 1, 1, 8, n - 1, 1, 4);
  std::vector<float> k(8, 0.5f), v(8);
  std::vector<double> mean(8, 0);
  for (int p = 0; p < n; ++p) {
    for (int d = 0; d < 8; ++d) mean[d] += (v[d] = static_cast<float>(p * 8 + d)) / n;
    StoreKv(f.kv, f.table.data(), p, k.data(), v.data());
  }
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (!IsaSupported(isa)) continue;
    std::vector<float> out(8);
    f.args.out = out.data();
    AttentionScratch scratch;
    Attention(isa, f.args, 0, 1, &scratch);
    for (int d = 0; d < 8; ++d) EXPECT_NEAR(out[d], mean[d], 1e-5 * mean[d]) << IsaName(isa);
  }
}

// Head ranges run separately (as the thread pool splits them) give the same
// bits as one call.
TEST(AttentionTest, HeadRangesComposeBitExactly) {
  Fixture f(DType::kF16, 16, 8, 2, 64, 30, 5, 9);
  AttentionScratch s1, s2;
  std::vector<float> whole(f.q.size()), split(f.q.size());
  f.args.out = whole.data();
  Attention(ActiveIsa(), f.args, 0, 8, &s1);
  f.args.out = split.data();
  Attention(ActiveIsa(), f.args, 0, 3, &s1);
  Attention(ActiveIsa(), f.args, 3, 8, &s2);
  for (size_t i = 0; i < whole.size(); ++i) ASSERT_EQ(FloatBits(whole[i]), FloatBits(split[i]));
}

// A row's output is bit-identical whether it is computed in a prefill chunk
// (rows sharing K / V loads) or alone as a decode step: chunking, prefix
// sharing and batching cannot change tokens.
TEST(AttentionTest, RowsInAChunkEqualRowsAlone) {
  for (DType type : {DType::kF16, DType::kF32}) {
    for (int hd : {8, 48, 64, 80, 128, 320}) {
      Fixture f(type, 16, 4, 2, hd, 21, 13, hd);
      for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
        if (!IsaSupported(isa)) continue;
        AttentionScratch scratch;
        std::vector<float> chunk(f.q.size()), alone(f.q.size());
        f.args.out = chunk.data();
        Attention(isa, f.args, 0, 4, &scratch);
        const size_t row = 4 * static_cast<size_t>(hd);
        for (int r = 0; r < 13; ++r) {
          AttentionArgs one = f.args;
          one.q = f.q.data() + r * row;
          one.out = alone.data() + r * row;
          one.n_rows = 1;
          one.pos0 = f.args.pos0 + r;
          Attention(isa, one, 0, 4, &scratch);
        }
        for (size_t i = 0; i < chunk.size(); ++i) {
          ASSERT_EQ(chunk[i], alone[i]) << IsaName(isa) << " hd " << hd << " i " << i;
        }
      }
    }
  }
}

TEST(AttentionTest, StoreKvRoundsToF16) {
  Fixture f(DType::kF16, 16, 2, 2, 8, 0, 1, 5);
  std::vector<float> k(16), v(16);
  for (int i = 0; i < 16; ++i) {
    k[i] = 1.f + 0x1p-12f * i;  // some round up, some down, one tie
    v[i] = -3.f * i;
  }
  StoreKv(f.kv, f.table.data(), 0, k.data(), v.data());
  for (int h = 0; h < 2; ++h) {
    const auto* kt = reinterpret_cast<const uint16_t*>(f.kv.KTile(f.table[0], h));
    const auto* vt = reinterpret_cast<const uint16_t*>(f.kv.VTile(f.table[0], h));
    for (int d = 0; d < 8; ++d) {
      EXPECT_EQ(kt[d], F32ToF16(k[h * 8 + d]));
      EXPECT_EQ(vt[d], F32ToF16(v[h * 8 + d]));
    }
  }
}

}  // namespace
}  // namespace mneme::kernels
