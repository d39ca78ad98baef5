// ModelRunner: the batched forward pass over the paged KV cache (see
// model_runner.h for the per-layer data flow).
#include "engine/model_runner.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>

#include "kernels/quantize.h"
#include "util/check.h"

namespace mneme::engine {

kv::KvShape KvShapeFor(const model::ModelConfig& config, kv::KvDType dtype, int block_size) {
  kv::KvShape shape;
  shape.n_layers = static_cast<int>(config.num_layers);
  shape.n_kv_heads = static_cast<int>(config.num_kv_heads);
  shape.head_dim = static_cast<int>(config.head_dim);
  shape.block_size = block_size;
  shape.dtype = dtype;
  return shape;
}

Result<std::unique_ptr<ModelRunner>> ModelRunner::Create(const model::ModelConfig& config,
                                                         const model::ModelWeights& weights,
                                                         kv::BlockPool* pool, ThreadPool* threads,
                                                         const ModelRunnerOptions& options) {
  if (pool == nullptr || threads == nullptr) {
    return InvalidArgument("ModelRunner needs a KV block pool and a thread pool");
  }
  const kv::KvShape& s = pool->shape();
  if (s.n_layers != config.num_layers || s.n_kv_heads != config.num_kv_heads ||
      s.head_dim != config.head_dim) {
    return InvalidArgument(
        "the KV pool's shape (" + std::to_string(s.n_layers) + " layers, " +
        std::to_string(s.n_kv_heads) + " kv heads of " + std::to_string(s.head_dim) +
        ") does not fit the model (" + std::to_string(config.num_layers) + ", " +
        std::to_string(config.num_kv_heads) + ", " + std::to_string(config.head_dim) + ")");
  }
  return std::unique_ptr<ModelRunner>(new ModelRunner(config, weights, pool, threads, options));
}

ModelRunner::ModelRunner(const model::ModelConfig& config, const model::ModelWeights& weights,
                         kv::BlockPool* pool, ThreadPool* threads,
                         const ModelRunnerOptions& options)
    : config_(config),
      weights_(weights),
      kv_pool_(pool),
      threads_(threads),
      options_(options),
      matmul_(threads, options.min_parallel_macs) {
  rope_.mode = config.rope_type == model::RopeType::kNormal ? kernels::RopeMode::kNormal
                                                            : kernels::RopeMode::kNeox;
  rope_.n_dims = static_cast<int>(config.rope_dims);
  rope_.freq_base = config.rope_freq_base;
  rope_.freq_scale = config.rope_freq_scale;
  rope_.freq_factors = weights.rope_freqs.present() ? weights.rope_freqs.f32() : nullptr;
  rope_cache_.resize(static_cast<size_t>(std::max<int64_t>(config.rope_dims, 2)));
  attention_scratch_.resize(static_cast<size_t>(threads->num_threads()));
  // Weights Gemm reads prepacked are arranged once, here (matmul.h).
  for (const model::LayerWeights& l : weights.layers) {
    for (const model::WeightView* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_gate, &l.ffn_up,
                                       &l.ffn_down}) {
      matmul_.Prepack(*w);
    }
  }
  matmul_.Prepack(weights.output);
}

Status ModelRunner::Validate(const Batch& batch) const {
  if (batch.empty()) return InvalidArgument("nothing to run: the batch is empty");
  for (int e = 0; e < batch.num_entries(); ++e) {
    const Sequence* seq = batch.seqs()[static_cast<size_t>(e)];
    const int start = batch.starts()[static_cast<size_t>(e)];
    const int end = batch.ends()[static_cast<size_t>(e)];
    const std::string who = "sequence " + std::to_string(seq->id) + ": ";
    if (seq->num_computed != start) {
      return InvalidArgument(who + "the batch starts at " + std::to_string(start) + " but " +
                             std::to_string(seq->num_computed) + " positions are computed");
    }
    if (end > config_.context_length) {
      return InvalidArgument(who + std::to_string(end) +
                             " tokens would exceed the context length of " +
                             std::to_string(config_.context_length));
    }
    if (seq->block_table.pool() != kv_pool_) {
      return InvalidArgument(who + "its block table is not on this runner's KV pool");
    }
    if (seq->block_table.num_tokens() < end) {
      return InvalidArgument(
          who + "its block table holds " + std::to_string(seq->block_table.num_tokens()) +
          " positions; Append room for " + std::to_string(end) + " before Forward");
    }
  }
  for (int r = 0; r < batch.num_rows(); ++r) {
    const TokenId t = batch.token_ids()[static_cast<size_t>(r)];
    if (t < 0 || t >= config_.vocab_size) {
      return InvalidArgument("token id " + std::to_string(t) + " is outside the vocabulary (" +
                             std::to_string(config_.vocab_size) + " tokens)");
    }
  }
  return Status::Ok();
}

