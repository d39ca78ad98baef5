// ModelRunner: the fast forward pass. One Forward call runs a Batch that mixes
// prefill chunks of some sequences with decode steps of others, reading and
// writing K/V through each sequence's paged block table.
//
// Per layer, over all m rows of the batch at once (shapes per step):
//
//   x [m, dim] ── RmsNorm·attn_norm ──▶ xn [m, dim]
//   q [m, q_dim], k, v [m, kv_dim] = xn · {Wq, Wk, Wv}^T   one pool wake-up
//       (+ biases; qwen3: per-head RmsNorm of q, k)          (ParallelMatMul:
//   RoPE of q, k at each row's own position                  Gemm for every m,
//   StoreKv(k, v) into each row's sequence slot              batch-invariant)
//   att [m, q_dim]: Attention per entry over its sequence's blocks, work
//       items (entry, head) split over the pool
//   x += att · Wo^T (+bo)
//   x += SwiGLU(xn' · Wgate^T, xn' · Wup^T) · Wdown^T,  xn' = RmsNorm·ffn_norm(x)
//
// then, only for the last row of entries that want logits, RmsNorm·output_norm
// and the output projection [num_logits, vocab]. The layer structure is
// model/reference_forward.h's; the numerics are the kernels' (llama.cpp's
// roundings: activations converted to the weight's vec-dot type, F16 KV).
//
// Contract: before Forward, every entry's block table must hold its chunk
// (seq->block_table.num_tokens() >= end; the caller Appends, so running out
// of KV blocks is the caller's RESOURCE_EXHAUSTED, not ours). Forward checks
// everything first and changes nothing on INVALID_ARGUMENT; on success each
// entry's sequence has num_computed = end. Non-finite logits (in debug
// builds also activations, checked after every layer) are DATA_LOSS; the
// batch's sequences are then in an unspecified state (release them).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "engine/batch.h"
#include "engine/matmul.h"
#include "kernels/attention.h"
#include "kernels/ops.h"
#include "kv/block_pool.h"
#include "model/model_config.h"
#include "model/weights.h"
#include "util/status.h"
#include "util/thread_pool.h"

namespace mneme::engine {

// Logits of the entries that asked for them, in batch order.
struct Logits {
  int64_t vocab_size = 0;
  std::vector<int> entry;   // [n] the batch entry of each row
  std::vector<float> data;  // [n][vocab_size]

  int size() const { return static_cast<int>(entry.size()); }
  std::span<const float> Row(int i) const {
    return {data.data() + static_cast<size_t>(i) * vocab_size, static_cast<size_t>(vocab_size)};
  }
};

// The KV shape a pool must have for this model.
kv::KvShape KvShapeFor(const model::ModelConfig& config, kv::KvDType dtype, int block_size = 16);

struct ModelRunnerOptions {
  // Products and attention of fewer multiply-adds run on the calling thread:
  // waking the pool costs microseconds (far more when the machine is busy
  // and a worker is descheduled). Tests set 0 to exercise the split paths.
  int64_t min_parallel_macs = int64_t{1} << 18;
};

class ModelRunner {
 public:
  // `config`, `weights` (and their file), `pool` and `threads` must outlive
  // the runner. INVALID_ARGUMENT if the pool's shape does not fit the model.
  static Result<std::unique_ptr<ModelRunner>> Create(const model::ModelConfig& config,
                                                     const model::ModelWeights& weights,
                                                     kv::BlockPool* pool, ThreadPool* threads,
                                                     const ModelRunnerOptions& options = {});

  Status Forward(const Batch& batch, Logits* out);

  const model::ModelConfig& config() const { return config_; }
  kv::BlockPool* kv_pool() const { return kv_pool_; }

 private:
  ModelRunner(const model::ModelConfig& config, const model::ModelWeights& weights,
              kv::BlockPool* pool, ThreadPool* threads, const ModelRunnerOptions& options);
  Status Validate(const Batch& batch) const;
  void EnsureScratch(int64_t m);
  void Layer(const Batch& batch, int layer);
  void RunAttention(const Batch& batch, const kernels::KvLayerView& kv);

  const model::ModelConfig& config_;
  const model::ModelWeights& weights_;
  kv::BlockPool* kv_pool_;
  ThreadPool* threads_;
  ModelRunnerOptions options_;
  ParallelMatMul matmul_;
  kernels::RopeParams rope_;
  std::vector<kernels::AttentionScratch> attention_scratch_;  // per thread
  std::vector<float> rope_cache_;                             // [rope_dims]
  // Step activations, grown to the largest batch seen ([m][width]).
  std::vector<float> x_, xn_, q_, k_, v_, att_, delta_, gate_, up_;
};

}  // namespace mneme::engine
