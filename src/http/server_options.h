// ServerOptions: every limit and timeout of the HTTP layer in one place.
//
// Defaults suit a local inference server behind nginx or used directly by
// the OpenAI SDKs; tests shrink the timeouts to milliseconds.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "util/status.h"

namespace mneme::http {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;     // 0 = an ephemeral port (Server::port() tells which)
  int io_threads = 1;  // threads running the event loop; handlers run on them
  int backlog = 1024;  // listen(2) queue
  // Beyond this many open connections a new one gets 503 + Connection: close.
  size_t max_connections = 4096;
  size_t max_header_bytes = size_t{16} * 1024;      // request line + headers; over -> 431
  size_t max_body_bytes = size_t{8} * 1024 * 1024;  // over -> 413 (before reading it)
  // From the first byte of a request (or the accept) to the end of its headers;
  // a slowloris client is closed after this.
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds body_timeout{60'000};  // whole body, after the headers
  // Idle time between requests before the server closes a kept-alive
  // connection; advertised as "Keep-Alive: timeout=N" (whole seconds, rounded
  // down) so pooling clients (undici) retire it before the server does.
  std::chrono::milliseconds keep_alive_timeout{30'000};
  // The response to the Nth request carries Connection: close.
  int max_requests_per_connection = 10'000;
  // A write that makes no progress for this long closes the connection.
  std::chrono::milliseconds write_timeout{30'000};
  // A stream whose unsent bytes exceed this is cut off (slow reader).
  size_t max_stream_buffer_bytes = size_t{8} * 1024 * 1024;
  // After a final response: how long to drain what the client still sends
  // before closing, so it reads our response instead of a reset.
  std::chrono::milliseconds linger_timeout{2'000};

  // InvalidArgument naming the first bad field.
  Status Validate() const;
};

}  // namespace mneme::http
