// Test helper: splits an SSE byte stream into events, independently of
// sse.cc, so tests check the framing rather than re-use it.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mneme::api::testing {

struct SseFrame {
  std::string event;  // "" when the frame has no event: line
  std::string data;
};

// Frames are separated by a blank line; each line is "field: value".
inline std::vector<SseFrame> SplitSse(const std::string& stream) {
  std::vector<SseFrame> frames;
  size_t pos = 0;
  while (pos < stream.size()) {
    size_t end = stream.find("\n\n", pos);
    if (end == std::string::npos) {
      ADD_FAILURE() << "unterminated SSE frame: " << stream.substr(pos);
      break;
    }
    SseFrame f;
    std::string block = stream.substr(pos, end - pos);
    size_t line_start = 0;
    while (line_start <= block.size()) {
      size_t nl = block.find('\n', line_start);
      std::string line =
          block.substr(line_start, nl == std::string::npos ? std::string::npos : nl - line_start);
      if (line.rfind("event: ", 0) == 0) {
        f.event = line.substr(7);
      } else if (line.rfind("data: ", 0) == 0) {
        EXPECT_TRUE(f.data.empty()) << "two data lines in one frame";
        f.data = line.substr(6);
      } else {
        ADD_FAILURE() << "unexpected SSE line: " << line;
      }
      if (nl == std::string::npos) break;
      line_start = nl + 1;
    }
    frames.push_back(std::move(f));
    pos = end + 2;
  }
  return frames;
}

// Parses a frame's data as JSON (fails the test on invalid JSON).
inline nlohmann::json Data(const SseFrame& f) {
  nlohmann::json j = nlohmann::json::parse(f.data, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(j.is_discarded()) << "invalid JSON in SSE data: " << f.data;
  return j;
}

}  // namespace mneme::api::testing
