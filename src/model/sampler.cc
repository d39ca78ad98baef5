// Sampler: the transform chain of sampler.h over one row of logits.
//
// The working set is a vector of (logit, id) candidates built from a scratch
// copy of the row after bias and penalties; tokens at -inf (banned, or NaN)
// never become candidates, which changes no probability. Whenever the order
// of candidates matters (top-k, top-p, the draw after them) it is "higher
// logit first, lower id first on ties", so a seed replays identically on any
// standard library.
#include "model/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "util/check.h"

namespace mneme {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr size_t kMaxStopStrings = 16;
constexpr size_t kMaxStopBytes = 256;

bool Finite(float v) {
  return std::isfinite(v);
}

}  // namespace

Status ValidateSamplingParams(const SamplingParams& p, int32_t vocab_size) {
  if (vocab_size <= 0) return InvalidArgument("sampling: empty vocabulary");
  if (!Finite(p.temperature)) return InvalidArgument("sampling: temperature must be finite");
  if (!(p.top_p >= 0.0f && p.top_p <= 1.0f))
    return InvalidArgument("sampling: top_p must be in [0, 1]");
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f))
    return InvalidArgument("sampling: min_p must be in [0, 1]");
  if (!Finite(p.repetition_penalty) || p.repetition_penalty <= 0.0f) {
    return InvalidArgument("sampling: repetition_penalty must be > 0");
  }
  if (!Finite(p.presence_penalty) || !Finite(p.frequency_penalty)) {
    return InvalidArgument("sampling: presence and frequency penalties must be finite");
  }
  if (p.penalty_last_n < -1) return InvalidArgument("sampling: penalty_last_n must be >= -1");
  for (const auto& [id, bias] : p.logit_bias) {
    if (id < 0 || id >= vocab_size) {
      return InvalidArgument("sampling: logit_bias token " + std::to_string(id) +
                             " is not in the vocabulary");
    }
    if (!(Finite(bias) || bias == kNegInf)) {
      return InvalidArgument("sampling: logit_bias values must be finite or -inf");
    }
  }
  if (p.max_tokens < 0) return InvalidArgument("sampling: max_tokens must be >= 0");
  if (p.stop.size() > kMaxStopStrings) {
    return InvalidArgument("sampling: at most " + std::to_string(kMaxStopStrings) +
                           " stop strings");
  }
  for (const std::string& s : p.stop) {
    if (s.empty() || s.size() > kMaxStopBytes) {
      return InvalidArgument("sampling: stop strings must have 1.." +
                             std::to_string(kMaxStopBytes) + " bytes");
    }
  }
  return Status::Ok();
}

Result<Sampler> Sampler::Create(const SamplingParams& params, int32_t vocab_size,
                                std::span<const TokenId> eog_ids) {
  MNEME_RETURN_IF_ERROR(ValidateSamplingParams(params, vocab_size));
  return Sampler(params, vocab_size, eog_ids);
}

Sampler::Sampler(const SamplingParams& params, int32_t vocab_size, std::span<const TokenId> eog_ids)
    : params_(params), vocab_size_(vocab_size) {
  bias_.assign(params.logit_bias.begin(), params.logit_bias.end());
  // unordered_map order is unspecified; sort so the sums are reproducible.
  std::sort(bias_.begin(), bias_.end());
  if (params.ignore_eos) {
    for (TokenId id : eog_ids) {
      if (id >= 0 && id < vocab_size) bias_.emplace_back(id, kNegInf);
    }
  }
  rng_.seed(params.seed.has_value()
                ? *params.seed
                : (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}());
}

void Sampler::Accept(TokenId id) {
  if (params_.penalty_last_n == 0) return;
  window_.push_back(id);
  ++counts_[id];
  if (params_.penalty_last_n > 0 && window_.size() > static_cast<size_t>(params_.penalty_last_n)) {
    auto it = counts_.find(window_.front());
    if (--it->second == 0) counts_.erase(it);
    window_.pop_front();
  }
}

int32_t Sampler::CountInWindow(TokenId id) const {
  auto it = counts_.find(id);
  return it == counts_.end() ? 0 : it->second;
}

void Sampler::ApplyBiasAndPenalties(std::vector<float>* logits) const {
  std::vector<float>& l = *logits;
  for (const auto& [id, bias] : bias_) l[id] += bias;
  const bool penalize = params_.penalty_last_n != 0 &&
                        (params_.repetition_penalty != 1.0f || params_.frequency_penalty != 0.0f ||
                         params_.presence_penalty != 0.0f);
  if (!penalize) return;
  for (const auto& [id, count] : counts_) {
    if (id < 0 || id >= vocab_size_ || count <= 0) continue;
    float& v = l[id];
    if (v <= 0.0f) {
      v *= params_.repetition_penalty;
    } else {
      v /= params_.repetition_penalty;
    }
    v -= static_cast<float>(count) * params_.frequency_penalty + params_.presence_penalty;
  }
}

namespace {

template <typename C>
bool Better(const C& a, const C& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

}  // namespace

void Sampler::TopK() {
  const int32_t k = params_.top_k;
  if (k <= 0 || static_cast<size_t>(k) >= candidates_.size()) return;
  auto better = Better<Candidate>;
  std::nth_element(candidates_.begin(), candidates_.begin() + k, candidates_.end(), better);
  candidates_.resize(k);
  std::sort(candidates_.begin(), candidates_.end(), better);
  candidates_sorted_ = true;
}

void Sampler::TopP() {
  if (params_.top_p >= 1.0f) return;
  const size_t n = candidates_.size();
  float max_logit = kNegInf, min_logit = -kNegInf;
  for (const Candidate& c : candidates_) {
    max_logit = std::max(max_logit, c.logit);
    min_logit = std::min(min_logit, c.logit);
  }
  weights_.resize(n);
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) {
    weights_[i] = std::exp(static_cast<double>(candidates_[i].logit) - max_logit);
    total += weights_[i];
  }
  const double target = static_cast<double>(params_.top_p) * total;

