// Server-sent events framing for streamed answers.
//
//   chat / completions:  data: {"id":"chatcmpl-...",...}\n\n ... data: [DONE]\n\n
//   responses:           event: response.created\ndata: {...}\n\n ...
//                        (no [DONE]: the stream ends after response.completed)
//
// `json` must be one line, which DumpJson output always is (it escapes
// control characters), so one data: line per event suffices.
#pragma once

#include <string>
#include <string_view>

namespace mneme::api {

std::string SseData(std::string_view json);
std::string SseDone();
std::string SseEvent(std::string_view type, std::string_view json);

}  // namespace mneme::api
