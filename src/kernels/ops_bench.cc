// Row ops, one thread: elements/s of RmsNorm, Softmax, SwiGLU, Add and RoPE
// at engine-sized rows. range(1): 2 = avx512, 1 = avx2, 0 = scalar.
#include <benchmark/benchmark.h>

#include <vector>

#include "kernels/ops.h"
#include "kernels/test_util.h"

namespace mneme::kernels {
namespace {

bool Setup(benchmark::State& state, Isa* isa) {
  *isa = static_cast<Isa>(state.range(1));
  state.SetLabel(IsaName(*isa));
  if (IsaSupported(*isa)) return true;
  state.SkipWithError("ISA not supported");
  return false;
}

void BM_RmsNorm(benchmark::State& state) {
  Isa isa;
  if (!Setup(state, &isa)) return;
  const int64_t n = state.range(0);
  const auto x = testing::RandomFloats(n, 1), w = testing::RandomFloats(n, 2);
  std::vector<float> out(n);
  for (auto _ : state) {
    RmsNorm(isa, x.data(), w.data(), 1e-5f, out.data(), n);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_Softmax(benchmark::State& state) {
  Isa isa;
  if (!Setup(state, &isa)) return;
  const int64_t n = state.range(0);
  const auto x = testing::RandomFloats(n, 3, 4.f);
  std::vector<float> y(n);
  for (auto _ : state) {
    y = x;
    Softmax(isa, y.data(), n, 0.125f, nullptr);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_SwiGlu(benchmark::State& state) {
  Isa isa;
  if (!Setup(state, &isa)) return;
  const int64_t n = state.range(0);
  const auto g = testing::RandomFloats(n, 4, 3.f), u = testing::RandomFloats(n, 5);
  std::vector<float> out(n);
  for (auto _ : state) {
    SwiGlu(isa, g.data(), u.data(), out.data(), n);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_Add(benchmark::State& state) {
  Isa isa;
  if (!Setup(state, &isa)) return;
  const int64_t n = state.range(0);
  const auto a = testing::RandomFloats(n, 6), b = testing::RandomFloats(n, 7);
  std::vector<float> out(n);
  for (auto _ : state) {
    Add(isa, a.data(), b.data(), out.data(), n);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * n);
}

// One token's q (32 heads) and k (8 heads) of head_dim 128, normal / neox:
// cache + rotation, per token.
void BM_Rope(benchmark::State& state, RopeMode mode) {
  Isa isa;
  if (!Setup(state, &isa)) return;
  const int hd = static_cast<int>(state.range(0));
  auto x = testing::RandomFloats(40 * hd, 8);
  std::vector<float> cache(hd);
  RopeParams p{mode, hd, 500000.f, 1.f, nullptr};
  int32_t pos = 100;
  for (auto _ : state) {
    RopeRows(isa, p, &pos, x.data(), 1, 40, hd, cache.data());
    benchmark::DoNotOptimize(x.data());
  }
  state.SetItemsProcessed(state.iterations() * 40 * hd);
}

void Rows(benchmark::internal::Benchmark* b) {
  for (int64_t n : {2048, 8192}) {
    for (int isa : {2, 1, 0}) b->Args({n, isa});
  }
}

BENCHMARK(BM_RmsNorm)->Apply(Rows);
BENCHMARK(BM_Softmax)->Apply(Rows);
BENCHMARK(BM_SwiGlu)->Apply(Rows);
BENCHMARK(BM_Add)->Apply(Rows);
BENCHMARK_CAPTURE(BM_Rope, normal, RopeMode::kNormal)->Args({128, 2})->Args({128, 0});
BENCHMARK_CAPTURE(BM_Rope, neox, RopeMode::kNeox)->Args({128, 2})->Args({128, 0});

}  // namespace
}  // namespace mneme::kernels
