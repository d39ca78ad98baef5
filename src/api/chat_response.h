// What POST /v1/chat/completions answers: a chat.completion object, or a
// stream of chat.completion.chunk objects in SSE.
//
// Streamed answer (ChatStreamEncoder), one SSE event per line here:
//   data: {..."choices":[{"index":0,"delta":{"role":"assistant","content":""},
//          "logprobs":null,"finish_reason":null}]}          Start()
//   data: {..."choices":[{"index":0,"delta":{"content":"Hel"},...}]}  Delta()
//   data: {..."choices":[{"index":0,"delta":{},...,"finish_reason":"stop"}]}
//   data: {..."choices":[],"usage":{...}}        only with include_usage
//   data: [DONE]                                                      Finish()
// With include_usage every other chunk carries "usage":null, as OpenAI's do.
// Every chunk repeats id, created, model (and session_id when set).
//
// Usage is OpenAI's, always with the cache report:
//   {"prompt_tokens":N,"completion_tokens":M,"total_tokens":N+M,
//    "prompt_tokens_details":{"cached_tokens":C},
//    "completion_tokens_details":{"reasoning_tokens":0}}
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "api/api_error.h"
#include "api/api_types.h"

namespace mneme::api {

nlohmann::ordered_json UsageJson(const Usage& usage);

struct ChatCompletionResult {
  std::string id;       // "chatcmpl-..." (IdGenerator)
  int64_t created = 0;  // Unix seconds
  std::string model;
  std::string content;  // may hold invalid UTF-8: serialized with U+FFFD
  FinishReason finish_reason = FinishReason::kStop;
  Usage usage;
  std::optional<std::string> session_id;
};

// {"id","object":"chat.completion","created","model",["session_id",]
//  "choices":[{"index":0,"message":{"role":"assistant","content",
//  "refusal":null},"logprobs":null,"finish_reason"}],"usage"}
std::string ChatCompletionJson(const ChatCompletionResult& result);

// Fields every chunk of one streamed answer repeats.
struct StreamHeader {
  std::string id;
  int64_t created = 0;
  std::string model;
  std::optional<std::string> session_id;
  bool include_usage = false;
};

class ChatStreamEncoder {
 public:
  explicit ChatStreamEncoder(StreamHeader header) : header_(std::move(header)) {}

  // The first event: the assistant role with empty content.
  std::string Start() const;
  // One content delta; "" (send nothing) when `text` is empty.
  std::string Delta(std::string_view text) const;
  // The closing events: finish_reason chunk, usage chunk (include_usage),
  // data: [DONE].
  std::string Finish(FinishReason reason, const Usage& usage) const;
  // A failure after the stream has started (headers sent, so no HTTP
  // status): data: {"error":{...}}. The OpenAI SDKs raise it as an APIError.
  // The server closes the stream after it (no [DONE]).
  static std::string Error(const ApiError& error);

 private:
  nlohmann::ordered_json Chunk() const;  // id, object, created, model, session_id

  StreamHeader header_;
};

}  // namespace mneme::api
