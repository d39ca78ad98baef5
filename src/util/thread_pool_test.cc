// ThreadPool: chunks cover [0, n) exactly once, workers persist across
// calls, many back-to-back calls never lose a wake-up, shutdown joins.
#include "util/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace mneme {
namespace {

TEST(ThreadPool, ChunksCoverRangeExactlyOnce) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 3, 7, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> calls{0};
      pool.ParallelFor(n, [&](int64_t begin, int64_t end) {
        EXPECT_LT(begin, end);
        calls.fetch_add(1);
        for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      });
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << i;
      EXPECT_LE(calls.load(), threads);
    }
  }
}

TEST(ThreadPool, ThreadIndicesAreDistinctAndWorkersPersist) {
  ThreadPool pool(3);
  std::mutex mu;
  std::set<std::thread::id> ids;
  for (int iter = 0; iter < 200; ++iter) {
    std::vector<int> seen(3, 0);
    pool.ParallelForWithThread(3, [&](int thread, int64_t begin, int64_t end) {
      EXPECT_EQ(end - begin, 1);
      seen[static_cast<size_t>(thread)] += 1;
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    });
    EXPECT_EQ(seen, std::vector<int>({1, 1, 1}));
  }
  EXPECT_EQ(ids.size(), 3u);  // never a new thread per call
}

TEST(ThreadPool, ManyBackToBackCallsNeverHang) {
  ThreadPool pool(2);
  int64_t total = 0;
  std::vector<int64_t> partial(2);
  for (int iter = 0; iter < 20000; ++iter) {
    pool.ParallelForWithThread(10, [&](int thread, int64_t begin, int64_t end) {
      partial[static_cast<size_t>(thread)] = end - begin;
    });
    total += partial[0] + partial[1];
  }
  EXPECT_EQ(total, 200000);
}

TEST(ThreadPool, SleepingWorkersWakeAndShutDown) {
  ThreadPool pool(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let workers reach the futex wait
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(100, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) sum.fetch_add(i);
  });
  EXPECT_EQ(sum.load(), 4950);
}

TEST(ThreadPoolDeathTest, ReentrantCallIsABug) {
  EXPECT_DEATH(
      {
        ThreadPool pool(1);
        pool.ParallelFor(4,
                         [&](int64_t, int64_t) { pool.ParallelFor(2, [](int64_t, int64_t) {}); });
      },
      "not reentrant");
}

}  // namespace
}  // namespace mneme
