// Responses API objects and stream events (see responses_object.h).
#include "api/responses_object.h"

#include <cmath>

#include "api/json_io.h"
#include "api/sse.h"

namespace mneme::api {

using OJson = nlohmann::ordered_json;

std::string_view ResponseStatusName(ResponseStatus status) {
  switch (status) {
    case ResponseStatus::kInProgress: return "in_progress";
    case ResponseStatus::kCompleted: return "completed";
    case ResponseStatus::kIncomplete: return "incomplete";
    case ResponseStatus::kFailed: return "failed";
    case ResponseStatus::kCancelled: return "cancelled";
  }
  return "failed";
}

ResponseStatus StatusForFinish(FinishReason reason) {
  return reason == FinishReason::kLength ? ResponseStatus::kIncomplete : ResponseStatus::kCompleted;
}

OJson ResponseUsageJson(const Usage& usage) {
  OJson u = OJson::object();
  u["input_tokens"] = usage.prompt_tokens;
  u["input_tokens_details"] = {{"cached_tokens", usage.cached_tokens}};
  u["output_tokens"] = usage.completion_tokens;
  u["output_tokens_details"] = {{"reasoning_tokens", 0}};
  u["total_tokens"] = usage.total_tokens();
  return u;
}

namespace {

// Sampling values travel as float (SamplingParams); shown rounded to 6
// decimals so that 0.7 reads 0.7, not 0.699999988079071.
double Tidy(double v) {
  return std::round(v * 1e6) / 1e6;
}

OJson OptionalString(const std::optional<std::string>& s) {
  return s ? OJson(*s) : OJson(nullptr);
}

OJson TextPart(std::string_view text) {
  OJson part = OJson::object();
  part["type"] = "output_text";
  part["text"] = std::string(text);
  part["annotations"] = OJson::array();
  part["logprobs"] = OJson::array();
  return part;
}

OJson MessageItemJson(const std::string& id, std::string_view status, std::string_view text,
                      bool with_content) {
  OJson item = OJson::object();
  item["type"] = "message";
  item["id"] = id;
  item["status"] = status;
  item["role"] = "assistant";
  item["content"] = with_content ? OJson::array({TextPart(text)}) : OJson::array();
  return item;
}

}  // namespace

OJson ResponseObjectJson(const ResponseObject& r) {
  OJson j = OJson::object();
  j["id"] = r.id;
  j["object"] = "response";
  j["created_at"] = r.created_at;
  j["status"] = ResponseStatusName(r.status);
  if (r.status == ResponseStatus::kFailed) {
    j["error"] = {{"code", r.error_code.empty() ? "server_error" : r.error_code},
                  {"message", r.error_message}};
  } else {
    j["error"] = nullptr;
  }
  j["incomplete_details"] = r.status == ResponseStatus::kIncomplete
                                ? OJson({{"reason", "max_output_tokens"}})
                                : OJson(nullptr);
  j["instructions"] = OptionalString(r.instructions);
  j["max_output_tokens"] = r.max_output_tokens ? OJson(*r.max_output_tokens) : OJson(nullptr);
  j["model"] = r.model;
  bool has_message = r.status == ResponseStatus::kCompleted ||
                     r.status == ResponseStatus::kIncomplete || !r.output_text.empty();
  if (has_message && r.status != ResponseStatus::kInProgress) {
    std::string_view item_status =
        r.status == ResponseStatus::kCompleted ? "completed" : "incomplete";
    j["output"] = OJson::array({MessageItemJson(r.message_id, item_status, r.output_text, true)});
  } else {
    j["output"] = OJson::array();
  }
  j["output_text"] = r.output_text;
  j["parallel_tool_calls"] = false;
  j["previous_response_id"] = OptionalString(r.previous_response_id);
  j["store"] = r.store;
  j["temperature"] = Tidy(r.temperature);
  j["text"] = {{"format", {{"type", "text"}}}};
  j["tool_choice"] = "none";
  j["tools"] = OJson::array();
  j["top_p"] = Tidy(r.top_p);
  j["truncation"] = "disabled";
  j["usage"] = r.usage ? ResponseUsageJson(*r.usage) : OJson(nullptr);
  j["user"] = r.user.empty() ? OJson(nullptr) : OJson(r.user);
  OJson metadata = OJson::object();
  for (const auto& [k, v] : r.metadata) metadata[k] = v;
  j["metadata"] = std::move(metadata);
  return j;
}

std::string ResponseJson(const ResponseObject& response) {
  return DumpJson(ResponseObjectJson(response));
}

std::string ResponseDeletedJson(std::string_view response_id) {
  OJson j = OJson::object();
  j["id"] = std::string(response_id);
  j["object"] = "response";
  j["deleted"] = true;
  return DumpJson(j);
}

ResponseStreamEncoder::ResponseStreamEncoder(ResponseObject response)
    : response_(std::move(response)) {
  response_.status = ResponseStatus::kInProgress;
  response_.output_text.clear();
  response_.usage.reset();
}

std::string ResponseStreamEncoder::Event(std::string_view type, OJson data) {
  OJson j = OJson::object();
  j["type"] = type;
  j["sequence_number"] = sequence_++;
  for (auto& [k, v] : data.items()) j[k] = std::move(v);
  return SseEvent(type, DumpJson(j));
}

OJson ResponseStreamEncoder::MessageItem(std::string_view status, std::string_view text,
                                         bool with_content) const {
  return MessageItemJson(response_.message_id, status, text, with_content);
}

std::string ResponseStreamEncoder::Start() {
  std::string out;
  out += Event("response.created", {{"response", ResponseObjectJson(response_)}});
  out += Event("response.in_progress", {{"response", ResponseObjectJson(response_)}});
  out += Event("response.output_item.added",
               {{"output_index", 0}, {"item", MessageItem("in_progress", "", false)}});
  out += Event("response.content_part.added", {{"item_id", response_.message_id},
                                               {"output_index", 0},
                                               {"content_index", 0},
                                               {"part", TextPart("")}});
  return out;
}

std::string ResponseStreamEncoder::Delta(std::string_view text) {
  if (text.empty()) return "";
  response_.output_text += text;
  return Event("response.output_text.delta", {{"item_id", response_.message_id},
                                              {"output_index", 0},
                                              {"content_index", 0},
                                              {"delta", std::string(text)},
                                              {"logprobs", OJson::array()}});
}

std::string ResponseStreamEncoder::Finish(const ResponseObject& final) {
  const std::string& text = final.output_text;
  std::string_view item_status =
      final.status == ResponseStatus::kCompleted ? "completed" : "incomplete";
  std::string out;
  out += Event("response.output_text.done", {{"item_id", response_.message_id},
                                             {"output_index", 0},
                                             {"content_index", 0},
                                             {"text", text},
                                             {"logprobs", OJson::array()}});
  out += Event("response.content_part.done", {{"item_id", response_.message_id},
                                              {"output_index", 0},
                                              {"content_index", 0},
                                              {"part", TextPart(text)}});
  out += Event("response.output_item.done",
               {{"output_index", 0}, {"item", MessageItem(item_status, text, true)}});
  std::string_view type =
      final.status == ResponseStatus::kIncomplete ? "response.incomplete" : "response.completed";
  out += Event(type, {{"response", ResponseObjectJson(final)}});
  response_ = final;
  return out;
}

std::string ResponseStreamEncoder::Fail(const ApiError& error) {
  response_.status = ResponseStatus::kFailed;
  response_.error_code = error.code.empty() ? "server_error" : error.code;
  response_.error_message = error.message;
  return Event("response.failed", {{"response", ResponseObjectJson(response_)}});
}

}  // namespace mneme::api
