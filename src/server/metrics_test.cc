// Metrics: Prometheus text for counters, gauges and cumulative histograms.
#include "server/metrics.h"

#include <gtest/gtest.h>

namespace mneme::server {
namespace {

TEST(MetricsTest, HistogramBucketsAreCumulative) {
  Histogram h({0.1, 1});
  h.Observe(0.05);
  h.Observe(0.1);  // on a bound: counted in that bucket (le)
  h.Observe(0.5);
  h.Observe(7);
  std::string out;
  h.Render("t_seconds", "help", &out);
  EXPECT_NE(out.find("t_seconds_bucket{le=\"0.1\"} 2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("t_seconds_bucket{le=\"1\"} 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("t_seconds_bucket{le=\"+Inf\"} 4\n"), std::string::npos) << out;
  EXPECT_NE(out.find("t_seconds_count 4\n"), std::string::npos) << out;
  EXPECT_NE(out.find("t_seconds_sum 7.65"), std::string::npos) << out;
  EXPECT_NE(out.find("# TYPE t_seconds histogram\n"), std::string::npos);
}

TEST(MetricsTest, RenderHasCountersAndGauges) {
  Metrics m;
  m.RecordRequest();
  m.RecordTurn(0.02, 0.3, 100, 64, 10);
  m.RecordError(404);
  m.RecordError(503);
  scheduler::SchedulerStats e;
  e.num_blocks_total = 128;
  e.num_blocks_used = 5;
  session::SessionStoreStats s;
  s.num_sessions = 3;
  const std::string out = m.Render(e, s, HttpGauges{7, 9, 1});
  for (const char* line : {"mneme_requests_total 1\n", "mneme_generations_total 1\n",
                           "mneme_prompt_tokens_total 100\n", "mneme_cached_tokens_total 64\n",
                           "mneme_completion_tokens_total 10\n", "mneme_errors_total{class=\"4xx\"} 1\n",
                           "mneme_errors_total{class=\"5xx\"} 1\n", "mneme_kv_blocks_total 128\n",
                           "mneme_kv_blocks_used 5\n", "mneme_sessions 3\n",
                           "mneme_http_connections_open 7\n",
                           "mneme_time_to_first_token_seconds_count 1\n"}) {
    EXPECT_NE(out.find(line), std::string::npos) << line << "\n" << out;
  }
}

}  // namespace
}  // namespace mneme::server
