// The per-connection state machine (see connection.h for the picture).
//
// Invariants: phase_, timer_generation_, watching_, writing_, inflight_ and
// buffer_ are touched only on the strand. Writer threads reach the strand
// only through Enqueue / RequestClose / AbortAfterFlush / BeginShutdown,
// which post under out_mu_ and never after closed_ is set, so nothing is posted to an io_context
// after its connection closed (Shutdown relies on this to let run() return).
#include "http/connection.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <string_view>

#include "http/error.h"

namespace mneme::http::internal {

namespace bhttp = beast::http;
using boost::system::error_code;

namespace {

constexpr size_t kMaxWriteSlice =
    size_t{256} * 1024;  // one async_write: progress unit for write_timeout
constexpr size_t kMaxLingerBytes = size_t{1} << 20;  // drained after a final response, then close
constexpr size_t kKeepCapacity = size_t{64} * 1024;  // larger idle buffers are released

bool IsHttpError(const error_code& ec) {
  return ec.category() == bhttp::make_error_code(bhttp::error::end_of_stream).category();
}

std::string ToStd(beast::string_view s) {
  return std::string(s.data(), s.size());
}

}  // namespace

Connection::Connection(std::shared_ptr<ServerState> state, tcp::socket socket)
    : state_(std::move(state)),
      socket_(std::move(socket)),
      timer_(socket_.get_executor()),
      buffer_(std::max<size_t>(kKeepCapacity, state_->options.max_header_bytes + 4096)) {
  error_code ec;
  tcp::endpoint peer = socket_.remote_endpoint(ec);
  if (!ec) remote_ = peer.address().to_string() + ":" + std::to_string(peer.port());
  socket_.set_option(tcp::no_delay(true), ec);
  socket_.non_blocking(true, ec);  // for the synchronous read_some in OnReadable
}

Connection::~Connection() {
  if (phase_ != Phase::kClosed) Close();
}

void Connection::Start(bool reject) {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->connections[this] = weak_from_this();
  }
  state_->open_connections.fetch_add(1);
  asio::post(socket_.get_executor(), [self = shared_from_this(), reject] {
    if (self->state_->stopping.load()) {
      self->Close();  // accepted while Shutdown began: treated like an idle connection
    } else if (reject) {
      self->SendErrorAndClose(503, "server at its connection limit, retry later",
                              "server_overloaded");
    } else {
      self->ReadHeader();  // the first request: header_timeout runs from the accept
    }
  });
}

// ---- reading a request ----------------------------------------------------

void Connection::WaitForRequest() {
  if (state_->stopping.load()) return Close();  // idle at shutdown
  if (buffer_.size() > 0) return ReadHeader();  // pipelined request already here
  phase_ = Phase::kIdleWait;
  ArmTimer(state_->options.keep_alive_timeout);
  WatchSocket();  // no read buffer is held while idle
}

void Connection::WatchSocket() {
  if (watching_) return;
  watching_ = true;
  socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](const error_code& ec) {
    self->watching_ = false;
    if (self->phase_ == Phase::kClosed) return;
    if (ec) return self->Close();
    self->OnReadable();
  });
}

void Connection::OnReadable() {
  if (phase_ == Phase::kIdleWait) return ReadHeader();
  if (phase_ != Phase::kResponding) return;
  // Responding: bytes now are either a pipelined request (kept for later) or
  // EOF / reset, meaning the client is gone.
  size_t room = buffer_.max_size() - buffer_.size();
  if (room == 0) return;  // pipelined flood: resume after this response
  error_code ec;
  size_t n = socket_.read_some(buffer_.prepare(std::min<size_t>(room, 4096)), ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) return WatchSocket();
  if (ec) return Close();  // eof or reset: OnClose fires
  buffer_.commit(n);
  WatchSocket();
}

void Connection::ReadHeader() {
  phase_ = Phase::kReadHeader;
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(state_->options.max_header_bytes));
  parser_->body_limit(state_->options.max_body_bytes);
  ArmTimer(state_->options.header_timeout);
  bhttp::async_read_header(
      socket_, buffer_, *parser_, [self = shared_from_this()](const error_code& ec, size_t) {
        if (self->phase_ != Phase::kReadHeader) return;
        if (!ec) return self->OnHeader();
        if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
          return self->SendErrorAndClose(431, "request headers exceed the server's limit",
                                         "headers_too_large");
        }
        if (ec == bhttp::error::body_limit) {
          return self->SendErrorAndClose(413, "request body exceeds the server's limit",
                                         "body_too_large");
        }
        if (IsHttpError(ec) && ec != bhttp::error::end_of_stream &&
            ec != bhttp::error::partial_message) {
          return self->SendErrorAndClose(400, "malformed HTTP request: " + ec.message(),
                                         "bad_request");
        }
        self->Close();  // client closed, reset, or cancelled
      });
}

