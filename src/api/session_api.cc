// Sessions API bodies (see session_api.h).
#include "api/session_api.h"

#include <charconv>
#include <limits>

#include "api/field_reader.h"
#include "api/json_io.h"

namespace mneme::api {

using OJson = nlohmann::ordered_json;

namespace {

// "" and whitespace-only bodies mean {} for these endpoints (clients often
// POST nothing to create or fork).
bool IsBlank(std::string_view body) {
  for (char c : body) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return false;
  }
  return true;
}

ApiResult<Json> ParseOptionalBody(std::string_view body, int max_depth) {
  if (IsBlank(body)) return Json::object();
  return ParseJsonObject(body, max_depth);
}

std::optional<int64_t> ReadTtl(const FieldReader& r) {
  return r.Integer("ttl_seconds", 1, kMaxSessionTtlSeconds);
}

}  // namespace

ApiResult<SessionCreateRequest> ParseSessionCreateRequest(std::string_view body,
                                                          const ParseOptions& options) {
  ApiResult<Json> parsed = ParseOptionalBody(body, options.max_json_depth);
  if (!parsed.ok()) return parsed.error();
  std::optional<ApiError> error;
  FieldReader r(parsed.value(), "", &error);
  SessionCreateRequest req;
  req.model = ReadModel(r);
  req.system_prompt = r.String("system_prompt");
  if (const Json* messages = r.Find("messages")) {
    req.messages = ReadChatMessages(r, *messages, "messages", /*allow_empty=*/true);
  }
  req.metadata = ReadMetadata(r);
  req.ttl_seconds = ReadTtl(r);
  if (error) return *error;
  return req;
}

ApiResult<SessionForkRequest> ParseSessionForkRequest(std::string_view body,
                                                      const ParseOptions& options) {
  ApiResult<Json> parsed = ParseOptionalBody(body, options.max_json_depth);
  if (!parsed.ok()) return parsed.error();
  std::optional<ApiError> error;
  FieldReader r(parsed.value(), "", &error);
  SessionForkRequest req;
  req.message_count = r.Integer("message_count", 0, std::numeric_limits<int32_t>::max());
  if (r.Find("metadata") != nullptr) req.metadata = ReadMetadata(r);
  req.ttl_seconds = ReadTtl(r);
  if (error) return *error;
  return req;
}

ApiResult<ListParams> ParseListParams(std::optional<std::string_view> limit,
                                      std::optional<std::string_view> after,
                                      std::optional<std::string_view> order) {
  ListParams p;
  if (limit) {
    int n = 0;
    auto [end, ec] = std::from_chars(limit->data(), limit->data() + limit->size(), n);
    if (ec != std::errc() || end != limit->data() + limit->size() || n < 1 || n > 100) {
      return InvalidRequest("limit", "Invalid 'limit': expected an integer between 1 and 100.");
    }
    p.limit = n;
  }
  if (after && !after->empty()) {
    if (!IsValidSessionId(*after)) {
      return InvalidRequest("after", "Invalid 'after': not a session id.");
    }
    p.after = std::string(*after);
  }
  if (order) {
    if (*order == "asc") {
      p.descending = false;
    } else if (*order != "desc") {
      return InvalidRequest("order", "Invalid 'order': expected 'asc' or 'desc'.");
    }
  }
  return p;
}

OJson SessionObjectJson(const SessionView& s, bool include_messages) {
  OJson j = OJson::object();
  j["id"] = s.id;
  j["object"] = "session";
  j["created_at"] = s.created_at;
  j["last_used_at"] = s.last_used_at;
  j["expires_at"] = s.expires_at ? OJson(*s.expires_at) : OJson(nullptr);
  j["model"] = s.model;
  j["message_count"] = s.message_count;
  j["token_count"] = s.token_count;
  j["forked_from"] = s.forked_from ? OJson(*s.forked_from) : OJson(nullptr);
  OJson metadata = OJson::object();
  for (const auto& [k, v] : s.metadata) metadata[k] = v;
  j["metadata"] = std::move(metadata);
  if (include_messages) {
    OJson messages = OJson::array();
    for (const ChatMessage& m : s.messages) messages.push_back(ChatMessageJson(m));
    j["messages"] = std::move(messages);
  }
  return j;
}

std::string SessionJson(const SessionView& session, bool include_messages) {
  return DumpJson(SessionObjectJson(session, include_messages));
}

std::string SessionListJson(std::span<const SessionView> page, bool has_more) {
  OJson j = OJson::object();
  j["object"] = "list";
  OJson data = OJson::array();
  for (const SessionView& s : page) data.push_back(SessionObjectJson(s, false));
  j["data"] = std::move(data);
  j["first_id"] = page.empty() ? OJson(nullptr) : OJson(page.front().id);
  j["last_id"] = page.empty() ? OJson(nullptr) : OJson(page.back().id);
  j["has_more"] = has_more;
  return DumpJson(j);
}

std::string SessionDeletedJson(std::string_view session_id) {
  OJson j = OJson::object();
  j["id"] = std::string(session_id);
  j["object"] = "session.deleted";
  j["deleted"] = true;
  return DumpJson(j);
}

}  // namespace mneme::api
