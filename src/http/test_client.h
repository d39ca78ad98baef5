// A small blocking HTTP/1.1 client over raw POSIX sockets, for the http/
// tests only (header-only, so mneme_library does not link it into the
// product). It shares no code with the server: it frames and parses on its
// own, so the tests check the wire format independently. Every wait is a
// bounded poll(2); nothing sleeps.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mneme::http::testing {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

inline bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

struct ParsedResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;                 // de-chunked
  std::vector<std::string> chunks;  // chunk payloads in order (chunked responses)
  bool chunked = false;
  bool complete = false;  // the framing said the body ended (or EOF for close-delimited)

  std::string Header(std::string_view name) const {
    for (const auto& [k, v] : headers) {
      if (IEquals(k, name)) return v;
    }
    return "";
  }
  bool HasHeader(std::string_view name) const {
    for (const auto& [k, v] : headers) {
      if (IEquals(k, name)) return true;
    }
    return false;
  }
};

// Opens a TCP connection to 127.0.0.1:port; -1 on failure (errno set).
inline int ConnectTo(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int e = errno;
    ::close(fd);
    errno = e;
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

class TestClient {
 public:
  explicit TestClient(int port, int rcvbuf = 0) {
    if (rcvbuf > 0) {
      // SO_RCVBUF must be set before connect to shrink the window.
      fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<uint16_t>(port));
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) Reset();
    } else {
      fd_ = ConnectTo(port);
    }
  }
  ~TestClient() { Reset(); }
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  bool connected() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Reads what is available, waiting until `deadline`. Returns bytes read,
  // 0 on EOF/error (sets eof_), -1 on timeout.
  long ReadSome(Clock::time_point deadline) {
    for (;;) {
      auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
      if (left < 0) return -1;
      pollfd p{fd_, POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(left));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) return -1;
      char tmp[16384];
      ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) {
        eof_ = true;
        return 0;
      }
      buf_.append(tmp, static_cast<size_t>(n));
      return n;
    }
  }

  // True if the server closes the connection (EOF or reset) before `timeout`;
  // bytes received meanwhile are kept in buffer().
  bool WaitClosed(milliseconds timeout = milliseconds(5000)) {
    auto deadline = Clock::now() + timeout;
    while (!eof_) {
      if (ReadSome(deadline) < 0) return false;
    }
    return true;
  }

  // Reads one response. `head_request`: the response has no body. Returns
  // nullopt on timeout or when the connection ends before a full head.
  std::optional<ParsedResponse> ReadResponse(bool head_request = false,
                                             milliseconds timeout = milliseconds(5000)) {
    auto deadline = Clock::now() + timeout;
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (ReadSome(deadline) <= 0) return std::nullopt;
    }
    ParsedResponse r;
    std::string head = buf_.substr(0, end + 2);
    buf_.erase(0, end + 4);
    size_t line_end = head.find("\r\n");
    std::string status_line = head.substr(0, line_end);
    if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12) return std::nullopt;
    r.status = std::atoi(status_line.c_str() + 9);
    size_t pos = line_end + 2;
    while (pos < head.size()) {
      size_t e = head.find("\r\n", pos);
      std::string line = head.substr(pos, e - pos);
      pos = e + 2;
      size_t colon = line.find(':');
      if (colon == std::string::npos) return std::nullopt;
      size_t v = line.find_first_not_of(' ', colon + 1);
      r.headers.emplace_back(line.substr(0, colon), v == std::string::npos ? "" : line.substr(v));
    }
    if (head_request || r.status / 100 == 1 || r.status == 204 || r.status == 304) {
      r.complete = true;
      return r;
    }
    if (IEquals(r.Header("Transfer-Encoding"), "chunked")) {
      r.chunked = true;
      for (;;) {
        size_t le;
        while ((le = buf_.find("\r\n")) == std::string::npos) {
          if (ReadSome(deadline) <= 0) return r;  // incomplete
        }
        size_t size = std::strtoul(buf_.substr(0, le).c_str(), nullptr, 16);
        while (buf_.size() < le + 2 + size + 2) {
          if (ReadSome(deadline) <= 0) return r;
        }
        if (buf_.compare(le + 2 + size, 2, "\r\n") != 0) return r;  // bad framing: incomplete
        std::string chunk = buf_.substr(le + 2, size);
        buf_.erase(0, le + 2 + size + 2);
        if (size == 0) {
          r.complete = true;
          return r;
        }
        r.body += chunk;
        r.chunks.push_back(std::move(chunk));
      }
    }
    if (r.HasHeader("Content-Length")) {
      size_t n = std::strtoul(r.Header("Content-Length").c_str(), nullptr, 10);
      while (buf_.size() < n) {
        if (ReadSome(deadline) <= 0) return r;
      }
      r.body = buf_.substr(0, n);
      buf_.erase(0, n);
      r.complete = true;
      return r;
    }
    while (!eof_) {  // close-delimited
      if (ReadSome(deadline) < 0) return r;
    }
    r.body = std::move(buf_);
    buf_.clear();
    r.complete = true;
    return r;
  }

  std::string& buffer() { return buf_; }
  bool eof() const { return eof_; }

 private:
  int fd_ = -1;
  std::string buf_;
  bool eof_ = false;
};

inline std::string Get(std::string_view path, std::string_view extra = "") {
  return "GET " + std::string(path) + " HTTP/1.1\r\nHost: test\r\n" + std::string(extra) + "\r\n";
}

inline std::string Post(std::string_view path, std::string_view body, std::string_view extra = "") {
  return "POST " + std::string(path) +
         " HTTP/1.1\r\nHost: test\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
         std::string(extra) + "\r\n" + std::string(body);
}

}  // namespace mneme::http::testing
