// Sampler: turns one row of logits into the next token id, per sequence.
//
// A Sampler belongs to one sequence. It holds that sequence's random state
// (so a fixed seed replays the same tokens no matter how sequences are
// batched) and the recent-token window the repetition, presence and
// frequency penalties look at. The transforms run in llama.cpp's default
// order (common/sampling.cpp: logit bias first, then the chain penalties ->
// top-k -> top-p -> min-p -> temperature -> draw; docs/sampling.md):
//
//   logits ──bias──penalties──top-k──top-p──min-p──/T──softmax──draw──> id
//                    ▲                                          ▲
//          window of the last n accepted ids          mt19937_64(seed)
//
// Note that top-p and min-p see probabilities at temperature 1, as in
// llama.cpp; temperature only reshapes what survives. Temperature <= 0 is
// greedy: the argmax after bias and penalties, ties to the lowest id (as
// llama.cpp's greedy sampler); it draws no random number.
//
// Cost: bias and penalties touch only the ids they name; top-k uses
// nth_element; top-p sorts one bucket of a histogram of probability mass;
// min-p is one pass. No transform sorts the whole vocabulary (152k for Qwen).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"
#include "util/status.h"

namespace mneme {

struct SamplingParams {
  float temperature = 1.0f;  // <= 0: greedy
  int32_t top_k = 0;         // keep the k most likely; <= 0 keeps all
  float top_p = 1.0f;        // keep the smallest prefix with mass >= p; 1 keeps all (0: top 1)
  float min_p = 0.0f;        // keep p >= min_p * p_max; 0 keeps all
  // Penalties over the last `penalty_last_n` accepted ids (0: off, -1: all).
  // repetition: logit / r if logit > 0, logit * r otherwise (r = 1: off);
  // then logit -= count * frequency + (count > 0) * presence.
  float repetition_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  int32_t penalty_last_n = 64;
  std::unordered_map<TokenId, float> logit_bias;  // added to the logit; -inf bans
  std::optional<uint64_t> seed;                   // none: a random seed from std::random_device
  // Consumed by the generation loop and StopChecker, not by Sampler:
  int32_t max_tokens = 256;
  std::vector<std::string> stop;  // stop strings, matched on the output text
  bool ignore_eos = false;        // end-of-generation ids are banned (bias -inf)
};

// Checks ranges: finite temperature, top_p in [0, 1], min_p in [0, 1],
// penalties finite with repetition > 0, penalty_last_n >= -1, bias ids in
// [0, vocab_size) with non-NaN values, max_tokens >= 0, at most 16 stop
// strings of 1..256 bytes.
Status ValidateSamplingParams(const SamplingParams& params, int32_t vocab_size);

// One entry of the distribution a Sampler draws from.
struct TokenProb {
  TokenId id;
  float logit;  // after every transform, temperature included
  double prob;
};

class Sampler {
 public:
  // Validates `params`. `eog_ids` are banned when params.ignore_eos.
  static Result<Sampler> Create(const SamplingParams& params, int32_t vocab_size,
                                std::span<const TokenId> eog_ids = {});

  Sampler(Sampler&&) = default;
  Sampler& operator=(Sampler&&) = default;

  // The next token for `logits` (shape [vocab_size]). NaN counts as -inf. If
  // bias and penalties leave no finite logit, returns the raw argmax.
  // Does not Accept() the token.
  TokenId Sample(std::span<const float> logits);

  // The candidates Sample would draw from, in draw order, with their
  // probabilities (greedy: one candidate with probability 1). Draws nothing.
  // Empty when no logit is finite after bias and penalties.
  std::vector<TokenProb> Distribution(std::span<const float> logits);

  // Records a token of the sequence for the penalties (generated tokens, and
  // prompt tokens too if they should count, as llama-server does).
  void Accept(TokenId id);
  void Accept(std::span<const TokenId> ids) {
    for (TokenId id : ids) Accept(id);
  }

  bool greedy() const { return params_.temperature <= 0.0f; }
  const SamplingParams& params() const { return params_; }
  // How often `id` occurs in the penalty window.
  int32_t CountInWindow(TokenId id) const;

 private:
  struct Candidate {
    float logit;
    TokenId id;
  };

  Sampler(const SamplingParams& params, int32_t vocab_size, std::span<const TokenId> eog_ids);

  // Leaves in candidates_ what the draw sees (logits divided by temperature).
  // Returns false when no logit is finite after bias and penalties.
  bool Prepare(std::span<const float> logits);
  void ApplyBiasAndPenalties(std::vector<float>* logits) const;
  void TopK();
  void TopP();
  void MinP();
  // Fills weights_ for candidates_ and returns their sum.
  double ComputeWeights();
  // Uniform in [0, 1) from the top 53 bits of one mt19937_64 output (the
  // std:: distributions are not specified bit for bit across libraries).
  double NextUniform();

  SamplingParams params_;
  int32_t vocab_size_;
  std::vector<std::pair<TokenId, float>> bias_;  // logit_bias plus banned EOG ids
  std::mt19937_64 rng_;
  std::deque<TokenId> window_;                   // last penalty_last_n ids
  std::unordered_map<TokenId, int32_t> counts_;  // id -> count in window_
  bool candidates_sorted_ = false;
  std::vector<float> scratch_;  // [vocab_size]
  std::vector<Candidate> candidates_;
  std::vector<double> weights_;  // exp(logit - max) per candidate
};

}  // namespace mneme
