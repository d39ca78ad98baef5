// Session: one conversation kept on the server, as data.
//
// A session holds what the next turn needs to continue the conversation
// without the client resending it: the messages (each one OpenAI message as
// JSON text, opaque here), the token ids of the rendered conversation, and
// the rolling chunk hashes of those tokens (kv/chunk_hasher.h), which name
// the conversation's KV in the KV tiers. KV bytes never live here.
//
// Ids are "sess_" + 32 lowercase hex digits: 128 bits from the kernel's
// CSPRNG (getrandom(2)), so they cannot be guessed. Ids coming from clients
// are checked with IsWellFormedSessionId; a malformed id is simply a session
// that does not exist (NOT_FOUND), never an error of another kind.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kv/chunk_hasher.h"
#include "util/status.h"

namespace mneme::session {

using TimePoint = std::chrono::system_clock::time_point;

inline constexpr std::string_view kSessionIdPrefix = "sess_";
inline constexpr size_t kSessionIdLength = 5 + 32;

// A fresh id from getrandom(2); IO_ERROR only if the kernel refuses.
Result<std::string> NewSessionId();
// "sess_" followed by exactly 32 lowercase hex digits.
bool IsWellFormedSessionId(std::string_view id);

struct Session {
  std::string id;
  std::string owner;  // the API key that created it; empty = no keys configured
  TimePoint created;
  TimePoint last_used;  // sliding TTL: expires at last_used + ttl_seconds when idle
  int64_t ttl_seconds = 0;
  std::string metadata;  // JSON text (opaque); empty = none

  std::vector<std::string> messages;      // one message per entry, JSON text (opaque)
  std::vector<int32_t> tokens;            // the rendered conversation's token ids
  std::vector<kv::Hash128> chunk_hashes;  // hashes of the whole chunks of `tokens`

  // Bumped by every committed turn; a turn commits only if it is unchanged
  // since the turn read the session (fencing).
  int64_t version = 0;
};

// What List returns per session: everything but the history itself.
struct SessionInfo {
  std::string id;
  TimePoint created;
  TimePoint last_used;
  int64_t ttl_seconds = 0;
  std::string metadata;
  int64_t num_messages = 0;
  int64_t num_tokens = 0;
  int64_t version = 0;
};

SessionInfo InfoOf(const Session& s);

// How a new session starts. Everything but `owner` may stay empty.
struct SessionInit {
  std::string owner;
  int64_t ttl_seconds = 0;  // <= 0: the store's default
  std::string metadata;
  std::vector<std::string> messages;
  std::vector<int32_t> tokens;
  std::vector<kv::Hash128> chunk_hashes;
};

}  // namespace mneme::session
