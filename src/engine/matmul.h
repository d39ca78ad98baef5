// ParallelMatMul: the engine's weight products, Y[m, rows] = X[m, cols] · W^T
// for one or several weights at once, split over the thread pool.
//
// Several products that read the same step's activations (Q, K and V; gate
// and up) go into one ParallelFor over their concatenated output columns,
// so the pool wakes once per group, not once per matrix. Each thread calls
// kernels::Gemm on its column ranges, for every m: decode steps too, since
// Gemm gives a row the same bits whatever m and the row's place in the batch
// (a partial register tile runs the kernel for its own row count), while
// MatVec sums in another order. So a token's K/V and logits do not depend
// on how the scheduler batched or chunked it (docs/kernels.md, "Batch
// invariance").
//
// On AVX-512, F32/F16/BF16, Q8_0 and Q4_K weights are rearranged into
// Gemm's panel layout once (kernels::PackWeightsForGemm: Prepack at load, or
// on first use) and kept: decode then streams them without per-call
// rearranging (the products are the same bits either way). The copy is as
// large as the weights (Q8_0 +18%, Q4_K +3%); the mapped originals are not
// read again by the products.
//
// Column ranges are multiples of kColumnGrain so that Gemm's register tiles
// stay full; threads take them in chunks from a shared counter (a busy
// machine deschedules workers). The numbers do not depend on the split
// (Gemm computes each output column independently).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "kernels/gemm.h"
#include "model/weights.h"
#include "util/thread_pool.h"

namespace mneme::engine {

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

  // Prepacks `w` now if Gemm takes it prepacked (see above).
  void Prepack(const model::WeightView& w) { Packed(w, kernels::ActiveIsa()); }

 private:
  ThreadPool* pool_;
  int64_t min_parallel_macs_;
  // The prepacked copy of a weight (see above), made on first use.
  const void* Packed(const model::WeightView& w, kernels::Isa isa);

  std::vector<kernels::GemmScratch> gemm_scratch_;  // per thread
  std::unordered_map<const void*, std::vector<uint8_t>> packed_;  // by WeightView::data
};

}  // namespace mneme::engine
