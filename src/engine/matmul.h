// ParallelMatMul: the engine's weight products, Y[m, rows] = X[m, cols] · W^T
// for one or several weights at once, split over the thread pool.
//
// Several products that read the same step's activations (Q, K and V; gate
// and up) go into one ParallelFor over their concatenated output columns,
// so the pool wakes once per group, not once per matrix. Each thread calls
// kernels::Gemm on its column ranges (prefill, m >= kMinGemmRows) or
// kernels::MatVec on pre-converted activation rows (decode: m small, the
// product is a weight stream and Gemm's packing would not pay).
//
// Column ranges are multiples of kColumnGrain so that Gemm's register tiles
// stay full; threads take them in chunks from a shared counter (a busy
// machine deschedules workers). The numbers do not depend on the split
// (Gemm and MatVec compute each output column independently).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/gemm.h"
#include "model/weights.h"
#include "util/thread_pool.h"

namespace mneme::engine {

inline constexpr int64_t kMinGemmRows = 4;
inline constexpr int64_t kColumnGrain = 32;

struct MatMulJob {
  const model::WeightView* w = nullptr;  // [cols, rows]: `rows` output columns
  const float* x = nullptr;              // [m][w->cols]
  float* y = nullptr;                    // [m][ldy], columns 0..w->rows
  int64_t ldy = 0;                       // 0: w->rows
};

class ParallelMatMul {
 public:
  // Groups of fewer than `min_parallel_macs` multiply-adds run on the
  // calling thread (waking the pool costs more).
  ParallelMatMul(ThreadPool* pool, int64_t min_parallel_macs);

  // Runs every job over the same m rows.
  void Run(std::span<const MatMulJob> jobs, int64_t m);

 private:
  ThreadPool* pool_;
  int64_t min_parallel_macs_;
  std::vector<kernels::GemmScratch> gemm_scratch_;  // per thread
  std::vector<std::vector<uint8_t>> converted_;     // per job: [m] converted X rows
};

}  // namespace mneme::engine
