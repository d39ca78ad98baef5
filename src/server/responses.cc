// The Responses API on ChatService's turn machinery.
//
// A chain of responses is a conversation stored with the session machinery:
// each stored response owns a session holding the conversation up to and
// including its answer (instructions are not part of it: OpenAI applies
// them to one request only). A request with previous_response_id runs on a
// fork of that response's session, so branching from any earlier response
// works and never disturbs the chain it branches from; the fork shares the
// parent's KV through the radix cache (same tokens), so continuing costs
// only the new tokens. store=false answers without keeping anything.
#include <chrono>

#include "api/json_io.h"
#include "api/responses_object.h"
#include "api/responses_request.h"
#include "server/chat_service.h"
#include "server/turn.h"

namespace mneme::server {
namespace {

constexpr size_t kMaxStoredResponses = 100000;

}  // namespace

void ChatService::HandleResponses(const http::Request& request,
                                  std::shared_ptr<http::ResponseWriter> writer) {
  auto accepted =
      Accept<api::ResponsesRequest>(request, writer.get(), api::ParseResponsesRequest);
  if (!accepted) return;
  const std::optional<std::string> owner = std::move(accepted->first);
  api::ResponsesRequest req = std::move(accepted->second);
  auto turn = std::make_shared<Turn>();
  turn->writer = std::move(writer);
  turn->owner = *owner;
  turn->responses = true;
  turn->new_messages = std::move(req.input);
  turn->instructions = std::move(req.instructions);
  turn->sampling = std::move(req.sampling);
  turn->max_tokens = req.max_output_tokens;
  turn->stream = req.stream;
  turn->response.previous_response_id = req.previous_response_id;
  turn->response.store = req.store;
  turn->response.metadata = std::move(req.metadata);
  turn->response.user = std::move(req.user);
  if (req.previous_response_id) {
    std::lock_guard lock(responses_mu_);
    auto it = responses_.find(*req.previous_response_id);
    if (it == responses_.end() || it->second.owner != *owner) {
      return SendError(turn->writer.get(), api::ResponseNotFound(*req.previous_response_id));
    }
    turn->fork_from = it->second.session_id;
  }
  workers_.Post([this, turn] { RunTurn(turn); });
}

void ChatService::FinishResponse(Turn& turn, api::FinishReason reason, const api::Usage& usage) {
  api::ResponseObject final = turn.response;
  final.status = api::StatusForFinish(reason);
  final.output_text = turn.answer;
  final.usage = usage;
  if (final.store) {
    std::vector<std::string> evicted_sessions;
    {
      std::lock_guard lock(responses_mu_);
      responses_[final.id] = StoredResponse{turn.owner, turn.session_id, final};
      response_order_.push_back(final.id);
      while (response_order_.size() > kMaxStoredResponses) {
        auto it = responses_.find(response_order_.front());
        if (it != responses_.end()) {
          evicted_sessions.push_back(it->second.session_id);
          responses_.erase(it);
        }
        response_order_.pop_front();
      }
    }
    for (const std::string& id : evicted_sessions) (void)store_->Delete(id, turn.owner);
  } else {
    (void)store_->Delete(turn.session_id, turn.owner);
  }
  if (turn.stream) {
    turn.writer->Write(turn.response_encoder->Finish(final));
    turn.writer->End();
  } else {
    turn.writer->Send(200, "application/json", api::ResponseJson(final));
  }
}

void ChatService::DropForkedSession(Turn& turn) {
  if (turn.responses && !turn.session_id.empty()) (void)store_->Delete(turn.session_id, turn.owner);
}

void ChatService::HandleResponseById(const http::Request& request,
                                     std::shared_ptr<http::ResponseWriter> writer) {
  if (metrics_ != nullptr) metrics_->RecordRequest();
  const std::optional<std::string> owner = Authorize(request, writer.get());
  if (!owner) return;
  const std::string id = request.path.substr(std::string_view("/v1/responses/").size());
  std::optional<StoredResponse> found;
  {
    std::lock_guard lock(responses_mu_);
    auto it = responses_.find(id);
    if (it != responses_.end() && it->second.owner == *owner) {
      found = it->second;
      if (request.method == "DELETE") responses_.erase(it);
    }
  }
  if (!found) return SendError(writer.get(), api::ResponseNotFound(id));
  if (request.method == "DELETE") {
    (void)store_->Delete(found->session_id, *owner);
    writer->Send(200, "application/json", api::ResponseDeletedJson(id));
    return;
  }
  writer->Send(200, "application/json", api::ResponseJson(found->object));
}

}  // namespace mneme::server
