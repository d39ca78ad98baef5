// EngineService: inbox, engine thread, step loop.
#include "scheduler/engine_service.h"

#include <string>
#include <utility>

#include "util/check.h"

namespace mneme::scheduler {

Result<std::unique_ptr<EngineService>> EngineService::Create(engine::ModelRunner* runner,
                                                             std::vector<TokenId> eog_ids,
                                                             EngineOptions options) {
  if (options.scheduler.context_length == 0) {
    options.scheduler.context_length = static_cast<int>(runner->config().context_length);
  }
  MNEME_RETURN_IF_ERROR(Scheduler::ValidateOptions(options.scheduler));
  if (options.max_waiting < 1) return InvalidArgument("max_waiting must be >= 1");
  auto s = std::unique_ptr<EngineService>(
      new EngineService(runner, std::move(eog_ids), std::move(options)));
  s->thread_ = std::thread([p = s.get()] { p->Loop(); });
  return s;
}

EngineService::EngineService(engine::ModelRunner* runner, std::vector<TokenId> eog_ids,
                             EngineOptions options)
    : runner_(runner),
      options_(std::move(options)),
      scheduler_(options_.scheduler, runner->kv_pool(),
                 static_cast<int32_t>(runner->config().vocab_size), std::move(eog_ids)) {
  stats_ = scheduler_.stats();
}

EngineService::~EngineService() { Stop(); }

Result<std::shared_ptr<RequestHandle>> EngineService::Submit(RequestOptions request) {
  auto handle = std::make_shared<RequestHandle>(next_id_.fetch_add(1));
  MNEME_RETURN_IF_ERROR(Submit(handle, std::move(request)));
  return handle;
}

Status EngineService::Submit(std::shared_ptr<RequestHandle> handle, RequestOptions request) {
  MNEME_RETURN_IF_ERROR(scheduler_.Validate(request));
  {
    std::lock_guard lock(mu_);
    if (stopping_) return FailedPrecondition("the engine is shutting down");
    if (num_queued_ >= options_.max_waiting) {
      return ResourceExhausted("overloaded: " + std::to_string(num_queued_) +
                               " requests are already waiting; retry later");
    }
    ++num_queued_;
    inbox_.emplace_back(std::move(handle), std::move(request));
  }
  cv_.notify_one();
  return Status::Ok();
}

void EngineService::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

SchedulerStats EngineService::Stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

int EngineService::num_waiting() const {
  std::lock_guard lock(mu_);
  return num_queued_;
}

void EngineService::Loop() {
  engine::Batch batch;
  engine::Logits logits;
  std::vector<std::pair<std::shared_ptr<RequestHandle>, RequestOptions>> incoming;
  while (true) {
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !inbox_.empty() || !scheduler_.idle(); });
      if (stopping_) {
        incoming.swap(inbox_);
        lock.unlock();
        for (auto& [handle, request] : incoming) {
          TokenEvent ev;
          ev.kind = TokenEvent::Kind::kFinal;
          ev.reason = FinishReason::kCancelled;
          handle->Push(std::move(ev));
        }
        scheduler_.CancelAll();
        std::lock_guard relock(mu_);
        stats_ = scheduler_.stats();
        num_queued_ = 0;
        return;
      }
      incoming.swap(inbox_);
    }
    for (auto& [handle, request] : incoming) {
      Status s = scheduler_.Add(handle, std::move(request));
      if (!s.ok()) {  // validated at Submit; kept for safety
        TokenEvent ev;
        ev.kind = TokenEvent::Kind::kFinal;
        ev.reason = FinishReason::kError;
        ev.error = s;
        handle->Push(std::move(ev));
      }
    }
    incoming.clear();
    if (scheduler_.Schedule(&batch)) {
      Status s = runner_->Forward(batch, &logits);
      if (s.ok()) {
        scheduler_.Postprocess(batch, logits);
      } else {
        scheduler_.FailBatch(batch, s);
      }
    }
    if (options_.check_invariants) {
      Status s = scheduler_.CheckInvariants();
      CHECK(s.ok()) << s.ToString();
    }
    std::lock_guard lock(mu_);
    stats_ = scheduler_.stats();
    num_queued_ = static_cast<int>(inbox_.size()) + scheduler_.num_waiting();
  }
}

}  // namespace mneme::scheduler
