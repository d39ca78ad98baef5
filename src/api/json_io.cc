// Bounded JSON parsing and never-throwing serialization (see json_io.h).
#include "api/json_io.h"

#include <exception>

namespace mneme::api {

int JsonNestingDepth(std::string_view text, int stop_above) {
  int depth = 0;
  int max_depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '[':
      case '{':
        ++depth;
        if (depth > max_depth) {
          max_depth = depth;
          if (max_depth > stop_above) return stop_above + 1;
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
  return max_depth;
}

ApiResult<nlohmann::json> ParseJsonObject(std::string_view body, int max_depth) {
  if (JsonNestingDepth(body, max_depth) > max_depth) {
    return InvalidJson("nested more than " + std::to_string(max_depth) + " levels deep.");
  }
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(body.begin(), body.end());
  } catch (const nlohmann::json::exception& e) {
    // e.what(): "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    std::string what = e.what();
    size_t pos = what.find("] ");
    if (pos != std::string::npos) what = what.substr(pos + 2);
    // The message quotes the offending token, which may be a megabyte long.
    return InvalidJson(TruncateForMessage(what, 256));
  } catch (const std::exception& e) {  // bad_alloc and kin: still the caller's body
    return InvalidJson(e.what());
  }
  if (!value.is_object()) {
    return InvalidJson("the body must be a JSON object, not " + std::string(value.type_name()) +
                       ".");
  }
  return value;
}

namespace {

template <typename Json>
std::string DumpImpl(const Json& value) {
  try {
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::exception&) {
    // Unreachable with the replace handler (only allocation can fail); a
    // valid body is still better than an exception across the module edge.
    return "null";
  }
}

}  // namespace

std::string DumpJson(const nlohmann::ordered_json& value) {
  return DumpImpl(value);
}
std::string DumpJson(const nlohmann::json& value) {
  return DumpImpl(value);
}

std::string TruncateForMessage(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  size_t cut = max_bytes;
  // Back up over continuation bytes (10xxxxxx) to a character start.
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  std::string out(s.substr(0, cut));
  out += "...";
  return out;
}

}  // namespace mneme::api
