// The Responses API's response object (POST/GET /v1/responses answers it,
// DELETE answers a deletion record) and its streaming events.
//
//   {"id":"resp_...","object":"response","created_at":1700000000,
//    "status":"completed","error":null,"incomplete_details":null,
//    "instructions":null,"max_output_tokens":null,"model":"m",
//    "output":[{"type":"message","id":"msg_...","status":"completed",
//               "role":"assistant","content":[{"type":"output_text",
//               "text":"Hi!","annotations":[],"logprobs":[]}]}],
//    "output_text":"Hi!", "parallel_tool_calls":false,
//    "previous_response_id":null,"store":true,"temperature":1.0,
//    "text":{"format":{"type":"text"}},"tool_choice":"none","tools":[],
//    "top_p":1.0,"truncation":"disabled",
//    "usage":{"input_tokens":N,"input_tokens_details":{"cached_tokens":C},
//             "output_tokens":M,"output_tokens_details":{"reasoning_tokens":0},
//             "total_tokens":N+M},
//    "user":null,"metadata":{}}
//
// Streaming (ResponseStreamEncoder), each an SSE "event: <type>" with the
// type repeated in the data and a sequence_number counting from 0:
//   Start():   response.created, response.in_progress (status in_progress,
//              output []), response.output_item.added (message, in_progress,
//              content []), response.content_part.added (output_text "")
//   Delta():   response.output_text.delta {item_id, output_index 0,
//              content_index 0, delta, logprobs []}
//   Finish():  response.output_text.done {text}, response.content_part.done,
//              response.output_item.done, then response.completed — or
//              response.incomplete (status incomplete, incomplete_details
//              {"reason":"max_output_tokens"}) when the output was cut short.
//   Fail():    response.failed (status failed, error {code, message}).
// No data: [DONE] (OpenAI's Responses streams end without it).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "api/api_error.h"
#include "api/api_types.h"
#include "api/common_fields.h"

namespace mneme::api {

enum class ResponseStatus { kInProgress, kCompleted, kIncomplete, kFailed, kCancelled };
// "in_progress", "completed", "incomplete", "failed", "cancelled".
std::string_view ResponseStatusName(ResponseStatus status);
// kLength -> kIncomplete, kStop -> kCompleted.
ResponseStatus StatusForFinish(FinishReason reason);

// Everything the response object shows; what the server stores for GET.
struct ResponseObject {
  std::string id;          // "resp_..."
  std::string message_id;  // "msg_...", the one output message
  int64_t created_at = 0;  // Unix seconds
  ResponseStatus status = ResponseStatus::kInProgress;
  std::string model;
  std::string output_text;  // the assistant's text so far / in full
  std::optional<std::string> instructions;
  std::optional<std::string> previous_response_id;
  std::optional<int32_t> max_output_tokens;
  double temperature = 1.0;
  double top_p = 1.0;
  bool store = true;
  Metadata metadata;
  std::string user;            // "" -> null
  std::optional<Usage> usage;  // null until finished
  // status kFailed: OpenAI's error object {code, message}.
  std::string error_code;
  std::string error_message;
};

// The object as JSON (for embedding in events) and as a body.
nlohmann::ordered_json ResponseObjectJson(const ResponseObject& response);
std::string ResponseJson(const ResponseObject& response);
// {"id":"resp_...","object":"response","deleted":true}
std::string ResponseDeletedJson(std::string_view response_id);
// Responses-style usage: input_tokens, output_tokens, their details, total.
nlohmann::ordered_json ResponseUsageJson(const Usage& usage);

class ResponseStreamEncoder {
 public:
  // `response`: the object as created (status in_progress, no text, no usage).
  explicit ResponseStreamEncoder(ResponseObject response);

  std::string Start();
  // "" when `text` is empty.
  std::string Delta(std::string_view text);
  // `final`: the finished object (status completed or incomplete, the whole
  // text, usage). Emits the done events and response.completed/incomplete.
  std::string Finish(const ResponseObject& final);
  // The generation failed after Start(): response.failed with `error`.
  std::string Fail(const ApiError& error);

  int sequence_number() const { return sequence_; }

 private:
  std::string Event(std::string_view type, nlohmann::ordered_json data);
  nlohmann::ordered_json MessageItem(std::string_view status, std::string_view text,
                                     bool with_content) const;

  ResponseObject response_;
  int sequence_ = 0;
};

}  // namespace mneme::api
