// Connection: one accepted TCP connection and its request/response cycle.
// Internal to http/ (only server.cc and response_writer.cc include it).
//
// Everything below runs on the connection's strand except Enqueue,
// RequestClose and the atomics, which any thread may call (the writer's
// thread). The cycle, one request at a time (pipelined bytes wait in the
// buffer, so responses leave in request order):
//
//   kIdleWait --readable--> kReadHeader --> kReadBody --> kResponding
//       ^   (keep_alive or header timeout)                  |  writer queues bytes,
//       |                                                   |  strand flushes them
//       +---------------- response done, keep-alive --------+
//                          response done, close -> kLingering -> kClosed
//
// While responding, a wait on the socket notices a client that goes away
// (EOF / reset) so the writer's OnClose can cancel generation early; bytes
// of a pipelined next request read meanwhile stay in the buffer.
#pragma once

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
// Boost 1.74's boost::optional trips g++ 12's -Wmaybe-uninitialized (a false
// positive, seen with -O3 + sanitizers) inside Beast's parser.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include "http/response_writer.h"
#include "http/router.h"
#include "http/server_options.h"

namespace mneme::http::internal {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

class Connection;

// What the server and its connections share. Connections (and the writers
// handlers keep) hold it by shared_ptr, so the io_context outlives every
// socket even when a handler keeps a writer past Server's destruction.
struct ServerState {
  ServerState(ServerOptions o, Router r) : options(std::move(o)), router(std::move(r)) {}

  asio::io_context io;  // first: destroyed last
  const ServerOptions options;
  const Router router;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::optional<tcp::acceptor> acceptor;  // used on the io threads only (via post)
  std::atomic<int> port{0};
  std::atomic<bool> stopping{false};
  std::atomic<int64_t> open_connections{0};
  std::atomic<int64_t> requests_total{0};
  std::atomic<int64_t> active_streams{0};

  std::mutex mu;
  std::condition_variable cv;  // signalled when a connection closes
  std::unordered_map<Connection*, std::weak_ptr<Connection>> connections;  // guarded by mu
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::shared_ptr<ServerState> state, tcp::socket socket);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Registers with the server and starts reading the first request; with
  // `reject`, answers 503 + Connection: close instead (connection limit).
  void Start(bool reject);

  // Any thread. Appends response bytes; `last` marks the end of the response
  // (`close_after`: then close the connection). `limit` applies
  // max_stream_buffer_bytes: above it the connection is closed and false
  // returned. False when the connection is closed or closing.
  bool Enqueue(std::string bytes, bool last, bool close_after, bool limit);
  // Any thread. Closes the connection soon (on the strand).
  void RequestClose();
  // Any thread. Sends what is queued, then closes without ending the
  // response (the client sees it truncated). Later Enqueues fail.
  void AbortAfterFlush();
  // Any thread. Server shutdown: close now if idle, else after the response.
  void BeginShutdown();
  bool closing() const { return closing_.load(std::memory_order_acquire); }
  size_t queued_bytes() const { return queued_bytes_.load(std::memory_order_relaxed); }
  ServerState& state() { return *state_; }

 private:
  enum class Phase { kIdleWait, kReadHeader, kReadBody, kResponding, kLingering, kClosed };

  void WaitForRequest();
  void WatchSocket();
  void OnReadable();
  void ReadHeader();
  void OnHeader();
  void ReadBody();
  void Dispatch();
  void SendErrorAndClose(int status, std::string_view message, std::string_view code);
  void Flush();
  void OnWritten(size_t n);
  void FinishResponse();
  void Linger();
  void Drain();
  void Close();
  void ArmTimer(std::chrono::milliseconds d);
  void DisarmTimer();

  const std::shared_ptr<ServerState> state_;
  tcp::socket socket_;  // its executor is this connection's strand
  asio::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<beast::http::request_parser<beast::http::string_body>> parser_;
  std::string remote_;

  // Strand-only state.
  Phase phase_ = Phase::kIdleWait;
  uint64_t timer_generation_ = 0;
  bool watching_ = false;
  bool writing_ = false;
  int requests_served_ = 0;
  size_t lingered_bytes_ = 0;
  std::string inflight_;  // bytes handed to the socket, written from inflight_offset_
  size_t inflight_offset_ = 0;
  std::weak_ptr<ResponseWriter> writer_;  // the current exchange's writer

  // Shared with writer threads.
  std::atomic<bool> closing_{false};
  std::atomic<size_t> queued_bytes_{0};
  std::mutex out_mu_;
  std::string pending_;         // guarded by out_mu_
  bool response_done_ = false;  // guarded: the last byte of the response is queued
  bool close_after_ = false;    // guarded
  bool flush_posted_ = false;   // guarded
  bool closed_ = false;         // guarded: no more posts to the strand
};

}  // namespace mneme::http::internal
