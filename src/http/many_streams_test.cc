// 1,000 concurrent SSE streams on one (and two) io threads: every client receives every
// event, in order, while the process keeps its thread count (no thread per
// connection) and a modest memory footprint. Prints RSS and thread numbers.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/resource.h>

#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "http/server.h"
#include "http/stream_test_util.h"
#include "http/test_client.h"

namespace mneme::http {
namespace {

using std::chrono::milliseconds;

constexpr int kConnections = 1000;
constexpr int kRounds = 5;

int CountThreads() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

long RssKiB() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

std::string Event(int round) {
  return "data: {\"round\":" + std::to_string(round) + "}\n\n";
}

// Reads from every fd whose buffer does not yet satisfy `done`, until all do
// or the deadline passes.
template <typename Done>
bool ReadAllUntil(const std::vector<int>& fds, std::vector<std::string>& bufs, Done done,
                  testing::Clock::time_point deadline) {
  std::vector<pollfd> polls;
  std::vector<size_t> index;
  for (;;) {
    polls.clear();
    index.clear();
    for (size_t i = 0; i < fds.size(); ++i) {
      if (!done(bufs[i])) {
        polls.push_back({fds[i], POLLIN, 0});
        index.push_back(i);
      }
    }
    if (polls.empty()) return true;
    auto left = std::chrono::duration_cast<milliseconds>(deadline - testing::Clock::now()).count();
    if (left <= 0) return false;
    int r = ::poll(polls.data(), polls.size(), static_cast<int>(left));
    if (r < 0 && errno != EINTR) return false;
    for (size_t k = 0; k < polls.size(); ++k) {
      if (!(polls[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char tmp[4096];
      ssize_t n = ::recv(polls[k].fd, tmp, sizeof(tmp), 0);
      if (n <= 0) return false;  // a stream must not end early
      bufs[index[k]].append(tmp, static_cast<size_t>(n));
    }
  }
}

// Chunk payloads of a complete chunked body that follows the response head.
std::vector<std::string> Chunks(const std::string& wire, bool* complete) {
  std::vector<std::string> out;
  *complete = false;
  size_t pos = wire.find("\r\n\r\n");
  if (pos == std::string::npos) return out;
  pos += 4;
  for (;;) {
    size_t le = wire.find("\r\n", pos);
    if (le == std::string::npos) return out;
    size_t size = std::stoul(wire.substr(pos, le - pos), nullptr, 16);
    if (size == 0) {
      *complete = wire.compare(le, 4, "\r\n\r\n") == 0;
      return out;
    }
    if (wire.size() < le + 2 + size + 2) return out;
    out.push_back(wire.substr(le + 2, size));
    pos = le + 2 + size + 2;
  }
}

void RunManyStreams(int io_threads) {
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  if (lim.rlim_cur < 2 * kConnections + 256) {
    lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, 4 * kConnections);
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
  }
  if (lim.rlim_cur < 2 * kConnections + 256)
    GTEST_SKIP() << "RLIMIT_NOFILE hard limit too low: " << lim.rlim_max;
  SCOPED_TRACE("io_threads=" + std::to_string(io_threads));

  testing::Inbox inbox;
  ServerOptions o;
  o.io_threads = io_threads;
  auto server = testing::StartStreamServer(o, &inbox);

  // One producer thread, like the engine: it writes each round to every stream.
  std::mutex mu;
  std::condition_variable cv;
  int go_round = -1;
  std::vector<std::shared_ptr<ResponseWriter>> writers;
  std::atomic<int> failed_writes{0};
  std::thread producer([&] {
    for (int round = 0; round <= kRounds; ++round) {
      std::unique_lock<std::mutex> lock(mu);
      if (!cv.wait_for(lock, std::chrono::seconds(60), [&] { return go_round >= round; })) return;
      for (auto& w : writers) {
        bool ok = round < kRounds ? w->Write(Event(round)) : w->End();
        if (!ok) failed_writes.fetch_add(1);
      }
    }
  });
  // On any exit (an ASSERT included) release and join the producer.
  struct JoinGuard {
    std::function<void()> fn;
    ~JoinGuard() { fn(); }
  } join_guard{[&] {
    {
      std::lock_guard<std::mutex> lock(mu);
      go_round = kRounds;
    }
    cv.notify_all();
    if (producer.joinable()) producer.join();
  }};
  const int threads_before = CountThreads();
  const long rss_before = RssKiB();

  std::vector<int> fds;
  std::vector<std::string> bufs(kConnections);
  const std::string request = testing::Get("/stream");
  for (int i = 0; i < kConnections; ++i) {
    int fd = testing::ConnectTo(server->port());
    ASSERT_GE(fd, 0) << "connect #" << i << ": " << std::strerror(errno);
    fds.push_back(fd);
    ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
  }
  ASSERT_TRUE(inbox.WaitForCount(kConnections, std::chrono::seconds(60)));
  {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& w : inbox.TakeAll()) writers.push_back(std::move(w));
  }
  auto deadline = testing::Clock::now() + std::chrono::seconds(120);
  int threads_during = 0;
  long rss_during = 0;
  for (int round = 0; round < kRounds; ++round) {
    {
      std::lock_guard<std::mutex> lock(mu);
      go_round = round;
    }
    cv.notify_all();
    std::string event = Event(round);
    ASSERT_TRUE(ReadAllUntil(
        fds, bufs, [&](const std::string& b) { return b.find(event) != std::string::npos; },
        deadline))
        << "round " << round;
    if (round == 0) {
      threads_during = CountThreads();
      rss_during = RssKiB();
      EXPECT_EQ(server->open_connections(), kConnections);
      EXPECT_EQ(server->active_streams(), kConnections);
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    go_round = kRounds;  // End every stream
  }
  cv.notify_all();
  ASSERT_TRUE(ReadAllUntil(
      fds, bufs,
      [](const std::string& b) {
        return b.size() >= 5 && b.compare(b.size() - 5, 5, "0\r\n\r\n") == 0;
      },
      deadline));
  join_guard.fn();
  EXPECT_EQ(failed_writes.load(), 0);

  std::vector<std::string> expected;
  for (int r = 0; r < kRounds; ++r) expected.push_back(Event(r));
  for (int i = 0; i < kConnections; ++i) {
    bool complete = false;
    ASSERT_EQ(Chunks(bufs[i], &complete), expected) << "connection " << i;
    ASSERT_TRUE(complete) << "connection " << i;
  }
  EXPECT_LE(threads_during - threads_before, 4);
  EXPECT_LT(rss_during - rss_before, 256 * 1024) << "KiB";
  std::printf(
      "[ many streams ] %d connections, %d io thread(s): threads %d -> %d, RSS %ld -> %ld KiB "
      "(+%.1f KiB per connection, client and server side together)\n",
      kConnections, o.io_threads, threads_before, threads_during, rss_before, rss_during,
      static_cast<double>(rss_during - rss_before) / kConnections);
  writers.clear();
  for (int fd : fds) ::close(fd);
  server->Shutdown(milliseconds(5000));
  EXPECT_EQ(server->open_connections(), 0);
}

TEST(ManyStreamsTest, ThousandConcurrentStreamsOnOneIoThread) {
  RunManyStreams(1);
}

TEST(ManyStreamsTest, ThousandConcurrentStreamsOnTwoIoThreads) {
  RunManyStreams(2);
}

}  // namespace
}  // namespace mneme::http
