// Metrics: the numbers `GET /metrics` exposes, in Prometheus' text format.
//
// Counters and histograms are updated by the request handlers (any thread;
// atomics and one small mutex per histogram); gauges (KV pool, queue,
// sessions, connections) are read from their owners when scraped.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "scheduler/scheduler.h"
#include "session/session_store.h"

namespace mneme::server {

// A fixed-bucket histogram of seconds.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double seconds);
  // Prometheus lines for metric `name` (with _bucket, _sum, _count).
  void Render(const std::string& name, const std::string& help, std::string* out) const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<int64_t> counts_;  // per bound, plus +Inf
  double sum_ = 0;
  int64_t count_ = 0;
};

struct HttpGauges {
  int64_t open_connections = 0;
  int64_t requests_total = 0;
  int64_t active_streams = 0;
};

class Metrics {
 public:
  Metrics();

  // One finished generation request (a chat turn).
  void RecordTurn(double ttft_s, double latency_s, int64_t prompt_tokens, int64_t cached_tokens,
                  int64_t completion_tokens);
  // One answered error (any endpoint), by HTTP status.
  void RecordError(int http_status);
  void RecordRequest() { requests_.fetch_add(1, std::memory_order_relaxed); }

  std::string Render(const scheduler::SchedulerStats& engine,
                     const session::SessionStoreStats& sessions, const HttpGauges& http) const;

 private:
  std::atomic<int64_t> requests_{0};
  std::atomic<int64_t> turns_{0};
  std::atomic<int64_t> errors_4xx_{0}, errors_5xx_{0};
  std::atomic<int64_t> prompt_tokens_{0}, cached_tokens_{0}, completion_tokens_{0};
  Histogram ttft_;
  Histogram latency_;
};

}  // namespace mneme::server
