// Request: what a client thread hands the engine, and the channel its tokens
// come back through.
//
// A RequestHandle is shared by the submitting thread (HTTP handler, CLI, test)
// and the engine thread. The engine pushes events (one per generated token,
// then exactly one final event); the client either blocks on Next() or, for
// asynchronous consumers such as an HTTP connection, registers a notifier
// that the engine calls (on its own thread, so it must be quick and must not
// call back into the engine) whenever events are ready, and drains them with
// TryNext(). Cancel() from any thread makes the engine drop the request at
// its next step and free everything it held; a final event with
// FinishReason::kCancelled follows.
//
//   client                      engine thread
//   Submit(options) ──────────▶ waiting queue ─▶ admitted ─▶ decode steps
//   Next() ◀── token, token, ...  ◀── Push(kToken) per sampled token
//   Next() ◀── final (reason, stats, error)     ◀── Push(kFinal) once
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "model/sampler.h"
#include "tokenizer/vocab.h"
#include "util/status.h"

namespace mneme::scheduler {

struct RequestOptions {
  std::vector<TokenId> prompt;  // what to continue (BOS, template, ... included)
  // Sampling, max_tokens, ignore_eos. Stop strings are matched on text by the
  // caller (it cancels the request when one matches).
  SamplingParams sampling;
  // Radix cache namespace: requests only share cached KV within one (tenant
  // isolation). The default "" is shared by every request of the model.
  std::string cache_namespace;
};

enum class FinishReason {
  kStop,       // an end-of-generation token (not emitted as a token)
  kLength,     // max_tokens generated
  kContext,    // the model's context (or the whole KV pool) is full
  kCancelled,  // Cancel() or the engine shutting down
  kError,      // see TokenEvent::error
};
const char* FinishReasonName(FinishReason r);

struct RequestStats {
  int prompt_tokens = 0;
  int cached_tokens = 0;     // prompt tokens whose KV came from the prefix cache
  int computed_tokens = 0;   // prefill rows run (recomputation after preemption included)
  int generated_tokens = 0;  // tokens emitted
  int num_preemptions = 0;   // times evicted from the running set (recomputed later)
  std::chrono::steady_clock::time_point submitted, first_token, finished;
};

struct TokenEvent {
  enum class Kind { kToken, kFinal };
  Kind kind = Kind::kToken;
  TokenId token = -1;                         // kToken
  FinishReason reason = FinishReason::kStop;  // kFinal
  Status error;                               // kFinal with kError
  RequestStats stats;                         // kFinal
};

class RequestHandle {
 public:
  explicit RequestHandle(int64_t id) : id_(id) {}
  RequestHandle(const RequestHandle&) = delete;
  RequestHandle& operator=(const RequestHandle&) = delete;

  int64_t id() const { return id_; }

  // Client side. Blocks until an event is available; false once the final
  // event has been returned (nothing more will come).
  bool Next(TokenEvent* event);
  // Non-blocking: false if nothing is queued right now.
  bool TryNext(TokenEvent* event);
  // Called by the engine thread (with no lock held) after events are pushed.
  // Set it before the handle is submitted.
  void SetNotifier(std::function<void()> notify);
  void Cancel();
  bool cancelled() const;
  bool finished() const;  // the final event has been pushed

  // Engine side.
  void Push(TokenEvent event);

 private:
  const int64_t id_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<TokenEvent> events_;
  bool cancelled_ = false;
  bool final_pushed_ = false;
  bool final_taken_ = false;
  std::function<void()> notify_;
};

}  // namespace mneme::scheduler
