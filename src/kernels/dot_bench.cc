// Decode matrix-vector throughput, one thread: weight GB/s streamed through
// MatVec for a [rows x k] weight matrix (sizes chosen to exceed L2 and, for
// f32/f16, the L3 slice). range(2): 2 = avx512, 1 = avx2, 0 = scalar.
#include <benchmark/benchmark.h>

#include <vector>

#include "kernels/dot.h"
#include "kernels/test_util.h"

namespace mneme::kernels {
namespace {

void BM_MatVec(benchmark::State& state, DType type) {
  const int64_t rows = state.range(0), k = state.range(1);
  const Isa isa = static_cast<Isa>(state.range(2));
  if (!IsaSupported(isa)) {
    state.SkipWithError("ISA not supported");
    return;
  }
  const std::vector<uint8_t> w = testing::RandomRows(type, rows, k, 3);
  const std::vector<float> x = testing::RandomFloats(k, 4);
  const DType act = GetDTypeInfo(type)->vec_dot_type;
  std::vector<uint8_t> a(RowBytes(act, k));
  std::vector<float> out(rows);
  const size_t row_bytes = RowBytes(type, k);
  for (auto _ : state) {
    ConvertActivations(act, x.data(), a.data(), k);
    MatVec(isa, type, k, w.data(), row_bytes, a.data(), out.data(), 0, rows);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(row_bytes * rows) * state.iterations());
  state.SetLabel(IsaName(isa));
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int isa : {2, 1, 0}) b->Args({2048, 2048, isa});
  b->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_MatVec, f32, DType::kF32)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_MatVec, f16, DType::kF16)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_MatVec, bf16, DType::kBF16)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_MatVec, q8_0, DType::kQ8_0)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_MatVec, q4_0, DType::kQ4_0)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_MatVec, q4_K, DType::kQ4_K)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_MatVec, q5_K, DType::kQ5_K)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_MatVec, q6_K, DType::kQ6_K)->Apply(Shapes);

}  // namespace
}  // namespace mneme::kernels
