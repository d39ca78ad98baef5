// What POST /v1/completions answers: a text_completion object, or a stream
// of text_completion chunks in SSE, ending with data: [DONE].
//
//   {"id":"cmpl-...","object":"text_completion","created":...,"model":"m",
//    "choices":[{"text":"...","index":0,"logprobs":null,"finish_reason":"length"}],
//    "usage":{...}}                                   (usage as in chat_response.h)
// Stream chunks have the same shape with the text delta and finish_reason
// null, then one chunk with "text":"" and the finish_reason, then (with
// include_usage) a chunk with "choices":[] and the usage.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "api/api_types.h"
#include "api/chat_response.h"

namespace mneme::api {

struct CompletionResult {
  std::string id;  // "cmpl-..."
  int64_t created = 0;
  std::string model;
  std::string text;
  FinishReason finish_reason = FinishReason::kStop;
  Usage usage;
};

std::string CompletionJson(const CompletionResult& result);

class CompletionStreamEncoder {
 public:
  // header.session_id is ignored (completions have no sessions).
  explicit CompletionStreamEncoder(StreamHeader header) : header_(std::move(header)) {}

  // One text delta; "" when `text` is empty.
  std::string Delta(std::string_view text) const;
  // finish_reason chunk, usage chunk (include_usage), data: [DONE].
  std::string Finish(FinishReason reason, const Usage& usage) const;

 private:
  StreamHeader header_;
};

}  // namespace mneme::api
