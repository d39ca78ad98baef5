// ResponseWriter: how a handler answers one request, now or later, from any
// thread.
//
// The connection creates one writer per request and hands a shared_ptr to the
// handler. The handler may answer at once, or keep the pointer and answer
// later from another thread (the engine thread streaming tokens). Every method
// is thread-safe and never blocks on the network: bytes are queued and the
// connection's strand flushes them asynchronously.
//
//   whole response:  Send(200, "application/json", body)
//   stream (SSE):    StartStream(200, "text/event-stream"); Write(...)*; End()
//
// Streams use chunked transfer encoding (HTTP/1.1) or close-delimited bodies
// (HTTP/1.0 clients). A client that goes away, a queue of unsent bytes above
// ServerOptions::max_stream_buffer_bytes, or a write that makes no progress for
// ServerOptions::write_timeout closes the connection; OnClose then fires once
// (if the response had not ended) and Write returns false from then on.
//
// If the last reference to a writer that never answered is dropped, the
// client gets a 500 instead of hanging; a stream that was started but never
// ended is aborted (see Abort).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "http/request.h"

namespace mneme::http {

namespace internal {
class Connection;
}  // namespace internal

class ResponseWriter {
 public:
  ~ResponseWriter();
  ResponseWriter(const ResponseWriter&) = delete;
  ResponseWriter& operator=(const ResponseWriter&) = delete;

  // A whole response with Content-Length. False if already answered or the
  // connection is closed.
  bool Send(int status, std::string_view content_type, std::string_view body,
            const HeaderList& extra = {});

  // Convenience: Send(status, "application/json", ErrorBody(...)) in OpenAI's
  // error schema; `code` empty -> null.
  bool SendError(int status, std::string_view message, std::string_view code = {});

  // Starts a streamed response. Adds Cache-Control: no-cache and
  // X-Accel-Buffering: no unless `extra` sets them.
  bool StartStream(int status, std::string_view content_type, const HeaderList& extra = {});

  // Queues one piece of the stream (one chunk on the wire). Empty data is a
  // no-op. False once the client is gone or the stream was aborted, or before
  // StartStream / after End.
  bool Write(std::string data);

  // Ends the stream (the terminating chunk). False if not streaming.
  bool End();

  // Sends what is already queued, then closes the connection without
  // completing the response (an error in the middle of a stream: the client
  // must see a truncated response, not a clean end). OnClose does not fire.
  void Abort();

  // True once the connection is closed or closing (client gone, limits,
  // shutdown deadline).
  bool IsClosed() const;

  // `on_close` runs once, on an io thread, when the connection closes before
  // End/Send completed the response; it must not block (cancel work, do not
  // wait for it). If the connection is already closed it runs now, on the
  // calling thread. Replaces any earlier callback.
  void SetOnClose(std::function<void()> on_close);

  // Bytes queued on this connection and not yet accepted by the kernel
  // (backpressure signal for producers).
  size_t queued_bytes() const;

  // True once Send or StartStream succeeded.
  bool answered() const;

 private:
  friend class internal::Connection;
  struct Context {
    bool head = false;        // HEAD request: headers only
    int version = 11;         // request's HTTP version
    bool keep_alive = false;  // the client allows it and the limits do too
    int keep_alive_timeout_s = 0;
  };
  ResponseWriter(std::shared_ptr<internal::Connection> connection, Context context);

  // Called by the connection (on its strand) when it closes.
  void NotifyClosed();
  // Status line and headers; `content_length` < 0 means streamed.
  std::string Head(int status, std::string_view content_type, long long content_length,
                   const HeaderList& extra, bool stream, bool* close_after) const;

  enum class State { kNew, kStreaming, kDone };

  const std::shared_ptr<internal::Connection> connection_;
  const Context context_;
  mutable std::mutex mu_;
  State state_ = State::kNew;
  bool chunked_ = false;
  bool stream_close_after_ = false;
  bool stream_counted_ = false;  // counted in ServerState::active_streams
  bool closed_ = false;          // the connection told us it closed
  bool on_close_fired_ = false;
  std::function<void()> on_close_;
};

}  // namespace mneme::http