void ModelRunner::EnsureScratch(int64_t m) {
  const auto grow = [m](std::vector<float>& v, int64_t width) {
    const size_t need = static_cast<size_t>(m * width);
    if (v.size() < need) v.resize(need);
  };
  const model::ModelConfig& c = config_;
  grow(x_, c.dim);
  grow(xn_, c.dim);
  grow(delta_, c.dim);
  grow(q_, c.q_dim());
  grow(att_, c.q_dim());
  grow(k_, c.kv_dim());
  grow(v_, c.kv_dim());
  grow(gate_, c.ffn_dim);
  grow(up_, c.ffn_dim);
}

namespace {

void AddBiasRows(const model::WeightView& bias, float* y, int64_t m) {
  if (!bias.present()) return;
  for (int64_t r = 0; r < m; ++r)
    kernels::Add(y + r * bias.cols, bias.f32(), y + r * bias.cols, bias.cols);
}

}  // namespace

void ModelRunner::RunAttention(const Batch& batch, const kernels::KvLayerView& kv) {
  const int heads = static_cast<int>(config_.num_heads);
  const int n_entries = batch.num_entries();
  const float scale = 1.0f / std::sqrt(static_cast<float>(config_.head_dim));
  const int64_t q_dim = config_.q_dim();
  // Work item i = (entry i / heads, head i % heads); a chunk of items is a
  // few (entry, head range) calls.
  const auto work = [&](int thread, int64_t begin, int64_t end) {
    kernels::AttentionScratch* scratch = &attention_scratch_[static_cast<size_t>(thread)];
    int64_t i = begin;
    while (i < end) {
      const int e = static_cast<int>(i / heads);
      const int h0 = static_cast<int>(i % heads);
      const int h1 = static_cast<int>(std::min<int64_t>(heads, h0 + (end - i)));
      const int row0 = batch.row_begin()[static_cast<size_t>(e)];
      kernels::AttentionArgs a;
      a.q = q_.data() + row0 * q_dim;
      a.out = att_.data() + row0 * q_dim;
      a.n_rows = batch.row_begin()[static_cast<size_t>(e) + 1] - row0;
      a.n_heads = heads;
      a.pos0 = batch.starts()[static_cast<size_t>(e)];
      a.block_table = batch.seqs()[static_cast<size_t>(e)]->block_table.blocks().data();
      a.kv = kv;
      a.scale = scale;
      kernels::Attention(a, h0, h1, scratch);
      i += h1 - h0;
    }
  };
  const int64_t items = int64_t{n_entries} * heads;
  // Multiply-adds (q·k and p·v over the attended positions): a short
  // context is cheaper than waking the pool.
  int64_t macs = 0;
  for (int e = 0; e < n_entries; ++e) {
    const int64_t rows =
        batch.row_begin()[static_cast<size_t>(e) + 1] - batch.row_begin()[static_cast<size_t>(e)];
    macs += rows * (batch.starts()[static_cast<size_t>(e)] + rows) * 2 * q_dim;
  }
  if (threads_->num_threads() > 1 && items > 1 && macs >= options_.min_parallel_macs) {
    // Dynamic chunks of (entry, head) items, as in ParallelMatMul.
    const int threads = threads_->num_threads();
    const int64_t chunk = std::max<int64_t>(1, items / (int64_t{threads} * 4));
    std::atomic<int64_t> next{0};
    threads_->ParallelForWithThread(threads, [&](int thread, int64_t, int64_t) {
      for (int64_t i = next.fetch_add(chunk); i < items; i = next.fetch_add(chunk)) {
        work(thread, i, std::min(items, i + chunk));
      }
    });
  } else {
    work(0, 0, items);
  }
}

