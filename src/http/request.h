// Request: one parsed HTTP request as the handlers see it.
//
// Plain data, no Boost types, so the api/ layer above never includes Beast.
// Header names keep the client's spelling; lookups ignore ASCII case (RFC 9110
// field names are case-insensitive). `path` and `query` are the request target
// split at the first '?', neither percent-decoded.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mneme::http {

// Response or request header fields, in order, duplicates allowed.
using HeaderList = std::vector<std::pair<std::string, std::string>>;

// True when `a` and `b` are equal ignoring ASCII case.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

struct Request {
  std::string method;  // "GET", "POST", ... as sent (methods are case-sensitive)
  std::string path;    // "/v1/chat/completions"
  std::string query;   // the part after '?', without it; empty when none
  HeaderList headers;
  std::string body;            // whole body (Content-Length or chunked), de-chunked
  std::string remote_address;  // "127.0.0.1:54321"
  int version = 11;            // 10 for HTTP/1.0, 11 for HTTP/1.1

  // Value of the first field named `name` (any case), or "" when absent.
  std::string_view Header(std::string_view name) const;
  bool HasHeader(std::string_view name) const;
};

}  // namespace mneme::http