  if (candidates_sorted_) {  // after top-k: a short sorted list, walk it
    double cum = 0.0;
    for (size_t i = 0; i < n; ++i) {
      cum += weights_[i];
      if (cum >= target) {
        candidates_.resize(i + 1);
        return;
      }
    }
    return;
  }

  // Unsorted (whole vocabulary): histogram the mass by logit, find the bucket
  // where the cumulative mass from the top crosses the target, and sort only
  // that bucket to find the last token kept. Every token at least as good as
  // that one stays, in id order. O(n) plus a sort of one bucket.
  constexpr int kBuckets = 4096;
  const float scale = max_logit > min_logit ? (kBuckets - 1) / (max_logit - min_logit) : 0.0f;
  auto bucket_of = [&](float logit) {  // 0 holds the highest logits
    return std::min(kBuckets - 1, static_cast<int>((max_logit - logit) * scale));
  };
  std::vector<double> mass(kBuckets, 0.0);
  for (size_t i = 0; i < n; ++i) mass[bucket_of(candidates_[i].logit)] += weights_[i];
  int boundary = kBuckets - 1;
  double cum = 0.0;
  for (int b = 0; b < kBuckets; ++b) {
    if (cum + mass[b] >= target) {
      boundary = b;
      break;
    }
    cum += mass[b];
  }
  std::vector<std::pair<Candidate, double>> edge;
  for (size_t i = 0; i < n; ++i) {
    if (bucket_of(candidates_[i].logit) == boundary) edge.emplace_back(candidates_[i], weights_[i]);
  }
  if (edge.empty()) return;  // rounding skipped past the last bucket: keep all
  std::sort(edge.begin(), edge.end(),
            [](const auto& a, const auto& b) { return Better(a.first, b.first); });
  Candidate last = edge.back().first;  // rounding never reached the target: keep the bucket
  for (const auto& [c, w] : edge) {
    cum += w;
    if (cum >= target) {
      last = c;
      break;
    }
  }
  std::erase_if(candidates_, [&](const Candidate& c) { return Better(last, c); });
}

void Sampler::MinP() {
  if (params_.min_p <= 0.0f) return;
  float max_logit = kNegInf;
  for (const Candidate& c : candidates_) max_logit = std::max(max_logit, c.logit);
  const float threshold = max_logit + std::log(params_.min_p);
  std::erase_if(candidates_, [threshold](const Candidate& c) { return c.logit < threshold; });
}

bool Sampler::Prepare(std::span<const float> logits) {
  CHECK(logits.size() == static_cast<size_t>(vocab_size_))
      << "logits have " << logits.size() << " entries, vocabulary " << vocab_size_;
  scratch_.assign(logits.begin(), logits.end());
  ApplyBiasAndPenalties(&scratch_);
  candidates_.clear();
  candidates_sorted_ = false;

  if (greedy()) {
    TokenId best = kNoToken;
    float best_logit = kNegInf;
    for (int32_t i = 0; i < vocab_size_; ++i) {
      if (scratch_[i] > best_logit) {  // strict: ties keep the lowest id; NaN never wins
        best_logit = scratch_[i];
        best = i;
      }
    }
    if (best == kNoToken) return false;
    candidates_.push_back({best_logit, best});
    candidates_sorted_ = true;
    return true;
  }

  candidates_.reserve(vocab_size_);
  constexpr float kMax = std::numeric_limits<float>::max();
  for (int32_t i = 0; i < vocab_size_; ++i) {
    const float v = scratch_[i];
    if (v > kNegInf) candidates_.push_back({std::min(v, kMax), i});
  }
  if (candidates_.empty()) return false;
  TopK();
  TopP();
  MinP();
  const float inv_t = 1.0f / params_.temperature;
  for (Candidate& c : candidates_) c.logit *= inv_t;
  return true;
}

double Sampler::ComputeWeights() {
  float max_logit = kNegInf;
  for (const Candidate& c : candidates_) max_logit = std::max(max_logit, c.logit);
  weights_.resize(candidates_.size());
  double sum = 0.0;
  for (size_t i = 0; i < candidates_.size(); ++i) {
    weights_[i] = std::exp(static_cast<double>(candidates_[i].logit) - max_logit);
    sum += weights_[i];
  }
  return sum;
}

double Sampler::NextUniform() {
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

TokenId Sampler::Sample(std::span<const float> logits) {
  if (!Prepare(logits)) {
    // Everything banned: fall back to the raw argmax rather than fail.
    return static_cast<TokenId>(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  if (candidates_.size() == 1) return candidates_[0].id;
  const double sum = ComputeWeights();
  const double u = NextUniform() * sum;
  double cum = 0.0;
  for (size_t i = 0; i < candidates_.size(); ++i) {
    cum += weights_[i];
    if (u < cum) return candidates_[i].id;
  }
  return candidates_.back().id;  // rounding left u at the very top
}

std::vector<TokenProb> Sampler::Distribution(std::span<const float> logits) {
  std::vector<TokenProb> out;
  if (!Prepare(logits)) return out;
  const double sum = ComputeWeights();
  out.reserve(candidates_.size());
  for (size_t i = 0; i < candidates_.size(); ++i) {
    out.push_back({candidates_[i].id, candidates_[i].logit, weights_[i] / sum});
  }
  return out;
}

}  // namespace mneme
