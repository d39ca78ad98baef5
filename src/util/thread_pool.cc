// ThreadPool implementation: generation counter + futex waits (see header).
#include "util/thread_pool.h"

#include "util/check.h"

namespace mneme {
namespace {

// Spin iterations before a worker or the caller falls back to a futex wait:
// roughly 10-50 us, long enough to bridge back-to-back kernels in a forward
// pass, short enough not to matter when the machine is oversubscribed.
constexpr int kSpinIterations = 2000;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int num_threads) : num_threads_(num_threads) {
  CHECK(num_threads >= 1) << "num_threads=" << num_threads;
  workers_.reserve(static_cast<size_t>(num_threads - 1));
  for (int t = 1; t < num_threads; ++t) workers_.emplace_back([this, t] { WorkerLoop(t); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  generation_.notify_all();
  for (std::thread& w : workers_) w.join();
}

void ThreadPool::RunChunk(int thread) {
  const int64_t begin = job_n_ * thread / num_threads_;
  const int64_t end = job_n_ * (thread + 1) / num_threads_;
  if (begin < end) job_invoker_(job_fn_, thread, begin, end);
}

void ThreadPool::Run(int64_t n, const void* fn, Invoker invoker) {
  CHECK(!busy_.exchange(true, std::memory_order_acquire))
      << "ThreadPool::ParallelFor is not reentrant";
  if (num_threads_ == 1 || n <= 1) {
    if (n > 0) invoker(fn, 0, 0, n);
    busy_.store(false, std::memory_order_release);
    return;
  }
  job_fn_ = fn;
  job_invoker_ = invoker;
  job_n_ = n;
  pending_.store(num_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);  // publishes the job
  generation_.notify_all();
  RunChunk(0);
  for (int i = 0; i < kSpinIterations && pending_.load(std::memory_order_acquire) != 0; ++i)
    CpuRelax();
  for (int p = pending_.load(std::memory_order_acquire); p != 0;
       p = pending_.load(std::memory_order_acquire)) {
    pending_.wait(p, std::memory_order_acquire);
  }
  busy_.store(false, std::memory_order_release);
}

void ThreadPool::WorkerLoop(int thread) {
  uint32_t seen = 0;  // generation_ at construction: a job published before
                      // this thread started must still be seen as new
  while (true) {
    uint32_t g = generation_.load(std::memory_order_acquire);
    for (int i = 0; i < kSpinIterations && g == seen; ++i) {
      CpuRelax();
      g = generation_.load(std::memory_order_acquire);
    }
    while (g == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load(std::memory_order_relaxed)) return;
    RunChunk(thread);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

}  // namespace mneme
