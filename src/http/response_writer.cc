// ResponseWriter: response framing (status line, headers, chunks) and the
// per-response state machine kNew -> (kStreaming ->) kDone (see
// response_writer.h). Bytes go to the connection's queue under mu_, so
// writes from several threads keep the order in which they took the lock.
#include "http/response_writer.h"

#include <cstdio>

#include "http/connection.h"
#include "http/error.h"

namespace mneme::http {

namespace {

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Header fields a handler may not set: the server owns message framing.
bool IsReserved(std::string_view name) {
  for (std::string_view r :
       {"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Server"}) {
    if (EqualsIgnoreCase(name, r)) return true;
  }
  return false;
}

bool IsValidField(std::string_view name, std::string_view value) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!IsTokenChar(c)) return false;
  }
  for (char c : value) {
    if (c == '\r' || c == '\n' || c == '\0') return false;  // no response splitting
  }
  return true;
}

bool HasField(const HeaderList& headers, std::string_view name) {
  for (const auto& [k, v] : headers) {
    if (EqualsIgnoreCase(k, name)) return true;
  }
  return false;
}

}  // namespace

ResponseWriter::ResponseWriter(std::shared_ptr<internal::Connection> connection, Context context)
    : connection_(std::move(connection)), context_(context) {}

ResponseWriter::~ResponseWriter() {
  State state;
  {
    std::lock_guard<std::mutex> lock(mu_);
    state = state_;
  }
  if (state == State::kNew) {
    SendError(500, "the request handler returned without answering", "internal_error");
  } else if (state == State::kStreaming) {
    // Dropped mid-stream: the client must not mistake a truncated stream for
    // a complete one, so the connection closes without the last chunk.
    Abort();
  }
}

std::string ResponseWriter::Head(int status, std::string_view content_type,
                                 long long content_length, const HeaderList& extra, bool stream,
                                 bool* close_after) const {
  bool keep = context_.keep_alive && !connection_->state().stopping.load();
  if (stream && context_.version < 11) keep = false;  // HTTP/1.0: the body ends at close
  *close_after = !keep;
  std::string h =
      "HTTP/1.1 " + std::to_string(status) + " " + std::string(StatusReason(status)) + "\r\n";
  h += "Server: mneme\r\n";
  if (!content_type.empty()) h.append("Content-Type: ").append(content_type).append("\r\n");
  if (stream) {
    if (context_.version >= 11) h += "Transfer-Encoding: chunked\r\n";
  } else if (content_length >= 0) {
    h += "Content-Length: " + std::to_string(content_length) + "\r\n";
  }
  if (keep) {
    if (context_.version < 11) h += "Connection: keep-alive\r\n";
    h += "Keep-Alive: timeout=" + std::to_string(context_.keep_alive_timeout_s) + "\r\n";
  } else {
    h += "Connection: close\r\n";
  }
  if (stream) {
    if (!HasField(extra, "Cache-Control")) h += "Cache-Control: no-cache\r\n";
    if (!HasField(extra, "X-Accel-Buffering")) h += "X-Accel-Buffering: no\r\n";
  }
  for (const auto& [name, value] : extra) {
    if (IsReserved(name) || !IsValidField(name, value)) continue;
    h.append(name).append(": ").append(value).append("\r\n");
  }
  h += "\r\n";
  return h;
}

bool ResponseWriter::Send(int status, std::string_view content_type, std::string_view body,
                          const HeaderList& extra) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != State::kNew || closed_) return false;
  bool bodiless = status == 204 || status == 304 || (status >= 100 && status < 200);
  bool close_after = false;
  std::string out =
      Head(status, content_type, bodiless ? -1 : static_cast<long long>(body.size()), extra,
           /*stream=*/false, &close_after);
  if (!bodiless && !context_.head) out += body;
  state_ = State::kDone;
  return connection_->Enqueue(std::move(out), /*last=*/true, close_after, /*limit=*/false);
}

bool ResponseWriter::SendError(int status, std::string_view message, std::string_view code) {
  return Send(status, "application/json", ErrorBody(message, ErrorTypeForStatus(status), code));
}

bool ResponseWriter::StartStream(int status, std::string_view content_type,
                                 const HeaderList& extra) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != State::kNew || closed_) return false;
  bool close_after = false;
  std::string head = Head(status, content_type, -1, extra, /*stream=*/true, &close_after);
  if (!connection_->Enqueue(std::move(head), /*last=*/false, false, /*limit=*/false)) return false;
  chunked_ = context_.version >= 11 && !context_.head;
  stream_close_after_ = close_after;
  state_ = State::kStreaming;
  stream_counted_ = true;
  connection_->state().active_streams.fetch_add(1);
  return true;
}

bool ResponseWriter::Write(std::string data) {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != State::kStreaming || closed_ || connection_->closing()) return false;
  if (data.empty() || context_.head) return true;  // an empty chunk would end the stream
  if (!chunked_) return connection_->Enqueue(std::move(data), false, false, /*limit=*/true);
  char size_line[24];
  int len = std::snprintf(size_line, sizeof(size_line), "%zx\r\n", data.size());
  std::string frame;
  frame.reserve(static_cast<size_t>(len) + data.size() + 2);
  frame.append(size_line, static_cast<size_t>(len)).append(data).append("\r\n");
  return connection_->Enqueue(std::move(frame), false, false, /*limit=*/true);
}

bool ResponseWriter::End() {
  std::lock_guard<std::mutex> lock(mu_);
  if (state_ != State::kStreaming) return false;
  state_ = State::kDone;
  if (stream_counted_) connection_->state().active_streams.fetch_sub(1);
  stream_counted_ = false;
  if (closed_) return false;
  return connection_->Enqueue(chunked_ ? "0\r\n\r\n" : "", /*last=*/true, stream_close_after_,
                              /*limit=*/false);
}

void ResponseWriter::Abort() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stream_counted_) connection_->state().active_streams.fetch_sub(1);
    stream_counted_ = false;
    state_ = State::kDone;  // no OnClose: the caller knows
  }
  connection_->AbortAfterFlush();
}

bool ResponseWriter::IsClosed() const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return true;
  }
  return connection_->closing();
}

void ResponseWriter::SetOnClose(std::function<void()> on_close) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!closed_ || state_ == State::kDone || on_close_fired_) {
      on_close_ = std::move(on_close);
      return;
    }
    on_close_fired_ = true;  // closed before the callback was set: run it now
  }
  if (on_close) on_close();
}

void ResponseWriter::NotifyClosed() {
  std::function<void()> callback;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
    if (stream_counted_) connection_->state().active_streams.fetch_sub(1);
    stream_counted_ = false;
    if (state_ == State::kDone || on_close_fired_) return;
    if (on_close_) {
      on_close_fired_ = true;
      callback = std::move(on_close_);
    }
  }
  if (callback) callback();
}

size_t ResponseWriter::queued_bytes() const {
  return connection_->queued_bytes();
}

bool ResponseWriter::answered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_ != State::kNew;
}

}  // namespace mneme::http
