// SSE framing (see sse.h).
#include "api/sse.h"

namespace mneme::api {

std::string SseData(std::string_view json) {
  std::string out;
  out.reserve(json.size() + 8);
  out += "data: ";
  out += json;
  out += "\n\n";
  return out;
}

std::string SseDone() {
  return "data: [DONE]\n\n";
}

std::string SseEvent(std::string_view type, std::string_view json) {
  std::string out;
  out.reserve(type.size() + json.size() + 16);
  out += "event: ";
  out += type;
  out += "\ndata: ";
  out += json;
  out += "\n\n";
  return out;
}

}  // namespace mneme::api