void Connection::OnHeader() {
  DisarmTimer();
  auto length = parser_->content_length();
  if (length && *length > state_->options.max_body_bytes) {
    return SendErrorAndClose(413, "request body exceeds the server's limit", "body_too_large");
  }
  if (parser_->is_done()) return Dispatch();
  const auto& msg = parser_->get();
  phase_ = Phase::kReadBody;
  if (msg.version() >= 11 && EqualsIgnoreCase(ToStd(msg[bhttp::field::expect]), "100-continue")) {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    ArmTimer(state_->options.body_timeout);
    asio::async_write(socket_, asio::buffer(kContinue.data(), kContinue.size()),
                      [self = shared_from_this()](const error_code& ec, size_t) {
                        if (self->phase_ != Phase::kReadBody) return;
                        if (ec) return self->Close();
                        self->ReadBody();
                      });
    return;
  }
  ReadBody();
}

void Connection::ReadBody() {
  ArmTimer(state_->options.body_timeout);
  bhttp::async_read(socket_, buffer_, *parser_,
                    [self = shared_from_this()](const error_code& ec, size_t) {
                      if (self->phase_ != Phase::kReadBody) return;
                      if (!ec) return self->Dispatch();
                      if (ec == bhttp::error::body_limit || ec == bhttp::error::buffer_overflow) {
                        return self->SendErrorAndClose(
                            413, "request body exceeds the server's limit", "body_too_large");
                      }
                      if (IsHttpError(ec) && ec != bhttp::error::end_of_stream &&
                          ec != bhttp::error::partial_message) {
                        return self->SendErrorAndClose(
                            400, "malformed request body: " + ec.message(), "bad_request");
                      }
                      self->Close();
                    });
}

// ---- dispatching and answering ---------------------------------------------

void Connection::Dispatch() {
  DisarmTimer();
  auto msg = parser_->release();
  parser_.reset();
  Request request;
  request.method = ToStd(msg.method_string());
  std::string target = ToStd(msg.target());
  size_t q = target.find('?');
  request.path = target.substr(0, q);
  if (q != std::string::npos) request.query = target.substr(q + 1);
  request.version = static_cast<int>(msg.version());
  for (const auto& field : msg)
    request.headers.emplace_back(ToStd(field.name_string()), ToStd(field.value()));
  request.body = std::move(msg.body());
  request.remote_address = remote_;

  ++requests_served_;
  state_->requests_total.fetch_add(1);
  ResponseWriter::Context context;
  context.head = request.method == "HEAD";
  context.version = request.version;
  context.keep_alive = msg.keep_alive() &&
                       requests_served_ < state_->options.max_requests_per_connection &&
                       !state_->stopping.load();
  // Rounded down: a sub-second timeout advertises 0, which tells undici not to reuse.
  context.keep_alive_timeout_s = static_cast<int>(
      std::chrono::duration_cast<std::chrono::seconds>(state_->options.keep_alive_timeout).count());

  phase_ = Phase::kResponding;
  auto writer = std::shared_ptr<ResponseWriter>(new ResponseWriter(shared_from_this(), context));
  writer_ = writer;
  WatchSocket();
  state_->router.Dispatch(request, writer);
  // If the handler kept no reference and never answered, ~ResponseWriter answers 500.
}

void Connection::SendErrorAndClose(int status, std::string_view message, std::string_view code) {
  DisarmTimer();
  parser_.reset();
  phase_ = Phase::kResponding;
  writer_.reset();
  std::string body = ErrorBody(message, ErrorTypeForStatus(status), code);
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + std::string(StatusReason(status)) +
                    "\r\nServer: mneme\r\nContent-Type: application/json\r\nContent-Length: " +
                    std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  (void)Enqueue(std::move(out), /*last=*/true, /*close_after=*/true, /*limit=*/false);
}

bool Connection::Enqueue(std::string bytes, bool last, bool close_after, bool limit) {
  std::lock_guard<std::mutex> lock(out_mu_);
  if (closed_ || closing_.load()) return false;
  if (limit && queued_bytes_.load() + bytes.size() > state_->options.max_stream_buffer_bytes) {
    closing_.store(true, std::memory_order_release);  // the reader stalled: cut it off
    asio::post(socket_.get_executor(), [self = shared_from_this()] { self->Close(); });
    return false;
  }
  queued_bytes_.fetch_add(bytes.size());
  if (pending_.empty()) {
    pending_ = std::move(bytes);
  } else {
    pending_ += bytes;
  }
  if (last) {
    response_done_ = true;
    close_after_ = close_after;
  }
  if (!flush_posted_) {
    flush_posted_ = true;
    asio::post(socket_.get_executor(), [self = shared_from_this()] { self->Flush(); });
  }
  return true;
}

void Connection::RequestClose() {
  std::lock_guard<std::mutex> lock(out_mu_);
  if (closed_) return;
  closing_.store(true, std::memory_order_release);
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->Close(); });
}

