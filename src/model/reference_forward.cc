// ReferenceForward: the plain-loop forward pass (see reference_forward.h).
#include "model/reference_forward.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/quantize.h"

namespace mneme::model {

ReferenceForward::ReferenceForward(const ModelConfig& config, const ModelWeights& weights,
                                   ThreadPool* pool)
    : config_(config), weights_(weights), pool_(pool) {
  CHECK(static_cast<int64_t>(weights.layers.size()) == config.num_layers);
  const int64_t pairs = config.rope_dims / 2;
  inv_freq_.resize(static_cast<size_t>(pairs));
  for (int64_t i = 0; i < pairs; ++i) {
    double f = std::pow(static_cast<double>(config.rope_freq_base),
                        -2.0 * static_cast<double>(i) / static_cast<double>(config.rope_dims));
    f *= config.rope_freq_scale;
    if (weights.rope_freqs.present()) f /= weights.rope_freqs.f32()[i];
    inv_freq_[static_cast<size_t>(i)] = f;
  }
  const int64_t widest = std::max({config.dim, config.q_dim(), config.ffn_dim});
  scratch_.assign(static_cast<size_t>(pool != nullptr ? pool->num_threads() : 1),
                  std::vector<float>(static_cast<size_t>(widest)));
  k_cache_.resize(static_cast<size_t>(config.num_layers));
  v_cache_.resize(static_cast<size_t>(config.num_layers));
}

void ReferenceForward::Truncate(int64_t n) {
  CHECK(n >= 0 && n <= num_tokens_);
  const size_t keep = static_cast<size_t>(n * config_.kv_dim());
  for (auto& k : k_cache_) k.resize(keep);
  for (auto& v : v_cache_) v.resize(keep);
  num_tokens_ = n;
}

void ReferenceForward::MatMul(const WeightView& w, const float* x, int64_t n, float* y) {
  const int64_t cols = w.cols;
  const auto rows_fn = [&](int thread, int64_t begin, int64_t end) {
    float* row = scratch_[static_cast<size_t>(thread)].data();
    for (int64_t r = begin; r < end; ++r) {
      kernels::DequantizeRow(w.type, w.Row(r), row, cols);
      for (int64_t t = 0; t < n; ++t) {
        const float* xt = x + t * cols;
        double sum = 0;
        for (int64_t i = 0; i < cols; ++i) sum += static_cast<double>(row[i]) * xt[i];
        y[t * w.rows + r] = static_cast<float>(sum);
      }
    }
  };
  // Waking the pool costs microseconds; small products run on the caller.
  constexpr int64_t kMinParallelMacs = 1 << 18;
  if (pool_ != nullptr && pool_->num_threads() > 1 && w.rows * cols * n >= kMinParallelMacs) {
    pool_->ParallelForWithThread(w.rows, rows_fn);
  } else {
    rows_fn(0, 0, w.rows);
  }
}

void ReferenceForward::RmsNorm(const float* x, const float* weight, int64_t n, int64_t width,
                               float* out) const {
  for (int64_t t = 0; t < n; ++t) {
    const float* xt = x + t * width;
    double sum_sq = 0;
    for (int64_t i = 0; i < width; ++i) sum_sq += static_cast<double>(xt[i]) * xt[i];
    const double scale = 1.0 / std::sqrt(sum_sq / static_cast<double>(width) + config_.rms_eps);
    for (int64_t i = 0; i < width; ++i) {
      out[t * width + i] = static_cast<float>(xt[i] * scale * weight[i]);
    }
  }
}

void ReferenceForward::Rope(float* x, int64_t n, int64_t num_heads, int64_t pos0) const {
  const int64_t hd = config_.head_dim;
  const int64_t pairs = config_.rope_dims / 2;
  for (int64_t t = 0; t < n; ++t) {
    const double pos = static_cast<double>(pos0 + t);
    for (int64_t h = 0; h < num_heads; ++h) {
      float* head = x + (t * num_heads + h) * hd;
      for (int64_t i = 0; i < pairs; ++i) {
        const double theta = pos * inv_freq_[static_cast<size_t>(i)];
        const double c = std::cos(theta), s = std::sin(theta);
        // The two elements of pair i.
        const int64_t a = config_.rope_type == RopeType::kNormal ? 2 * i : i;
        const int64_t b = config_.rope_type == RopeType::kNormal ? 2 * i + 1 : i + pairs;
        const double x0 = head[a], x1 = head[b];
        head[a] = static_cast<float>(x0 * c - x1 * s);
        head[b] = static_cast<float>(x0 * s + x1 * c);
      }
    }
  }
}

void ReferenceForward::Attention(const float* q, int64_t n, int64_t pos0,
                                 const std::vector<float>& k_cache,
                                 const std::vector<float>& v_cache, float* out) const {
  const int64_t hd = config_.head_dim;
  const int64_t heads = config_.num_heads;
  const int64_t kv_dim = config_.kv_dim();
  const int64_t group = heads / config_.num_kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  std::vector<double> scores(static_cast<size_t>(pos0 + n));
  std::vector<double> acc(static_cast<size_t>(hd));
  for (int64_t t = 0; t < n; ++t) {
    const int64_t last = pos0 + t;  // attends to positions 0..last
    for (int64_t h = 0; h < heads; ++h) {
      const float* qh = q + (t * heads + h) * hd;
      const int64_t kv_off = (h / group) * hd;
      double max_score = -INFINITY;
      for (int64_t j = 0; j <= last; ++j) {
        const float* kj = k_cache.data() + j * kv_dim + kv_off;
        double dot = 0;
        for (int64_t i = 0; i < hd; ++i) dot += static_cast<double>(qh[i]) * kj[i];
        scores[static_cast<size_t>(j)] = dot * scale;
        max_score = std::max(max_score, dot * scale);
      }
      double denom = 0;
      for (int64_t j = 0; j <= last; ++j) {
        double& s = scores[static_cast<size_t>(j)];
        s = std::exp(s - max_score);
        denom += s;
      }
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t j = 0; j <= last; ++j) {
        const float* vj = v_cache.data() + j * kv_dim + kv_off;
        const double p = scores[static_cast<size_t>(j)] / denom;
        for (int64_t i = 0; i < hd; ++i) acc[static_cast<size_t>(i)] += p * vj[i];
      }
      float* oh = out + (t * heads + h) * hd;
      for (int64_t i = 0; i < hd; ++i) oh[i] = static_cast<float>(acc[static_cast<size_t>(i)]);
    }
  }
}

