// EngineService: the engine on its own thread. Other threads Submit requests
// and receive tokens through their RequestHandle; one thread runs the step
// loop (Scheduler::Schedule → ModelRunner::Forward → Scheduler::Postprocess)
// for as long as there is work, and sleeps when there is none.
//
//   HTTP / CLI threads                    engine thread
//   Submit(req) ─▶ inbox (mutex) ─wake─▶  drain inbox into the scheduler
//       │                                 Schedule(batch)
//       │ RESOURCE_EXHAUSTED "overloaded" Forward(batch)
//       │ when max_waiting are queued     Postprocess → handle->Push(tokens)
//   handle->Next() / notifier ◀────────── events
//
// Backpressure: at most max_waiting requests wait (inbox + scheduler queue);
// beyond that Submit fails at once with RESOURCE_EXHAUSTED (the API maps it
// to 429). Stop() (also the destructor) finishes every request with
// kCancelled and joins the thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/model_runner.h"
#include "scheduler/request.h"
#include "scheduler/scheduler.h"
#include "util/status.h"

namespace mneme::scheduler {

struct EngineOptions {
  SchedulerOptions scheduler;
  int max_waiting = 256;  // queued requests before Submit says "overloaded"
  // Debug aid for tests: check the scheduler's invariants after every step.
  bool check_invariants = false;
};

class EngineService {
 public:
  // `runner` (and its pool, weights, threads) must outlive the service.
  // context_length defaults to the model's when options leave it 0.
  static Result<std::unique_ptr<EngineService>> Create(engine::ModelRunner* runner,
                                                       std::vector<TokenId> eog_ids,
                                                       EngineOptions options);
  ~EngineService();
  EngineService(const EngineService&) = delete;
  EngineService& operator=(const EngineService&) = delete;

  // Queues a request. INVALID_ARGUMENT (bad prompt or sampling), or
  // RESOURCE_EXHAUSTED (the queue is full: overloaded; or the prompt can
  // never fit the KV cache), or FAILED_PRECONDITION after Stop.
  Result<std::shared_ptr<RequestHandle>> Submit(RequestOptions request);
  // The same with a handle the caller made (to set a notifier first).
  Status Submit(std::shared_ptr<RequestHandle> handle, RequestOptions request);

  // Cancels everything and joins the engine thread. Idempotent.
  void Stop();

  // A snapshot, refreshed after every step.
  SchedulerStats Stats() const;
  // Requests submitted but not yet admitted.
  int num_waiting() const;
  const SchedulerOptions& scheduler_options() const { return options_.scheduler; }

 private:
  EngineService(engine::ModelRunner* runner, std::vector<TokenId> eog_ids, EngineOptions options);
  void Loop();

  engine::ModelRunner* runner_;
  EngineOptions options_;
  Scheduler scheduler_;  // engine thread only (Validate is const and thread-safe)

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::pair<std::shared_ptr<RequestHandle>, RequestOptions>> inbox_;
  bool stopping_ = false;
  int num_queued_ = 0;  // inbox + scheduler waiting
  SchedulerStats stats_;
  std::atomic<int64_t> next_id_{1};
  std::thread thread_;
};

}  // namespace mneme::scheduler
