// Shared by the streaming and shutdown tests: a server whose /stream route
// starts an SSE response and hands the writer to the test through an Inbox,
// so the test (or a producer thread) writes the events, like the engine will.
// /defer hands over the writer without answering; /hello answers at once.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>

#include "http/server.h"

namespace mneme::http::testing {

class Inbox {
 public:
  void Push(std::shared_ptr<ResponseWriter> w) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      q_.push_back(std::move(w));
    }
    cv_.notify_all();
  }
  // The oldest writer, or nullptr after `timeout`.
  std::shared_ptr<ResponseWriter> Pop(
      std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!cv_.wait_for(lock, timeout, [&] { return !q_.empty(); })) return nullptr;
    auto w = std::move(q_.front());
    q_.pop_front();
    return w;
  }
  // Waits until `n` writers arrived; false on timeout.
  bool WaitForCount(size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return q_.size() >= n; });
  }
  std::deque<std::shared_ptr<ResponseWriter>> TakeAll() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(q_);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<ResponseWriter>> q_;
};

inline Router StreamRouter(Inbox* inbox) {
  Router r;
  r.Add("GET", "/stream", [inbox](const Request&, std::shared_ptr<ResponseWriter> w) {
    if (w->StartStream(200, "text/event-stream")) inbox->Push(std::move(w));
  });
  r.Add("GET", "/defer", [inbox](const Request&, std::shared_ptr<ResponseWriter> w) {
    inbox->Push(std::move(w));  // answered later by the test
  });
  r.Add("GET", "/hello", [](const Request&, std::shared_ptr<ResponseWriter> w) {
    w->Send(200, "text/plain", "hello");
  });
  return r;
}

inline std::unique_ptr<Server> StartStreamServer(ServerOptions o, Inbox* inbox) {
  o.port = 0;
  auto server = Server::Create(std::move(o), StreamRouter(inbox));
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  auto s = std::move(server).value();
  Status st = s->Start();
  EXPECT_TRUE(st.ok()) << st.ToString();
  return s;
}

}  // namespace mneme::http::testing
