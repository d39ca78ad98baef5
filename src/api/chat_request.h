// POST /v1/chat/completions: the request body, parsed and validated into
// what the server needs to run the turn.
//
//   {"model": "qwen", "messages": [{"role": "user", "content": "Hi"}],
//    "max_tokens": 64, "temperature": 0.7, "stream": true,
//    "stream_options": {"include_usage": true}, "session_id": "s1"}
//
// Field rules: sampling_fields.h (temperature, top_p, penalties, seed, stop,
// logit_bias, Mneme's top_k / min_p / repetition_penalty / ignore_eos),
// chat_messages.h (messages), common_fields.h (model, session_id, n,
// metadata, refused features). Unknown fields are ignored.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/api_error.h"
#include "api/api_types.h"
#include "api/chat_messages.h"
#include "api/common_fields.h"
#include "model/sampler.h"

namespace mneme::api {

struct ChatCompletionRequest {
  std::string model;                  // "" when absent: the server's only/default model
  std::vector<ChatMessage> messages;  // at least one
  // Sampling as given. sampling.max_tokens is left at its default: the
  // server sets it from max_tokens below and the room left in the context.
  SamplingParams sampling;
  // max_completion_tokens, else max_tokens (>= 1); none: until the context is full.
  std::optional<int32_t> max_tokens;
  bool stream = false;
  bool include_usage = false;             // stream_options.include_usage
  std::optional<std::string> session_id;  // the body's; the X-Session-Id header is the server's
  std::string user;                       // OpenAI's end-user id (for logs only)
  Metadata metadata;
};

ApiResult<ChatCompletionRequest> ParseChatCompletionRequest(std::string_view body,
                                                            const ParseOptions& options = {});

}  // namespace mneme::api
