// Memory read bandwidth probe for the engine benchmark
// (scripts/bench_engine.sh): decoding one token streams every weight once,
// so read bandwidth bounds generation speed. Not part of the product; the
// script builds it with `g++ -O3 -march=native -pthread`.
//
//   bandwidth [--mib 1024] [--passes 5] [--threads 1,2]
//
// Fills a buffer (default 1 GiB, so no cache level holds it), then for each
// thread count splits it into equal contiguous slices, one per thread, and
// times passes that read every byte (a vectorizable sum of 64-bit words, so
// the loads, not the adds, are the limit). Reports the best pass as GB/s
// (10^9 bytes/s) and the median, one JSON object on stdout:
//   {"buffer_bytes": N, "passes": P, "results": [{"threads": T,
//    "best_gb_s": X, "median_gb_s": Y}, ...]}
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

uint64_t SumSlice(const uint64_t* p, size_t n) {
  // Eight independent accumulators keep several loads in flight.
  uint64_t acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += p[i + j];
  }
  for (; i < n; ++i) acc[0] += p[i];
  uint64_t s = 0;
  for (uint64_t a : acc) s += a;
  return s;
}

double PassSeconds(const uint64_t* data, size_t words, int threads, uint64_t* sink) {
  std::vector<std::thread> pool;
  std::vector<uint64_t> sums(static_cast<size_t>(threads));
  const size_t per = words / static_cast<size_t>(threads);
  const auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) {
    const size_t begin = per * static_cast<size_t>(t);
    const size_t len = t + 1 == threads ? words - begin : per;
    pool.emplace_back([&, t, begin, len] { sums[static_cast<size_t>(t)] = SumSlice(data + begin, len); });
  }
  for (auto& th : pool) th.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (uint64_t v : sums) *sink += v;
  return s;
}

std::vector<int> ParseThreads(const char* text) {
  std::vector<int> out;
  std::string s(text);
  size_t pos = 0;
  while (pos <= s.size()) {
    const size_t comma = s.find(',', pos);
    const int v = std::atoi(s.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos).c_str());
    if (v >= 1) out.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  size_t mib = 1024;
  int passes = 5;
  std::vector<int> thread_counts = {1, 2};
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--mib") == 0) mib = static_cast<size_t>(std::atol(argv[i + 1]));
    else if (std::strcmp(argv[i], "--passes") == 0) passes = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--threads") == 0) thread_counts = ParseThreads(argv[i + 1]);
  }
  if (mib == 0 || passes < 1 || thread_counts.empty()) {
    std::fprintf(stderr, "usage: bandwidth [--mib 1024] [--passes 5] [--threads 1,2]\n");
    return 2;
  }
  const size_t bytes = mib << 20;
  const size_t words = bytes / sizeof(uint64_t);
  std::vector<uint64_t> data(words);
  for (size_t i = 0; i < words; ++i) data[i] = i * 0x9e3779b97f4a7c15ull;  // touch every page

  uint64_t sink = 0;
  std::printf("{\"buffer_bytes\": %zu, \"passes\": %d, \"results\": [", bytes, passes);
  for (size_t k = 0; k < thread_counts.size(); ++k) {
    const int threads = thread_counts[k];
    PassSeconds(data.data(), words, threads, &sink);  // warm-up
    std::vector<double> rates;
    for (int p = 0; p < passes; ++p) {
      rates.push_back(static_cast<double>(bytes) / PassSeconds(data.data(), words, threads, &sink) / 1e9);
    }
    std::sort(rates.begin(), rates.end());
    std::printf("%s{\"threads\": %d, \"best_gb_s\": %.2f, \"median_gb_s\": %.2f}", k ? ", " : "", threads,
                rates.back(), rates[rates.size() / 2]);
  }
  std::printf("], \"checksum\": %llu}\n", static_cast<unsigned long long>(sink));
  return 0;
}
