// OpenAI-schema error bodies and reason phrases (see error.h).
#include "http/error.h"

#include <cstdio>

#include "util/utf8.h"

namespace mneme::http {

namespace {

void AppendJsonString(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          *out += buf;
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// Replaces each byte that is not part of a well-formed UTF-8 sequence by U+FFFD.
std::string SanitizeUtf8(std::string_view s) {
  if (IsWellFormedUtf8(s)) return std::string(s);
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80           ? 1
                 : (c >> 5) == 0x6  ? 2
                 : (c >> 4) == 0xE  ? 3
                 : (c >> 3) == 0x1E ? 4
                                    : 0;
    if (len != 0 && i + len <= s.size() && IsWellFormedUtf8(s.substr(i, len))) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

}  // namespace

std::string_view ErrorTypeForStatus(int status) {
  if (status == 401) return "authentication_error";
  if (status == 403) return "permission_error";
  if (status == 429) return "rate_limit_error";
  if (status >= 400 && status < 500) return "invalid_request_error";
  return "server_error";
}

std::string ErrorBody(std::string_view message, std::string_view type, std::string_view code) {
  std::string out = "{\"error\":{\"message\":";
  AppendJsonString(SanitizeUtf8(message), &out);
  out += ",\"type\":";
  AppendJsonString(SanitizeUtf8(type), &out);
  out += ",\"code\":";
  if (code.empty()) {
    out += "null";
  } else {
    AppendJsonString(SanitizeUtf8(code), &out);
  }
  out += "}}";
  return out;
}

std::string_view StatusReason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Unknown";
  }
}

}  // namespace mneme::http