void Connection::AbortAfterFlush() {
  std::lock_guard<std::mutex> lock(out_mu_);
  if (closed_ || closing_.load()) return;
  closing_.store(true, std::memory_order_release);
  response_done_ = true;
  close_after_ = true;
  if (!flush_posted_) {
    flush_posted_ = true;
    asio::post(socket_.get_executor(), [self = shared_from_this()] { self->Flush(); });
  }
}

void Connection::BeginShutdown() {
  std::lock_guard<std::mutex> lock(out_mu_);
  if (closed_) return;
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    // Idle, or no byte of a request received yet: close now. Busy: the
    // response's end closes it (FinishResponse sees stopping).
    if (self->phase_ == Phase::kIdleWait ||
        (self->phase_ == Phase::kReadHeader && self->buffer_.size() == 0)) {
      self->Close();
    }
  });
}

void Connection::Flush() {
  if (phase_ == Phase::kClosed) return;
  bool done;
  {
    std::lock_guard<std::mutex> lock(out_mu_);
    flush_posted_ = false;
    if (writing_) return;  // OnWritten flushes again
    if (inflight_offset_ >= inflight_.size()) {
      inflight_.clear();
      inflight_offset_ = 0;
      inflight_.swap(pending_);
    }
    done = response_done_ && pending_.empty();
  }
  if (inflight_.empty()) {
    if (done && phase_ == Phase::kResponding) FinishResponse();
    return;
  }
  writing_ = true;
  size_t n = std::min(kMaxWriteSlice, inflight_.size() - inflight_offset_);
  ArmTimer(state_->options.write_timeout);
  asio::async_write(socket_, asio::buffer(inflight_.data() + inflight_offset_, n),
                    [self = shared_from_this()](const error_code& ec, size_t written) {
                      self->writing_ = false;
                      if (self->phase_ == Phase::kClosed) return;
                      if (ec) return self->Close();
                      self->OnWritten(written);
                    });
}

void Connection::OnWritten(size_t n) {
  DisarmTimer();
  queued_bytes_.fetch_sub(n);
  inflight_offset_ += n;
  Flush();
}

void Connection::FinishResponse() {
  bool close_after;
  {
    std::lock_guard<std::mutex> lock(out_mu_);
    close_after = close_after_;
    response_done_ = false;
    close_after_ = false;
    if (pending_.capacity() > kKeepCapacity) std::string().swap(pending_);
  }
  writer_.reset();
  if (inflight_.capacity() > kKeepCapacity) std::string().swap(inflight_);
  if (close_after || state_->stopping.load()) return Linger();
  if (buffer_.size() == 0 && buffer_.capacity() > kKeepCapacity) buffer_.shrink_to_fit();
  WaitForRequest();
}

// ---- closing ---------------------------------------------------------------

// After a final response: half-close and drain what the client still sends,
// so closing with unread input does not reset the connection before the
// client has read our response (RFC 9112 section 9.6).
void Connection::Linger() {
  phase_ = Phase::kLingering;
  error_code ec;
  socket_.shutdown(tcp::socket::shutdown_send, ec);
  if (ec) return Close();
  ArmTimer(state_->options.linger_timeout);
  lingered_bytes_ = 0;
  Drain();
}

void Connection::Drain() {
  buffer_.consume(buffer_.size());
  socket_.async_read_some(buffer_.prepare(4096),
                          [self = shared_from_this()](const error_code& e, size_t n) {
                            if (self->phase_ != Phase::kLingering) return;
                            self->lingered_bytes_ += n;
                            if (e || self->lingered_bytes_ > kMaxLingerBytes)
                              return self->Close();  // EOF: the client is done
                            self->Drain();
                          });
}

void Connection::Close() {
  if (phase_ == Phase::kClosed) return;
  bool responding = phase_ == Phase::kResponding;
  phase_ = Phase::kClosed;
  {
    std::lock_guard<std::mutex> lock(out_mu_);
    closed_ = true;
    closing_.store(true, std::memory_order_release);
    std::string().swap(pending_);
  }
  queued_bytes_.store(0);
  DisarmTimer();
  error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  // parser_, buffer_ and inflight_ stay alive: a cancelled Beast read still
  // touches the parser when it completes (operation_aborted / eof).
  if (responding) {
    if (auto writer = writer_.lock())
      writer->NotifyClosed();  // OnClose if the response had not ended
  }
  writer_.reset();
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->connections.erase(this);
    state_->open_connections.fetch_sub(1);
  }
  state_->cv.notify_all();
}

void Connection::ArmTimer(std::chrono::milliseconds d) {
  uint64_t generation = ++timer_generation_;
  timer_.expires_after(d);
  timer_.async_wait([self = shared_from_this(), generation](const error_code& ec) {
    if (ec || generation != self->timer_generation_ || self->phase_ == Phase::kClosed) return;
    self->Close();  // header/body/idle/write/linger timeout; a stream's OnClose fires
  });
}

void Connection::DisarmTimer() {
  ++timer_generation_;
  timer_.cancel();
}

}  // namespace mneme::http::internal
