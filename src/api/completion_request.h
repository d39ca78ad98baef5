// POST /v1/completions (the legacy raw-prompt API): the request body parsed
// and validated.
//
//   {"model": "m", "prompt": "Once upon a time", "max_tokens": 32}
//   {"model": "m", "prompt": [1, 9038, 2501], "max_tokens": 32}
//
// prompt: a string, an array holding one string, an array of token ids, or
// an array holding one array of token ids. Several prompts in one request
// (batching) are refused with unsupported_value; so are echo, suffix,
// best_of > 1, n > 1 and logprobs. The prompt is used as given: no chat
// template, and no BOS unless the server adds one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "api/api_error.h"
#include "api/api_types.h"
#include "model/sampler.h"
#include "tokenizer/vocab.h"

namespace mneme::api {

struct CompletionRequest {
  std::string model;
  // Text to tokenize, or token ids to use as they are.
  std::variant<std::string, std::vector<TokenId>> prompt;
  SamplingParams sampling;            // max_tokens left at its default (see chat_request.h)
  std::optional<int32_t> max_tokens;  // >= 1; none: until the context is full
  bool stream = false;
  bool include_usage = false;
  std::string user;

  bool prompt_is_tokens() const { return std::holds_alternative<std::vector<TokenId>>(prompt); }
};

ApiResult<CompletionRequest> ParseCompletionRequest(std::string_view body,
                                                    const ParseOptions& options = {});

}  // namespace mneme::api
