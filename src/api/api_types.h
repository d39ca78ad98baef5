// Small value types shared by every endpoint's codec: how a generation
// ended, the token counts a response reports, and the knobs of parsing.
//
// api/ keeps its own FinishReason instead of including scheduler/ so that the
// codec stays independent of the engine. The server maps:
//   scheduler kStop (EOG token), a matched stop string  -> kStop
//   scheduler kLength, kContext                          -> kLength
//   scheduler kCancelled, kError -> no normal completion: an error body, or a
//   stream error event (ChatStreamEncoder::Error, ResponseStreamEncoder::Fail).
#pragma once

#include <cstdint>
#include <string_view>

#include "api/json_io.h"

namespace mneme::api {

enum class FinishReason {
  kStop,    // the model ended its turn or a stop string matched
  kLength,  // max_tokens reached, or the context is full
};

// OpenAI's finish_reason: "stop" or "length".
constexpr std::string_view FinishReasonName(FinishReason r) {
  return r == FinishReason::kLength ? "length" : "stop";
}

// Token counts of one request. cached_tokens: prompt tokens whose KV came
// from the cache (radix cache or a lower tier) instead of being computed.
struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  int64_t total_tokens() const { return prompt_tokens + completion_tokens; }
};

struct ParseOptions {
  int max_json_depth = kDefaultMaxJsonDepth;
  // > 0: token ids in the request (logit_bias keys, a token-id prompt) must
  // be below it. 0: only checked to be non-negative int32.
  int32_t vocab_size = 0;
};

}  // namespace mneme::api
