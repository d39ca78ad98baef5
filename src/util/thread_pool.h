// ThreadPool: N-1 persistent workers plus the calling thread, for data-
// parallel kernels (matmul column ranges, attention heads).
//
// Threads are created once in the constructor; ParallelFor hands each of the
// N participants one contiguous chunk of [0, n) and blocks until all chunks
// are done. Idle workers spin briefly on a generation counter (a matmul step
// usually follows within microseconds) and then sleep in a futex wait
// (std::atomic::wait), so an idle server burns no CPU.
//
//   caller:  job = {fn, n}; ++generation  ──wakes──▶  worker t: run chunk t
//            run chunk 0                              --pending; last one
//            wait until pending == 0   ◀──notifies──  notifies the caller
//
// One caller at a time: ParallelFor must not be called concurrently or from
// inside a task (CHECKed). The callback must not throw.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace mneme {

class ThreadPool {
 public:
  // num_threads >= 1 participants in total (the caller is one of them).
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(begin, end) on disjoint, contiguous, non-empty chunks covering
  // [0, n), at most one chunk per thread; returns when all have finished.
  template <typename Fn>
  void ParallelFor(int64_t n, const Fn& fn) {
    ParallelForWithThread(n, [&fn](int, int64_t begin, int64_t end) { fn(begin, end); });
  }

  // Same, and tells the chunk which participant runs it (0 = the caller,
  // 0 <= thread < num_threads()), e.g. to index per-thread scratch buffers.
  template <typename Fn>
  void ParallelForWithThread(int64_t n, const Fn& fn) {
    Run(n, &fn, [](const void* f, int thread, int64_t begin, int64_t end) {
      (*static_cast<const Fn*>(f))(thread, begin, end);
    });
  }

 private:
  using Invoker = void (*)(const void* fn, int thread, int64_t begin, int64_t end);

  void Run(int64_t n, const void* fn, Invoker invoker);
  void RunChunk(int thread);
  void WorkerLoop(int thread);

  const int num_threads_;
  std::vector<std::thread> workers_;

  // The current job; written by the caller before bumping generation_.
  const void* job_fn_ = nullptr;
  Invoker job_invoker_ = nullptr;
  int64_t job_n_ = 0;

  std::atomic<uint32_t> generation_{0};
  std::atomic<int> pending_{0};  // workers still running the current job
  std::atomic<bool> stop_{false};
  std::atomic<bool> busy_{false};  // guards the one-caller contract
};

}  // namespace mneme
