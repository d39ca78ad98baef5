// Bodies of the sessions API (Mneme's own, shaped like OpenAI's list and
// object conventions):
//
//   POST   /v1/sessions               SessionCreateRequest -> session object
//   GET    /v1/sessions               ?limit=&after=&order= -> list page
//   GET    /v1/sessions/{id}          -> session object with messages
//   DELETE /v1/sessions/{id}          -> {"id","object":"session.deleted","deleted":true}
//   POST   /v1/sessions/{id}/fork     SessionForkRequest -> the new session
//
// Session object:
//   {"id":"sess_...","object":"session","created_at":1700000000,
//    "last_used_at":1700000100,"expires_at":1700003700,   (null: no TTL)
//    "model":"m","message_count":2,"token_count":57,
//    "forked_from":null,"metadata":{},"messages":[{"role":"user","content":"Hi"},...]}
// "messages" only on GET of one session and on create/fork; list pages
// leave it out (a conversation can be long).
// List page: {"object":"list","data":[...],"first_id","last_id","has_more"}
// (ids null when data is empty); the next page is ?after=<last_id>.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/api_error.h"
#include "api/api_types.h"
#include "api/chat_messages.h"
#include "api/common_fields.h"

namespace mneme::api {

inline constexpr int64_t kMaxSessionTtlSeconds = 365LL * 24 * 3600;

struct SessionCreateRequest {
  std::string model;                         // "" when absent
  std::optional<std::string> system_prompt;  // becomes the first (system) message
  std::vector<ChatMessage> messages;         // optional initial history, after it
  Metadata metadata;
  std::optional<int64_t> ttl_seconds;  // idle time-to-live, 1..365 days; none: server default
};

// Fields: model, system_prompt (string), messages (array, may be empty),
// metadata, ttl_seconds (integer). Body may be empty ("" or "{}").
ApiResult<SessionCreateRequest> ParseSessionCreateRequest(std::string_view body,
                                                          const ParseOptions& options = {});

struct SessionForkRequest {
  // Keep only the first n messages of the parent (0..its count; checked by
  // the server). None: all of them.
  std::optional<int64_t> message_count;
  std::optional<Metadata> metadata;  // none: copy the parent's
  std::optional<int64_t> ttl_seconds;
};
ApiResult<SessionForkRequest> ParseSessionForkRequest(std::string_view body,
                                                      const ParseOptions& options = {});

// Query parameters of GET /v1/sessions, as raw strings (nullopt: absent).
struct ListParams {
  int limit = 20;          // 1..100
  std::string after;       // a session id: start after it ("" from the start)
  bool descending = true;  // order=desc (newest first, default) | asc
};
ApiResult<ListParams> ParseListParams(std::optional<std::string_view> limit,
                                      std::optional<std::string_view> after,
                                      std::optional<std::string_view> order);

// What a session object shows (the server fills it from the session store).
struct SessionView {
  std::string id;
  int64_t created_at = 0;
  int64_t last_used_at = 0;
  std::optional<int64_t> expires_at;
  std::string model;
  int64_t message_count = 0;
  int64_t token_count = 0;  // tokens of the rendered conversation
  std::optional<std::string> forked_from;
  Metadata metadata;
  std::vector<ChatMessage> messages;  // shown when include_messages
};

nlohmann::ordered_json SessionObjectJson(const SessionView& session, bool include_messages);
std::string SessionJson(const SessionView& session, bool include_messages);
std::string SessionListJson(std::span<const SessionView> page, bool has_more);
std::string SessionDeletedJson(std::string_view session_id);

}  // namespace mneme::api
