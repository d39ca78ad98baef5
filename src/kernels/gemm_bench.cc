// Prefill matmul throughput, one thread: GFLOP/s = 2 m n k / time; and
// decode (m = 1..3) through Gemm in weight GB/s (BM_GemmDecode).
//   gemm_bench --benchmark_filter=f16   (MNEME_KERNELS does not apply: the
//   ISA is a benchmark argument, 2 = avx512, 1 = avx2, 0 = scalar)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "kernels/gemm.h"
#include "kernels/test_util.h"
#include "util/thread_pool.h"

namespace mneme::kernels {
namespace {

void BM_Gemm(benchmark::State& state, DType type) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const Isa isa = static_cast<Isa>(state.range(3));
  if (!IsaSupported(isa)) {
    state.SkipWithError("ISA not supported");
    return;
  }
  if (k % GetDTypeInfo(type)->block_size != 0) {
    state.SkipWithError("k not a multiple of the block size");
    return;
  }
  const std::vector<float> a = testing::RandomFloats(m * k, 1);
  const std::vector<uint8_t> w = testing::RandomRows(type, n, k, 2);
  std::vector<float> c(m * n);
  GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = a.data();
  args.lda = k;
  args.w_type = type;
  args.w = w.data();
  args.w_row_bytes = RowBytes(type, k);
  args.c = c.data();
  args.ldc = n;
  GemmScratch scratch;
  for (auto _ : state) {
    Gemm(isa, args, 0, n, &scratch);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2e-9 * static_cast<double>(m * n * k) * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel(IsaName(isa));
}

// Two threads (the target machine has 2 cores) splitting output columns in
// groups of 32 through the ThreadPool; wall-clock rate.
void BM_GemmTwoThreads(benchmark::State& state, DType type) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const Isa isa = static_cast<Isa>(state.range(3));
  if (!IsaSupported(isa) || k % GetDTypeInfo(type)->block_size != 0) {
    state.SkipWithError("unsupported ISA or shape");
    return;
  }
  const std::vector<float> a = testing::RandomFloats(m * k, 1);
  const std::vector<uint8_t> w = testing::RandomRows(type, n, k, 2);
  std::vector<float> c(m * n);
  GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = a.data();
  args.lda = k;
  args.w_type = type;
  args.w = w.data();
  args.w_row_bytes = RowBytes(type, k);
  args.c = c.data();
  args.ldc = n;
  ThreadPool pool(2);
  std::vector<GemmScratch> scratch(2);
  const int64_t groups = (n + 31) / 32;
  for (auto _ : state) {
    pool.ParallelForWithThread(groups, [&](int thread, int64_t g0, int64_t g1) {
      Gemm(isa, args, g0 * 32, std::min(n, g1 * 32), &scratch[static_cast<size_t>(thread)]);
    });
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2e-9 * static_cast<double>(m * n * k) * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel(std::string(IsaName(isa)) + " x2 threads");
}

// Decode through Gemm (m = 1..3 rows) with the weights prepacked where Gemm
// takes them (as the engine runs it): GB/s of the original weight bytes, to
// compare with dot_bench's MatVec rates on the same 2048 x 2048 matrices.
void BM_GemmDecode(benchmark::State& state, DType type) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const Isa isa = static_cast<Isa>(state.range(3));
  if (!IsaSupported(isa) || k % GetDTypeInfo(type)->block_size != 0) {
    state.SkipWithError("unsupported ISA or shape");
    return;
  }
  const std::vector<float> a = testing::RandomFloats(m * k, 1);
  const std::vector<uint8_t> w = testing::RandomRows(type, n, k, 2);
  std::vector<float> c(m * n);
  GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = a.data();
  args.lda = k;
  args.w_type = type;
  args.w = w.data();
  args.w_row_bytes = RowBytes(type, k);
  args.c = c.data();
  args.ldc = n;
  std::vector<uint8_t> packed;  // prepacked as the engine does, where Gemm takes it
  if (GemmPrepackable(isa, type)) {
    packed.resize(GemmPackedBytes(type, n, k));
    PackWeightsForGemm(type, w.data(), args.w_row_bytes, n, k, packed.data());
    args.w_packed = packed.data();
  }
  GemmScratch scratch;
  for (auto _ : state) {
    Gemm(isa, args, 0, n, &scratch);
    benchmark::DoNotOptimize(c.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(args.w_row_bytes * n) * state.iterations());
  state.SetLabel(std::string(IsaName(isa)) + (packed.empty() ? "" : " prepacked"));
}

void DecodeShapes(benchmark::internal::Benchmark* b) {
  for (int isa : {2, 1}) {
    for (int m : {1, 2, 3}) b->Args({m, 2048, 2048, isa});
  }
  b->Args({1, 16384, 4096, 2});  // larger than the L3: streamed from DRAM
  b->Unit(benchmark::kMicrosecond);
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int isa : {2, 1}) {
    for (auto [n, k] :
         {std::pair{576, 576}, {1536, 576}, {576, 1536}, {1024, 1024}, {2048, 2048}}) {
      b->Args({512, n, k, isa});
    }
  }
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(BM_Gemm, f32, DType::kF32)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Gemm, f16, DType::kF16)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Gemm, bf16, DType::kBF16)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Gemm, q8_0, DType::kQ8_0)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Gemm, q4_0, DType::kQ4_0)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Gemm, q4_K, DType::kQ4_K)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Gemm, q5_K, DType::kQ5_K)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Gemm, q6_K, DType::kQ6_K)->Apply(Shapes);
BENCHMARK_CAPTURE(BM_GemmDecode, f32, DType::kF32)->Apply(DecodeShapes);
BENCHMARK_CAPTURE(BM_GemmDecode, f16, DType::kF16)->Apply(DecodeShapes);
BENCHMARK_CAPTURE(BM_GemmDecode, bf16, DType::kBF16)->Apply(DecodeShapes);
BENCHMARK_CAPTURE(BM_GemmDecode, q8_0, DType::kQ8_0)->Apply(DecodeShapes);
BENCHMARK_CAPTURE(BM_GemmDecode, q4_0, DType::kQ4_0)->Apply(DecodeShapes);
BENCHMARK_CAPTURE(BM_GemmDecode, q4_K, DType::kQ4_K)->Apply(DecodeShapes);
BENCHMARK_CAPTURE(BM_GemmDecode, q5_K, DType::kQ5_K)->Apply(DecodeShapes);
BENCHMARK_CAPTURE(BM_GemmDecode, q6_K, DType::kQ6_K)->Apply(DecodeShapes);
BENCHMARK_CAPTURE(BM_GemmTwoThreads, f32, DType::kF32)
    ->Args({512, 576, 576, 2})
    ->Args({512, 1536, 576, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_GemmTwoThreads, f16, DType::kF16)
    ->Args({512, 576, 576, 2})
    ->Args({512, 1536, 576, 2})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mneme::kernels
