// Metrics (see metrics.h).
#include "server/metrics.h"

#include <cstdio>
#include <utility>

namespace mneme::server {
namespace {

void Line(std::string* out, const std::string& name, const std::string& help,
          const std::string& type, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  *out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " +
          buf + "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::Observe(double seconds) {
  std::lock_guard lock(mu_);
  size_t i = 0;
  while (i < bounds_.size() && seconds > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += seconds;
  ++count_;
}

void Histogram::Render(const std::string& name, const std::string& help, std::string* out) const {
  std::lock_guard lock(mu_);
  *out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  int64_t cumulative = 0;
  char buf[512];
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    std::snprintf(buf, sizeof buf, "%s_bucket{le=\"%g\"} %lld\n", name.c_str(), bounds_[i],
                  static_cast<long long>(cumulative));
    *out += buf;
  }
  cumulative += counts_.back();
  std::snprintf(buf, sizeof buf, "%s_bucket{le=\"+Inf\"} %lld\n%s_sum %.17g\n%s_count %lld\n",
                name.c_str(), static_cast<long long>(cumulative), name.c_str(), sum_, name.c_str(),
                static_cast<long long>(count_));
  *out += buf;
}

Metrics::Metrics()
    : ttft_({0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
      latency_({0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}) {}

void Metrics::RecordTurn(double ttft_s, double latency_s, int64_t prompt_tokens,
                         int64_t cached_tokens, int64_t completion_tokens) {
  turns_.fetch_add(1, std::memory_order_relaxed);
  prompt_tokens_.fetch_add(prompt_tokens, std::memory_order_relaxed);
  cached_tokens_.fetch_add(cached_tokens, std::memory_order_relaxed);
  completion_tokens_.fetch_add(completion_tokens, std::memory_order_relaxed);
  if (ttft_s >= 0) ttft_.Observe(ttft_s);
  latency_.Observe(latency_s);
}

void Metrics::RecordError(int http_status) {
  (http_status >= 500 ? errors_5xx_ : errors_4xx_).fetch_add(1, std::memory_order_relaxed);
}

std::string Metrics::Render(const scheduler::SchedulerStats& e,
                            const session::SessionStoreStats& s, const HttpGauges& h) const {
  std::string out;
  Line(&out, "mneme_requests_total", "API requests received (all endpoints).", "counter",
       static_cast<double>(requests_.load()));
  Line(&out, "mneme_generations_total", "Generation requests (chat turns) finished.", "counter",
       static_cast<double>(turns_.load()));
  out += "# HELP mneme_errors_total Error responses, by class.\n# TYPE mneme_errors_total counter\n";
  out += "mneme_errors_total{class=\"4xx\"} " + std::to_string(errors_4xx_.load()) + "\n";
  out += "mneme_errors_total{class=\"5xx\"} " + std::to_string(errors_5xx_.load()) + "\n";
  Line(&out, "mneme_prompt_tokens_total", "Prompt tokens of finished generations.", "counter",
       static_cast<double>(prompt_tokens_.load()));
  Line(&out, "mneme_cached_tokens_total",
       "Prompt tokens served from the KV prefix cache (not recomputed).", "counter",
       static_cast<double>(cached_tokens_.load()));
  Line(&out, "mneme_completion_tokens_total", "Tokens generated.", "counter",
       static_cast<double>(completion_tokens_.load()));
  ttft_.Render("mneme_time_to_first_token_seconds", "Time from request to first token.", &out);
  latency_.Render("mneme_request_duration_seconds", "Time from request to last token.", &out);
  Line(&out, "mneme_prefill_tokens_computed_total", "Prefill rows run by the engine.", "counter",
       static_cast<double>(e.num_tokens_computed));
  Line(&out, "mneme_preemptions_total", "Sequences preempted for KV blocks.", "counter",
       static_cast<double>(e.num_preemptions));
  Line(&out, "mneme_kv_blocks_evicted_total", "KV blocks evicted from the prefix cache.",
       "counter", static_cast<double>(e.num_blocks_evicted));
  Line(&out, "mneme_kv_blocks_total", "KV pool size in blocks.", "gauge",
       static_cast<double>(e.num_blocks_total));
  Line(&out, "mneme_kv_blocks_used", "KV blocks in use (sequences or the prefix cache).", "gauge",
       static_cast<double>(e.num_blocks_used));
  Line(&out, "mneme_kv_blocks_cached", "KV blocks held by the prefix cache.", "gauge",
       static_cast<double>(e.num_blocks_cached));
  Line(&out, "mneme_queue_length", "Requests waiting for admission.", "gauge",
       static_cast<double>(e.num_waiting));
  Line(&out, "mneme_running_sequences", "Sequences being generated.", "gauge",
       static_cast<double>(e.num_running));
  Line(&out, "mneme_sessions", "Sessions stored.", "gauge", static_cast<double>(s.num_sessions));
  Line(&out, "mneme_sessions_active", "Sessions with a turn in progress.", "gauge",
       static_cast<double>(s.num_turns_active));
  Line(&out, "mneme_session_turns_waiting", "Turns waiting for their session's turn lock.", "gauge",
       static_cast<double>(s.num_turns_waiting));
  Line(&out, "mneme_http_connections_open", "Open HTTP connections.", "gauge",
       static_cast<double>(h.open_connections));
  Line(&out, "mneme_http_streams_active", "Streaming responses in progress.", "gauge",
       static_cast<double>(h.active_streams));
  return out;
}

}  // namespace mneme::server
