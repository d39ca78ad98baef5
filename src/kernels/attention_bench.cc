// Attention over a paged KV cache, one thread, all heads of one layer:
// decode (one query row at context `ctx`) and a prefill chunk (`rows` query
// rows ending at context `ctx`). Reported time is per call; µs/token =
// time / rows. range: {ctx, rows, n_heads, n_kv_heads, head_dim, isa, f16, block_size}.
#include <benchmark/benchmark.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/attention.h"
#include "kernels/test_util.h"

namespace mneme::kernels {
namespace {

void BM_Attention(benchmark::State& state) {
  const int ctx = static_cast<int>(state.range(0)), rows = static_cast<int>(state.range(1));
  const int n_heads = static_cast<int>(state.range(2)), n_kv = static_cast<int>(state.range(3));
  const int hd = static_cast<int>(state.range(4));
  const Isa isa = static_cast<Isa>(state.range(5));
  const DType type = state.range(6) != 0 ? DType::kF16 : DType::kF32;
  if (!IsaSupported(isa)) {
    state.SkipWithError("ISA not supported");
    return;
  }
  KvLayerView kv;
  kv.type = type;
  kv.block_size = state.range(7);
  kv.n_kv_heads = n_kv;
  kv.head_dim = hd;
  const size_t tile = static_cast<size_t>(n_kv) * kv.block_size * hd * kv.ElementSize();
  kv.block_stride = 2 * tile;
  const int n_blocks = (ctx + kv.block_size - 1) / kv.block_size;
  std::vector<uint8_t> pool(kv.block_stride * n_blocks);
  kv.k = pool.data();
  kv.v = pool.data() + tile;
  std::vector<int32_t> table(n_blocks);
  std::iota(table.rbegin(), table.rend(), 0);  // not in memory order
  for (int p = 0; p < ctx; ++p) {
    const auto k = testing::RandomFloats(n_kv * hd, p), v = testing::RandomFloats(n_kv * hd, p + 1);
    StoreKv(kv, table.data(), p, k.data(), v.data());
  }
  const auto q = testing::RandomFloats(static_cast<int64_t>(rows) * n_heads * hd, 7);
  std::vector<float> out(q.size());
  AttentionArgs args;
  args.q = q.data();
  args.out = out.data();
  args.n_rows = rows;
  args.n_heads = n_heads;
  args.pos0 = ctx - rows;
  args.block_table = table.data();
  args.kv = kv;
  args.scale = 1.f / std::sqrt(static_cast<float>(hd));
  AttentionScratch scratch;
  for (auto _ : state) {
    Attention(isa, args, 0, n_heads, &scratch);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["us_per_token"] = benchmark::Counter(
      static_cast<double>(rows) * state.iterations(),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
  state.SetLabel(std::string(IsaName(isa)) + (type == DType::kF16 ? " f16" : " f32"));
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int f16 : {1, 0}) {
    for (int isa : {2, 1, 0}) {
      for (int ctx : {512, 2048}) b->Args({ctx, 1, 8, 8, 64, isa, f16, 16});  // decode, MHA
    }
    b->Args({2048, 1, 8, 8, 64, 2, f16, 32});    // block size 32
    b->Args({2048, 1, 8, 8, 64, 2, f16, 128});   // block size 128
    b->Args({2048, 1, 32, 8, 128, 2, f16, 16});  // decode, GQA 4, Llama-3-8B-like
    b->Args({512, 512, 8, 8, 64, 2, f16, 16});   // 512-token prefill chunk
  }
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_Attention)->Apply(Shapes);

}  // namespace
}  // namespace mneme::kernels
