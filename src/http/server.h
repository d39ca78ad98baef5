// Server: the HTTP/1.1 front door of `mneme serve`.
//
// One Asio io_context run by `io_threads` threads; each connection lives on
// its own strand, so thousands of mostly idle streaming connections cost a few
// kilobytes each and no thread. Requests are parsed by Beast with header/body
// size and time limits, dispatched to a Router, and answered through a
// ResponseWriter that any thread may use (see response_writer.h). Pipelined
// requests are answered in order; keep-alive follows RFC 9112 with the
// Keep-Alive timeout advertised; Shutdown() drains gracefully.
//
//   Router router;
//   router.Add("GET", "/health", [](const Request&, std::shared_ptr<ResponseWriter> w) {
//     w->Send(200, "text/plain", "ok");
//   });
//   MNEME_ASSIGN_OR_RETURN(auto server, Server::Create(options, std::move(router)));
//   MNEME_RETURN_IF_ERROR(server->Start());
//   ...
//   server->Shutdown(std::chrono::seconds(10));
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "http/router.h"
#include "http/server_options.h"
#include "util/status.h"

namespace mneme::http {

namespace internal {
struct ServerState;
}  // namespace internal

class Server {
 public:
  // InvalidArgument for bad options. Does not bind yet.
  static Result<std::unique_ptr<Server>> Create(ServerOptions options, Router router);
  ~Server();  // Shutdown(0) if still running
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds, listens and starts the io threads. IoError with the address and the
  // reason when the port is taken or the host does not resolve.
  Status Start();

  // The bound port (useful with port 0); 0 before Start.
  int port() const;

  // Graceful stop, blocking until done: stop accepting (new connections are
  // refused), close idle connections, let requests in flight finish (their
  // responses carry Connection: close) until `deadline`, then close the rest
  // (their OnClose fires) and join the io threads. Idempotent. Must not be
  // called from an io thread (a handler).
  void Shutdown(std::chrono::milliseconds deadline);

  // Counters for metrics.
  int64_t open_connections() const;
  int64_t requests_total() const;
  int64_t active_streams() const;

 private:
  explicit Server(std::shared_ptr<internal::ServerState> state);

  std::shared_ptr<internal::ServerState> state_;
  std::vector<std::thread> threads_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace mneme::http
