// Server: options validation, listening, the accept loop, io threads and the
// graceful shutdown sequence (see server.h). Connections do the rest.
#include "http/server.h"

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <cstdio>
#include <exception>
#include <future>

#include "http/connection.h"

namespace mneme::http {

using internal::Connection;
using internal::ServerState;
namespace asio = internal::asio;
using boost::system::error_code;
using internal::tcp;

Status ServerOptions::Validate() const {
  if (port < 0 || port > 65535) return InvalidArgument("http: port must be in [0, 65535]");
  if (io_threads < 1 || io_threads > 64)
    return InvalidArgument("http: io_threads must be in [1, 64]");
  if (backlog < 1) return InvalidArgument("http: backlog must be positive");
  if (max_connections < 1) return InvalidArgument("http: max_connections must be positive");
  if (max_header_bytes < 256 || max_header_bytes > (1u << 30)) {
    return InvalidArgument("http: max_header_bytes must be in [256, 1 GiB]");
  }
  if (max_requests_per_connection < 1)
    return InvalidArgument("http: max_requests_per_connection must be positive");
  if (max_stream_buffer_bytes < 1)
    return InvalidArgument("http: max_stream_buffer_bytes must be positive");
  using std::chrono::milliseconds;
  for (auto [name, value] : {std::pair{"header_timeout", header_timeout},
                             {"body_timeout", body_timeout},
                             {"keep_alive_timeout", keep_alive_timeout},
                             {"write_timeout", write_timeout},
                             {"linger_timeout", linger_timeout}}) {
    if (value <= milliseconds(0))
      return InvalidArgument(std::string("http: ") + name + " must be positive");
  }
  return Status::Ok();
}

namespace {

void AcceptLoop(const std::shared_ptr<ServerState>& state) {
  state->acceptor->async_accept(
      asio::make_strand(state->io), [state](const error_code& ec, tcp::socket socket) {
        if (ec == asio::error::operation_aborted || state->stopping.load() ||
            !state->acceptor->is_open())
          return;
        if (ec) {
          // Out of descriptors or similar: back off instead of spinning.
          auto timer = std::make_shared<asio::steady_timer>(state->acceptor->get_executor(),
                                                            std::chrono::milliseconds(50));
          timer->async_wait([state, timer](const error_code& e) {
            if (!e && !state->stopping.load() && state->acceptor->is_open()) AcceptLoop(state);
          });
          return;
        }
        bool reject =
            static_cast<size_t>(state->open_connections.load()) >= state->options.max_connections;
        std::make_shared<Connection>(state, std::move(socket))->Start(reject);
        AcceptLoop(state);
      });
}

}  // namespace

Result<std::unique_ptr<Server>> Server::Create(ServerOptions options, Router router) {
  MNEME_RETURN_IF_ERROR(options.Validate());
  auto state = std::make_shared<ServerState>(std::move(options), std::move(router));
  return std::unique_ptr<Server>(new Server(std::move(state)));
}

Server::Server(std::shared_ptr<ServerState> state) : state_(std::move(state)) {}

Server::~Server() {
  Shutdown(std::chrono::milliseconds(0));
}

Status Server::Start() {
  if (started_) return FailedPrecondition("http: server already started");
  const ServerOptions& o = state_->options;
  std::string where = o.host + ":" + std::to_string(o.port);
  error_code ec;
  tcp::resolver resolver(state_->io);
  auto endpoints = resolver.resolve(o.host, std::to_string(o.port),
                                    tcp::resolver::passive | tcp::resolver::numeric_service, ec);
  if (ec || endpoints.empty()) {
    return IoError("http: cannot resolve listen address " + where + ": " +
                   (ec ? ec.message() : "no address"));
  }
  tcp::endpoint endpoint = endpoints.begin()->endpoint();
  tcp::acceptor acceptor(asio::make_strand(state_->io));
  auto fail = [&](const char* what) {
    return IoError("http: cannot listen on " + where + ": " + what + ": " + ec.message());
  };
  if (acceptor.open(endpoint.protocol(), ec); ec) return fail("socket");
  if (acceptor.set_option(tcp::acceptor::reuse_address(true), ec); ec) return fail("SO_REUSEADDR");
  if (acceptor.bind(endpoint, ec); ec) return fail("bind");
  if (acceptor.listen(o.backlog, ec); ec) return fail("listen");
  tcp::endpoint local = acceptor.local_endpoint(ec);
  if (ec) return fail("getsockname");
  state_->port.store(local.port());
  state_->acceptor.emplace(std::move(acceptor));
  state_->work.emplace(asio::make_work_guard(state_->io));
  AcceptLoop(state_);
  for (int i = 0; i < o.io_threads; ++i) {
    threads_.emplace_back([state = state_.get()] {
      for (;;) {
        try {
          state->io.run();
          return;
        } catch (const std::exception& e) {  // a callback threw: log, keep serving
          std::fprintf(stderr, "mneme http: exception on io thread: %s\n", e.what());
        }
      }
    });
  }
  started_ = true;
  return Status::Ok();
}

int Server::port() const {
  return state_->port.load();
}

void Server::Shutdown(std::chrono::milliseconds deadline) {
  if (!started_ || stopped_) return;
  stopped_ = true;
  auto until = std::chrono::steady_clock::now() + deadline;
  ServerState& s = *state_;
  s.stopping.store(true);

  // 1. Stop accepting; once this returns, connect() is refused.
  std::promise<void> closed;
  asio::post(s.acceptor->get_executor(), [&s, &closed] {
    error_code ec;
    s.acceptor->close(ec);
    closed.set_value();
  });
  closed.get_future().wait();

  auto snapshot = [&s] {
    std::vector<std::shared_ptr<Connection>> out;
    std::lock_guard<std::mutex> lock(s.mu);
    for (auto& [ptr, weak] : s.connections) {
      if (auto c = weak.lock()) out.push_back(std::move(c));
    }
    return out;
  };
  // 2. Idle connections close now, busy ones after their response.
  for (auto& c : snapshot()) c->BeginShutdown();
  // 3. Wait for in-flight responses until the deadline.
  {
    std::unique_lock<std::mutex> lock(s.mu);
    s.cv.wait_until(lock, until, [&s] { return s.connections.empty(); });
  }
  // 4. Close the rest (their OnClose fires) and wait for the strands to do it.
  for (auto& c : snapshot()) c->RequestClose();
  {
    std::unique_lock<std::mutex> lock(s.mu);
    s.cv.wait(lock, [&s] { return s.connections.empty(); });
  }
  // 5. No connection can post anymore: let run() drain and return.
  s.work.reset();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

int64_t Server::open_connections() const {
  return state_->open_connections.load();
}
int64_t Server::requests_total() const {
  return state_->requests_total.load();
}
int64_t Server::active_streams() const {
  return state_->active_streams.load();
}

}  // namespace mneme::http
