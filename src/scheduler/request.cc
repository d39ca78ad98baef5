// RequestHandle: a mutex + condition variable channel of TokenEvents.
#include "scheduler/request.h"

#include <utility>

#include "util/check.h"

namespace mneme::scheduler {

const char* FinishReasonName(FinishReason r) {
  switch (r) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kContext: return "context";
    case FinishReason::kCancelled: return "cancelled";
    case FinishReason::kError: return "error";
  }
  return "unknown";
}

bool RequestHandle::Next(TokenEvent* event) {
  std::unique_lock lock(mu_);
  if (final_taken_) return false;
  cv_.wait(lock, [&] { return !events_.empty(); });
  *event = std::move(events_.front());
  events_.pop_front();
  if (event->kind == TokenEvent::Kind::kFinal) final_taken_ = true;
  return true;
}

bool RequestHandle::TryNext(TokenEvent* event) {
  std::lock_guard lock(mu_);
  if (events_.empty()) return false;
  *event = std::move(events_.front());
  events_.pop_front();
  if (event->kind == TokenEvent::Kind::kFinal) final_taken_ = true;
  return true;
}

void RequestHandle::SetNotifier(std::function<void()> notify) {
  std::lock_guard lock(mu_);
  notify_ = std::move(notify);
}

void RequestHandle::Cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
}

bool RequestHandle::cancelled() const {
  std::lock_guard lock(mu_);
  return cancelled_;
}

bool RequestHandle::finished() const {
  std::lock_guard lock(mu_);
  return final_pushed_;
}

void RequestHandle::Push(TokenEvent event) {
  std::function<void()> notify;
  {
    std::lock_guard lock(mu_);
    CHECK(!final_pushed_) << "request " << id_ << ": event after the final one";
    if (event.kind == TokenEvent::Kind::kFinal) final_pushed_ = true;
    events_.push_back(std::move(event));
    notify = notify_;
  }
  cv_.notify_all();
  if (notify) notify();
}

}  // namespace mneme::scheduler
