// Request fields that several endpoints share and that are not sampling:
// model, session_id, metadata, n, stream / stream_options, and the OpenAI
// features this server does not have (tools, structured output, logprobs,
// audio), which are refused by name instead of silently ignored when a
// client actually asks for them (an empty tools array or tool_choice "none"
// asks for nothing and passes).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "api/field_reader.h"

namespace mneme::api {

inline constexpr size_t kMaxModelNameBytes = 256;
inline constexpr size_t kMaxSessionIdBytes = 128;
inline constexpr size_t kMaxMetadataEntries = 16;  // OpenAI's limits
inline constexpr size_t kMaxMetadataKeyBytes = 64;
inline constexpr size_t kMaxMetadataValueBytes = 512;

using Metadata = std::map<std::string, std::string>;

// "model": a string of at most 256 bytes; "" when absent.
std::string ReadModel(const FieldReader& r);

// A session id: 1..128 bytes of [A-Za-z0-9._:-] (safe in a header, a URL
// path segment and a log line). The server checks the X-Session-Id header
// and path segments with IsValidSessionId too.
bool IsValidSessionId(std::string_view id);
std::optional<std::string> ReadSessionId(const FieldReader& r, std::string_view key = "session_id");

// "metadata": an object of at most 16 string values, keys <= 64 bytes,
// values <= 512 bytes. Empty when absent.
Metadata ReadMetadata(const FieldReader& r, std::string_view key = "metadata");

// "n" (and "best_of" for completions) must be 1 when given.
void RequireOne(const FieldReader& r, std::string_view key);

struct StreamFields {
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage (ignored unless stream)
};
StreamFields ReadStreamFields(const FieldReader& r);

// Type-checks the OpenAI fields we accept and ignore (user, store,
// parallel_tool_calls, service_tier, reasoning_effort) and refuses the
// features we lack: tools / functions (non-empty), tool_choice /
// function_call other than "none"/"auto", response_format other than
// {"type":"text"}, logprobs true, top_logprobs > 0, modalities other than
// ["text"], audio. `chat`: also the chat-only ones (functions, response_format,
// modalities, audio).
void CheckUnsupportedFeatures(const FieldReader& r, bool chat);

}  // namespace mneme::api
