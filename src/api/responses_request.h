// POST /v1/responses (OpenAI's stateful API): the request body parsed and
// validated.
//
//   {"model": "m", "input": "Hi", "instructions": "Be brief.",
//    "previous_response_id": "resp_...", "store": true, "stream": false,
//    "max_output_tokens": 128, "temperature": 0.7}
//
// input: a string (one user message) or an array of message items:
//   {"role": "user", "content": "Hi"}                       (type optional)
//   {"type": "message", "role": "user",
//    "content": [{"type": "input_text", "text": "Hi"}]}
//   {"type": "message", "role": "assistant",
//    "content": [{"type": "output_text", "text": "Hello"}]}
// Roles: user, system, developer, assistant. Other item types (function
// calls, reasoning, item references) and image/file/audio parts are refused
// by name. instructions is kept apart: it is not carried over from the
// previous response (OpenAI's rule), so the server puts it first in this
// turn's prompt only. Sampling fields as in sampling_fields.h; text.format
// other than {"type":"text"}, tools and background mode are refused.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/api_error.h"
#include "api/api_types.h"
#include "api/chat_messages.h"
#include "api/common_fields.h"
#include "model/sampler.h"

namespace mneme::api {

struct ResponsesRequest {
  std::string model;
  std::vector<ChatMessage> input;  // this turn's new messages, at least one
  std::optional<std::string> instructions;
  std::optional<std::string> previous_response_id;
  bool store = true;  // keep the response for GET and previous_response_id
  bool stream = false;
  SamplingParams sampling;                   // max_tokens left at its default
  std::optional<int32_t> max_output_tokens;  // >= 1; none: until the context is full
  Metadata metadata;
  std::string user;
};

ApiResult<ResponsesRequest> ParseResponsesRequest(std::string_view body,
                                                  const ParseOptions& options = {});

// The conversation this turn renders: the instructions as a system message
// first (OpenAI: "the first item in the model's context"), then `history`
// (the input and output of the previous_response_id chain, without their
// instructions), then this request's input. What the server stores for the
// next turn is history + input + the answer, not the instructions.
std::vector<ChatMessage> ResponsesConversation(const ResponsesRequest& request,
                                               std::span<const ChatMessage> history);

}  // namespace mneme::api