namespace {

void AddBias(float* y, const WeightView& bias, int64_t n) {
  if (!bias.present()) return;
  const float* b = bias.f32();
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t i = 0; i < bias.cols; ++i) y[t * bias.cols + i] += b[i];
  }
}

}  // namespace

Result<std::vector<float>> ReferenceForward::Eval(std::span<const TokenId> tokens,
                                                  bool all_logits) {
  const ModelConfig& c = config_;
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) return InvalidArgument("nothing to evaluate: no tokens");
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= c.vocab_size) {
      return InvalidArgument("token " + std::to_string(i) + ": id " + std::to_string(tokens[i]) +
                             " is outside the vocabulary (" + std::to_string(c.vocab_size) +
                             " tokens)");
    }
  }
  if (num_tokens_ + n > c.context_length) {
    return InvalidArgument(std::to_string(n) + " tokens after " + std::to_string(num_tokens_) +
                           " would exceed the context length of " +
                           std::to_string(c.context_length));
  }

  const int64_t pos0 = num_tokens_;
  const int64_t dim = c.dim;
  const auto buffer = [n](int64_t width) {
    return std::vector<float>(static_cast<size_t>(n * width));
  };
  std::vector<float> x = buffer(dim);  // the residual stream [n][dim]
  std::vector<float> xn = buffer(dim), delta = buffer(dim);
  std::vector<float> q = buffer(c.q_dim()), k = buffer(c.kv_dim()), v = buffer(c.kv_dim());
  std::vector<float> att = buffer(c.q_dim());
  std::vector<float> gate = buffer(c.ffn_dim), up = buffer(c.ffn_dim);

  for (int64_t t = 0; t < n; ++t) {
    const WeightView& e = weights_.token_embd;
    kernels::DequantizeRow(e.type, e.Row(tokens[static_cast<size_t>(t)]),
                           &x[static_cast<size_t>(t * dim)], dim);
  }

  for (int64_t il = 0; il < c.num_layers; ++il) {
    const LayerWeights& l = weights_.layers[static_cast<size_t>(il)];
    RmsNorm(x.data(), l.attn_norm.f32(), n, dim, xn.data());
    MatMul(l.wq, xn.data(), n, q.data());
    MatMul(l.wk, xn.data(), n, k.data());
    MatMul(l.wv, xn.data(), n, v.data());
    AddBias(q.data(), l.bq, n);
    AddBias(k.data(), l.bk, n);
    AddBias(v.data(), l.bv, n);
    if (c.has_qk_norm) {
      RmsNorm(q.data(), l.q_norm.f32(), n * c.num_heads, c.head_dim, q.data());
      RmsNorm(k.data(), l.k_norm.f32(), n * c.num_kv_heads, c.head_dim, k.data());
    }
    Rope(q.data(), n, c.num_heads, pos0);
    Rope(k.data(), n, c.num_kv_heads, pos0);
    std::vector<float>& k_cache = k_cache_[static_cast<size_t>(il)];
    std::vector<float>& v_cache = v_cache_[static_cast<size_t>(il)];
    k_cache.insert(k_cache.end(), k.begin(), k.end());
    v_cache.insert(v_cache.end(), v.begin(), v.end());
    Attention(q.data(), n, pos0, k_cache, v_cache, att.data());
    MatMul(l.wo, att.data(), n, delta.data());
    AddBias(delta.data(), l.bo, n);
    for (size_t i = 0; i < x.size(); ++i) x[i] += delta[i];

    RmsNorm(x.data(), l.ffn_norm.f32(), n, dim, xn.data());
    MatMul(l.ffn_gate, xn.data(), n, gate.data());
    MatMul(l.ffn_up, xn.data(), n, up.data());
    for (size_t i = 0; i < gate.size(); ++i) {
      const double g = gate[i];
      gate[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
    }
    MatMul(l.ffn_down, gate.data(), n, delta.data());
    for (size_t i = 0; i < x.size(); ++i) x[i] += delta[i];
  }
  num_tokens_ += n;

  // Only the rows whose logits are wanted go through the output layer.
  const int64_t first = all_logits ? 0 : n - 1;
  const int64_t rows = n - first;
  RmsNorm(x.data() + first * dim, weights_.output_norm.f32(), rows, dim, xn.data());
  std::vector<float> logits(static_cast<size_t>(rows * c.vocab_size));
  MatMul(weights_.output, xn.data(), rows, logits.data());
  for (float l : logits) {
    if (!std::isfinite(l)) {
      return DataLoss("the forward pass produced a non-finite logit (NaN or Inf in the weights?)");
    }
  }
  return logits;
}

}  // namespace mneme::model
