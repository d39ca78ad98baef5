// ThreadPool overhead: wall time of one ParallelFor over trivial chunks, the
// fixed cost every parallel kernel call pays (decode issues ~200 per token).
#include <benchmark/benchmark.h>

#include <atomic>

#include "util/thread_pool.h"

namespace mneme {
namespace {

void BM_ParallelForOverhead(benchmark::State& state) {
  ThreadPool pool(static_cast<int>(state.range(0)));
  std::atomic<int64_t> sink{0};
  for (auto _ : state) {
    pool.ParallelFor(64, [&](int64_t begin, int64_t end) {
      sink.fetch_add(end - begin, std::memory_order_relaxed);
    });
  }
  benchmark::DoNotOptimize(sink.load());
}
BENCHMARK(BM_ParallelForOverhead)->Arg(1)->Arg(2)->UseRealTime();

}  // namespace
}  // namespace mneme