void ModelRunner::Layer(const Batch& batch, int layer) {
  const model::ModelConfig& c = config_;
  const model::LayerWeights& l = weights_.layers[static_cast<size_t>(layer)];
  const int64_t m = batch.num_rows();
  const kernels::Isa isa = kernels::ActiveIsa();

  kernels::RmsNormRows(isa, x_.data(), l.attn_norm.f32(), c.rms_eps, xn_.data(), c.dim, m);
  const MatMulJob qkv[] = {{&l.wq, xn_.data(), q_.data(), 0},
                           {&l.wk, xn_.data(), k_.data(), 0},
                           {&l.wv, xn_.data(), v_.data(), 0}};
  matmul_.Run(qkv, m);
  AddBiasRows(l.bq, q_.data(), m);
  AddBiasRows(l.bk, k_.data(), m);
  AddBiasRows(l.bv, v_.data(), m);
  if (c.has_qk_norm) {
    kernels::RmsNormRows(isa, q_.data(), l.q_norm.f32(), c.rms_eps, q_.data(), c.head_dim,
                         m * c.num_heads);
    kernels::RmsNormRows(isa, k_.data(), l.k_norm.f32(), c.rms_eps, k_.data(), c.head_dim,
                         m * c.num_kv_heads);
  }
  const int32_t* pos = batch.positions().data();
  const int hd = static_cast<int>(c.head_dim);
  kernels::RopeRows(isa, rope_, pos, q_.data(), m, static_cast<int>(c.num_heads), hd,
                    rope_cache_.data());
  kernels::RopeRows(isa, rope_, pos, k_.data(), m, static_cast<int>(c.num_kv_heads), hd,
                    rope_cache_.data());

  kernels::KvLayerView kv;
  kv.type =
      kv_pool_->shape().dtype == kv::KvDType::kF16 ? kernels::DType::kF16 : kernels::DType::kF32;
  kv.block_size = kv_pool_->block_size();
  kv.n_kv_heads = static_cast<int>(c.num_kv_heads);
  kv.head_dim = hd;
  kv.k = kv_pool_->LayerK(layer);
  kv.v = kv_pool_->LayerV(layer);
  kv.block_stride = kv_pool_->block_stride();
  for (int e = 0; e < batch.num_entries(); ++e) {
    const int32_t* table = batch.seqs()[static_cast<size_t>(e)]->block_table.blocks().data();
    for (int r = batch.row_begin()[static_cast<size_t>(e)];
         r < batch.row_begin()[static_cast<size_t>(e) + 1]; ++r) {
      kernels::StoreKv(kv, table, pos[r], k_.data() + r * c.kv_dim(), v_.data() + r * c.kv_dim());
    }
  }
  RunAttention(batch, kv);

  const MatMulJob wo[] = {{&l.wo, att_.data(), delta_.data(), 0}};
  matmul_.Run(wo, m);
  AddBiasRows(l.bo, delta_.data(), m);
  kernels::Add(isa, x_.data(), delta_.data(), x_.data(), m * c.dim);

  kernels::RmsNormRows(isa, x_.data(), l.ffn_norm.f32(), c.rms_eps, xn_.data(), c.dim, m);
  const MatMulJob gate_up[] = {{&l.ffn_gate, xn_.data(), gate_.data(), 0},
                               {&l.ffn_up, xn_.data(), up_.data(), 0}};
  matmul_.Run(gate_up, m);
  // Row by row, as ggml: the SIMD levels send a row's tail through scalar
  // expf, so a flat call would make a row's bits depend on its batch offset.
  for (int64_t r = 0; r < m; ++r) {
    float* g = gate_.data() + r * c.ffn_dim;
    kernels::SwiGlu(isa, g, up_.data() + r * c.ffn_dim, g, c.ffn_dim);
  }
  const MatMulJob down[] = {{&l.ffn_down, gate_.data(), delta_.data(), 0}};
  matmul_.Run(down, m);
  kernels::Add(isa, x_.data(), delta_.data(), x_.data(), m * c.dim);
}

Status ModelRunner::Forward(const Batch& batch, Logits* out) {
  MNEME_RETURN_IF_ERROR(Validate(batch));
  const model::ModelConfig& c = config_;
  const int64_t m = batch.num_rows();
  EnsureScratch(m);

  const model::WeightView& embd = weights_.token_embd;
  for (int64_t r = 0; r < m; ++r) {
    kernels::DequantizeRow(embd.type, embd.Row(batch.token_ids()[static_cast<size_t>(r)]),
                           x_.data() + r * c.dim, c.dim);
  }
  for (int il = 0; il < c.num_layers; ++il) {
    Layer(batch, il);
#ifndef NDEBUG
    // Debug builds name the first layer whose output is not finite.
    for (int64_t i = 0; i < m * c.dim; ++i) {
      if (!std::isfinite(x_[static_cast<size_t>(i)])) {
        return DataLoss("non-finite activation after layer " + std::to_string(il) + ", row " +
                        std::to_string(i / c.dim));
      }
    }
#endif
  }
  for (int e = 0; e < batch.num_entries(); ++e) {
    Sequence* seq = batch.seqs()[static_cast<size_t>(e)];
    seq->num_computed = batch.ends()[static_cast<size_t>(e)];
  }

  // Output layer for the last row of each entry that wants logits; those
  // rows are gathered into xn_ (n <= m rows).
  out->vocab_size = c.vocab_size;
  out->entry.clear();
  int64_t n = 0;
  for (int e = 0; e < batch.num_entries(); ++e) {
    if (!batch.want_logits()[static_cast<size_t>(e)]) continue;
    const int64_t last = batch.row_begin()[static_cast<size_t>(e) + 1] - 1;
    kernels::RmsNorm(x_.data() + last * c.dim, weights_.output_norm.f32(), c.rms_eps,
                     xn_.data() + n * c.dim, c.dim);
    out->entry.push_back(e);
    ++n;
  }
  out->data.resize(static_cast<size_t>(n * c.vocab_size));
  if (n == 0) return Status::Ok();
  const MatMulJob output[] = {{&weights_.output, xn_.data(), out->data.data(), 0}};
  matmul_.Run(output, n);
  for (float v : out->data) {
    if (!std::isfinite(v)) {
      return DataLoss("the forward pass produced a non-finite logit (NaN or Inf in the weights?)");
    }
  }
  return Status::Ok();
}

}  // namespace mneme::engine
