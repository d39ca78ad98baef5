// ParallelMatMul (see matmul.h).
#include "engine/matmul.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "util/check.h"

namespace mneme::engine {
namespace {

constexpr int64_t kChunksPerThread = 4;
static_assert(kColumnGrain % kernels::kGemmPanel == 0);

}  // namespace

ParallelMatMul::ParallelMatMul(ThreadPool* pool, int64_t min_parallel_macs)
    : pool_(pool), min_parallel_macs_(min_parallel_macs) {
  CHECK(pool != nullptr);
  gemm_scratch_.resize(static_cast<size_t>(pool->num_threads()));
}

const void* ParallelMatMul::Packed(const model::WeightView& w, kernels::Isa isa) {
  if (!kernels::GemmPrepackable(isa, w.type)) return nullptr;
  auto [it, inserted] = packed_.try_emplace(w.data);
  if (inserted) {
    it->second.resize(kernels::GemmPackedBytes(w.type, w.rows, w.cols));
    kernels::PackWeightsForGemm(w.type, w.data, w.row_bytes, w.rows, w.cols, it->second.data());
  }
  return it->second.data();
}

void ParallelMatMul::Run(std::span<const MatMulJob> jobs, int64_t m) {
  if (m == 0 || jobs.empty()) return;
  const kernels::Isa isa = kernels::ActiveIsa();
  std::vector<const void*> packed(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) packed[j] = Packed(*jobs[j].w, isa);
  // Offsets of each job in the concatenated column space, in grains.
  std::vector<int64_t> grain_begin(jobs.size() + 1, 0);
  for (size_t j = 0; j < jobs.size(); ++j) {
    grain_begin[j + 1] = grain_begin[j] + (jobs[j].w->rows + kColumnGrain - 1) / kColumnGrain;
  }
  const auto work = [&](int thread, int64_t g_begin, int64_t g_end) {
    for (size_t j = 0; j < jobs.size(); ++j) {
      const int64_t lo = std::max(g_begin, grain_begin[j]);
      const int64_t hi = std::min(g_end, grain_begin[j + 1]);
      if (lo >= hi) continue;
      const model::WeightView& w = *jobs[j].w;
      const int64_t c_begin = (lo - grain_begin[j]) * kColumnGrain;
      const int64_t c_end = std::min(w.rows, (hi - grain_begin[j]) * kColumnGrain);
      const int64_t ldy = jobs[j].ldy > 0 ? jobs[j].ldy : w.rows;
      kernels::GemmArgs args;
      args.m = m;
      args.n = w.rows;
      args.k = w.cols;
      args.a = jobs[j].x;
      args.lda = w.cols;
      args.w_type = w.type;
      args.w = w.data;
      args.w_row_bytes = w.row_bytes;
      args.c = jobs[j].y;
      args.ldc = ldy;
      args.w_packed = packed[j];
      kernels::Gemm(isa, args, c_begin, c_end, &gemm_scratch_[static_cast<size_t>(thread)]);
    }
  };
  const int64_t grains = grain_begin.back();
  int64_t macs = 0;
  for (const MatMulJob& job : jobs) macs += job.w->rows * job.w->cols;
  macs *= m;
  const int threads = pool_->num_threads();
  if (threads > 1 && macs >= min_parallel_macs_) {
    // Dynamic chunks (as ggml's mul_mat): participants take chunks from a
    // shared counter, so a worker the OS has descheduled on a busy machine
    // holds back only the chunk it took, not a fixed 1/threads share.
    const int64_t chunk = std::max<int64_t>(1, grains / (int64_t{threads} * kChunksPerThread));
    std::atomic<int64_t> next{0};
    pool_->ParallelForWithThread(threads, [&](int thread, int64_t, int64_t) {
      for (int64_t g = next.fetch_add(chunk); g < grains; g = next.fetch_add(chunk)) {
        work(thread, g, std::min(grains, g + chunk));
      }
    });
  } else {
    work(0, 0, grains);
  }
}

}  // namespace mneme::engine
