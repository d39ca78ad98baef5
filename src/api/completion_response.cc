// text_completion objects and streams (see completion_response.h).
#include "api/completion_response.h"

#include "api/json_io.h"
#include "api/sse.h"

namespace mneme::api {

using OJson = nlohmann::ordered_json;

namespace {

OJson Choice(std::string_view text, const OJson& finish_reason) {
  OJson c = OJson::object();
  c["text"] = std::string(text);
  c["index"] = 0;
  c["logprobs"] = nullptr;
  c["finish_reason"] = finish_reason;
  return c;
}

OJson Object(const std::string& id, int64_t created, const std::string& model) {
  OJson j = OJson::object();
  j["id"] = id;
  j["object"] = "text_completion";
  j["created"] = created;
  j["model"] = model;
  return j;
}

}  // namespace

std::string CompletionJson(const CompletionResult& result) {
  OJson j = Object(result.id, result.created, result.model);
  j["choices"] = OJson::array({Choice(result.text, FinishReasonName(result.finish_reason))});
  j["usage"] = UsageJson(result.usage);
  return DumpJson(j);
}

std::string CompletionStreamEncoder::Delta(std::string_view text) const {
  if (text.empty()) return "";
  OJson j = Object(header_.id, header_.created, header_.model);
  j["choices"] = OJson::array({Choice(text, nullptr)});
  if (header_.include_usage) j["usage"] = nullptr;
  return SseData(DumpJson(j));
}

std::string CompletionStreamEncoder::Finish(FinishReason reason, const Usage& usage) const {
  OJson last = Object(header_.id, header_.created, header_.model);
  last["choices"] = OJson::array({Choice("", FinishReasonName(reason))});
  if (header_.include_usage) last["usage"] = nullptr;
  std::string out = SseData(DumpJson(last));
  if (header_.include_usage) {
    OJson u = Object(header_.id, header_.created, header_.model);
    u["choices"] = OJson::array();
    u["usage"] = UsageJson(usage);
    out += SseData(DumpJson(u));
  }
  out += SseDone();
  return out;
}

}  // namespace mneme::api
