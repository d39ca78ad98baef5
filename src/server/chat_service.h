// ChatService: the OpenAI chat endpoint on top of sessions and the engine —
// the glue between http/ (bytes), api/ (JSON), session/ (history, turn
// locks), tokenizer/ (template, incremental prompt) and scheduler/ (tokens).
//
// One turn, as data:
//
//   io thread     parse + authorize ──post──▶ turn worker
//   turn worker   session: create, or BeginTurn (FIFO turn lock; may wait)
//                 prompt:  history + new messages → BuildTurnPrompt (only the
//                          new suffix is tokenized when the template allows)
//                 EngineService::Submit ──▶ returns at once
//   engine thread notifier: tokens → IncrementalDecoder → StopChecker →
//                 SSE deltas (or accumulate); at the final event: usage with
//                 cached tokens, lease.Commit(new messages + answer, tokens,
//                 chunk hashes), End — or, on error / client gone, no commit:
//                 the session is exactly as before the turn.
//
// The turn lock is held (by the lease) from BeginTurn to Commit, so
// concurrent turns of one session run one after another in arrival order and
// each sees the previous exchange; different sessions run in parallel. Turn
// workers only ever block waiting for a turn lock; never while generating.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "api/id_generator.h"
#include "http/request.h"
#include "http/response_writer.h"
#include "api/api_error.h"
#include "api/responses_object.h"
#include "kv/chunk_hasher.h"
#include "server/metrics.h"
#include "scheduler/engine_service.h"
#include "session/session_store.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace mneme::server {

struct ChatServiceOptions {
  std::string model_name;               // what /v1/models lists and responses echo
  std::vector<std::string> api_keys;    // empty: no authentication
  session::BusyPolicy busy = session::BusyPolicy::kQueue;
  std::chrono::milliseconds busy_wait{60000};  // queue mode: longest wait for a turn
  int turn_workers = 16;                // threads that may wait for turn locks
  int context_length = 0;               // the model's
  // A conversation longer than the context: 400 (false) or drop its oldest
  // messages after the system prompt from this turn's prompt (true).
  bool truncate_overflow = false;
  int chunk_tokens = 256;               // chunk hash size
  kv::Hash128 fingerprint;              // root of the chunk hashes
};

// A small FIFO task queue on a fixed set of threads.
class TaskQueue {
 public:
  explicit TaskQueue(int threads);
  ~TaskQueue();  // runs what is queued, then joins
  void Post(std::function<void()> task);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

class ChatService {
 public:
  // Everything must outlive the service.
  // `metrics` may be null.
  ChatService(ChatServiceOptions options, const Tokenizer* tokenizer,
              const ChatTemplate* chat_template, scheduler::EngineService* engine,
              session::SessionStore* store, Metrics* metrics = nullptr);

  void HandleChat(const http::Request& request, std::shared_ptr<http::ResponseWriter> writer);
  void HandleModels(const http::Request& request, std::shared_ptr<http::ResponseWriter> writer);
  void HandleHealth(const http::Request& request, std::shared_ptr<http::ResponseWriter> writer);
  // The Responses API (responses.cc): POST /v1/responses, and GET / DELETE
  // /v1/responses/{id} (a prefix route).
  void HandleResponses(const http::Request& request, std::shared_ptr<http::ResponseWriter> writer);
  // POST /v1/completions: a raw prompt, no session.
  void HandleCompletions(const http::Request& request,
                         std::shared_ptr<http::ResponseWriter> writer);
  void HandleResponseById(const http::Request& request,
                          std::shared_ptr<http::ResponseWriter> writer);

  // The caller's key ("" when keys are off), or nullopt after answering 401.
  std::optional<std::string> Authorize(const http::Request& request, http::ResponseWriter* writer);

  int64_t num_turns_running() const { return turns_running_.load(); }

 private:
  struct Turn;
  void RunTurn(std::shared_ptr<Turn> turn);
  void OnEvents(const std::shared_ptr<Turn>& turn);
  void Release(Turn* turn);  // drops the turn from live_
  void SendError(http::ResponseWriter* w, const api::ApiError& e);
  template <typename Req, typename Parse>
  std::optional<std::pair<std::string, Req>> Accept(const http::Request& request,
                                                    http::ResponseWriter* writer, Parse parse);
  // Output of a turn, whatever the API: text deltas (streams only), a
  // failure (an error body, or an error event and a truncated stream).
  void Delta(Turn& turn, const std::string& text);
  void Fail(Turn& turn, const api::ApiError& e);
  // Responses API: the answer, stored for GET / previous_response_id.
  void FinishResponse(Turn& turn, api::FinishReason reason, const api::Usage& usage);
  // A Responses turn that failed leaves no session behind.
  void DropForkedSession(Turn& turn);
  void FinishCompletion(Turn& turn, api::FinishReason reason, const api::Usage& usage);
  // Session, history and prompt of a chat or Responses turn (false after
  // answering an error).
  bool PrepareSessionTurn(Turn* turn);

  // Stored responses: id -> (owner, the session after that response, object).
  struct StoredResponse {
    std::string owner;
    std::string session_id;
    api::ResponseObject object;
  };
  std::mutex responses_mu_;
  std::unordered_map<std::string, StoredResponse> responses_;
  std::deque<std::string> response_order_;  // oldest first, for the bound

  ChatServiceOptions options_;
  const Tokenizer* tokenizer_;
  const ChatTemplate* chat_template_;
  scheduler::EngineService* engine_;
  session::SessionStore* store_;
  Metrics* metrics_;
  api::IdGenerator ids_;
  std::atomic<int64_t> turns_running_{0};
  std::mutex live_mu_;
  std::unordered_map<Turn*, std::shared_ptr<Turn>> live_;  // submitted, not finished
  TaskQueue workers_;  // last: joined first
};

}  // namespace mneme::server
