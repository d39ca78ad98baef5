// ChatService::Turn: everything one generation turn needs, shared by the
// turn worker, the engine thread's notifier and the connection's close
// callback (internal to src/server/; chat_service.cc and responses.cc).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/chat_messages.h"
#include "api/chat_response.h"
#include "api/completion_response.h"
#include "api/responses_object.h"
#include "model/sampler.h"
#include "model/stop_checker.h"
#include "scheduler/request.h"
#include "server/chat_service.h"
#include "session/session_store.h"
#include "tokenizer/chat_prompt.h"
#include "tokenizer/incremental_decoder.h"

namespace mneme::server {

struct ChatService::Turn {
  std::shared_ptr<http::ResponseWriter> writer;
  // What to run: this turn's new messages (stored), optional instructions
  // (a system message rendered first, never stored: the Responses API).
  std::vector<api::ChatMessage> new_messages;
  std::optional<std::string> instructions;
  SamplingParams sampling;
  std::optional<int32_t> max_tokens;
  bool stream = false;
  bool include_usage = false;
  // The Responses API: the answer is a response object; the turn runs on a
  // fork of the previous response's session (or a new one).
  bool responses = false;
  std::string fork_from;
  api::ResponseObject response;
  std::optional<api::ResponseStreamEncoder> response_encoder;
  // Raw completions (/v1/completions): no session, the prompt as given.
  bool raw = false;
  std::vector<TokenId> raw_prompt;
  std::optional<api::CompletionStreamEncoder> completion_encoder;
  std::string owner;
  std::string session_id;
  std::unique_ptr<session::TurnLease> lease;
  TurnPrompt prompt;
  std::shared_ptr<scheduler::RequestHandle> handle;
  std::optional<IncrementalDecoder> decoder;
  std::optional<StopChecker> stops;
  std::optional<api::ChatStreamEncoder> encoder;
  std::string id;
  int64_t created = 0;
  std::string answer;                // text sent (or to send)
  std::vector<TokenId> answer_tokens;
  bool stopped_by_string = false;
  std::mutex mu;                     // notifier calls are serialized by the engine; close is not
  bool done = false;
};

// The common start of a generation request: count it, check the key, parse
// and validate the body with `parse`, check the model name. Answers the error
// and returns nullopt when any step fails.
template <typename Req, typename Parse>
std::optional<std::pair<std::string, Req>> ChatService::Accept(const http::Request& request,
                                                              http::ResponseWriter* writer,
                                                              Parse parse) {
  if (metrics_ != nullptr) metrics_->RecordRequest();
  std::optional<std::string> owner = Authorize(request, writer);
  if (!owner) return std::nullopt;
  api::ParseOptions options;
  options.vocab_size = static_cast<int32_t>(tokenizer_->vocab().size());
  api::ApiResult<Req> parsed = parse(request.body, options);
  if (!parsed.ok()) {
    SendError(writer, parsed.error());
    return std::nullopt;
  }
  if (!parsed->model.empty() && parsed->model != options_.model_name) {
    SendError(writer, api::ModelNotFound(parsed->model));
    return std::nullopt;
  }
  return std::make_pair(std::move(*owner), std::move(parsed).value());
}

}  // namespace mneme::server
