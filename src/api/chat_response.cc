// chat.completion objects and chat.completion.chunk streams (see chat_response.h).
#include "api/chat_response.h"

#include "api/json_io.h"
#include "api/sse.h"

namespace mneme::api {

using OJson = nlohmann::ordered_json;

OJson UsageJson(const Usage& usage) {
  OJson u = OJson::object();
  u["prompt_tokens"] = usage.prompt_tokens;
  u["completion_tokens"] = usage.completion_tokens;
  u["total_tokens"] = usage.total_tokens();
  u["prompt_tokens_details"] = {{"cached_tokens", usage.cached_tokens}};
  u["completion_tokens_details"] = {{"reasoning_tokens", 0}};
  return u;
}

std::string ChatCompletionJson(const ChatCompletionResult& result) {
  OJson message = OJson::object();
  message["role"] = "assistant";
  message["content"] = result.content;
  message["refusal"] = nullptr;
  OJson choice = OJson::object();
  choice["index"] = 0;
  choice["message"] = std::move(message);
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = FinishReasonName(result.finish_reason);
  OJson j = OJson::object();
  j["id"] = result.id;
  j["object"] = "chat.completion";
  j["created"] = result.created;
  j["model"] = result.model;
  if (result.session_id) j["session_id"] = *result.session_id;
  j["choices"] = OJson::array({std::move(choice)});
  j["usage"] = UsageJson(result.usage);
  return DumpJson(j);
}

OJson ChatStreamEncoder::Chunk() const {
  OJson j = OJson::object();
  j["id"] = header_.id;
  j["object"] = "chat.completion.chunk";
  j["created"] = header_.created;
  j["model"] = header_.model;
  if (header_.session_id) j["session_id"] = *header_.session_id;
  return j;
}

namespace {

OJson ChoiceDelta(OJson delta, const OJson& finish_reason) {
  OJson choice = OJson::object();
  choice["index"] = 0;
  choice["delta"] = std::move(delta);
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finish_reason;
  return choice;
}

}  // namespace

std::string ChatStreamEncoder::Start() const {
  OJson delta = OJson::object();
  delta["role"] = "assistant";
  delta["content"] = "";
  OJson j = Chunk();
  j["choices"] = OJson::array({ChoiceDelta(std::move(delta), nullptr)});
  if (header_.include_usage) j["usage"] = nullptr;
  return SseData(DumpJson(j));
}

std::string ChatStreamEncoder::Delta(std::string_view text) const {
  if (text.empty()) return "";
  OJson delta = OJson::object();
  delta["content"] = std::string(text);
  OJson j = Chunk();
  j["choices"] = OJson::array({ChoiceDelta(std::move(delta), nullptr)});
  if (header_.include_usage) j["usage"] = nullptr;
  return SseData(DumpJson(j));
}

std::string ChatStreamEncoder::Finish(FinishReason reason, const Usage& usage) const {
  OJson last = Chunk();
  last["choices"] = OJson::array({ChoiceDelta(OJson::object(), FinishReasonName(reason))});
  if (header_.include_usage) last["usage"] = nullptr;
  std::string out = SseData(DumpJson(last));
  if (header_.include_usage) {
    OJson u = Chunk();
    u["choices"] = OJson::array();
    u["usage"] = UsageJson(usage);
    out += SseData(DumpJson(u));
  }
  out += SseDone();
  return out;
}

std::string ChatStreamEncoder::Error(const ApiError& error) {
  return SseData(ErrorBody(error));
}

}  // namespace mneme::api
