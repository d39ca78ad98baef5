// SessionService (see session_service.h).
#include "server/session_service.h"

#include <chrono>
#include <optional>
#include <utility>

#include "api/api_error.h"
#include "api/chat_messages.h"
#include "api/json_io.h"
#include "api/session_api.h"

namespace mneme::server {
namespace {

int64_t UnixSeconds(session::TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

void SendApiError(http::ResponseWriter* w, const api::ApiError& e) {
  w->Send(e.http_status, "application/json", api::ErrorBody(e));
}

api::Metadata MetadataFromJson(const std::string& text) {
  api::Metadata m;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return m;
  for (const auto& [k, v] : j.items()) {
    if (v.is_string()) m[k] = v.get<std::string>();
  }
  return m;
}

std::string MetadataToJson(const api::Metadata& m) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return api::DumpJson(j);
}

api::ChatMessage MessageFromJson(const std::string& text) {
  api::ChatMessage m;
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return m;
  m.role = j.value("role", "");
  if (j.contains("content") && j["content"].is_string()) m.content = j["content"].get<std::string>();
  m.name = j.value("name", "");
  m.tool_call_id = j.value("tool_call_id", "");
  return m;
}

api::SessionView ViewOf(const session::SessionInfo& s, const std::string& model) {
  api::SessionView v;
  v.id = s.id;
  v.created_at = UnixSeconds(s.created);
  v.last_used_at = UnixSeconds(s.last_used);
  v.expires_at = v.last_used_at + s.ttl_seconds;
  v.model = model;
  v.message_count = s.num_messages;
  v.token_count = s.num_tokens;
  v.metadata = MetadataFromJson(s.metadata);
  return v;
}

api::SessionView ViewOf(const session::Session& s, const std::string& model) {
  api::SessionView v = ViewOf(session::InfoOf(s), model);
  for (const std::string& m : s.messages) v.messages.push_back(MessageFromJson(m));
  return v;
}

// The value of `key` in a query string (no percent-decoding: ids, numbers
// and the words asc/desc need none).
std::optional<std::string_view> QueryParam(std::string_view query, std::string_view key) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key) {
      return eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

}  // namespace

SessionService::SessionService(ChatService* chat, session::SessionStore* store,
                               std::string model_name)
    : chat_(chat), store_(store), model_name_(std::move(model_name)) {}

void SessionService::HandleCreate(const http::Request& request,
                                  std::shared_ptr<http::ResponseWriter> writer) {
  const std::optional<std::string> owner = chat_->Authorize(request, writer.get());
  if (!owner) return;
  api::ApiResult<api::SessionCreateRequest> req = api::ParseSessionCreateRequest(request.body);
  if (!req.ok()) return SendApiError(writer.get(), req.error());
  if (!req->model.empty() && req->model != model_name_) {
    return SendApiError(writer.get(), api::ModelNotFound(req->model));
  }
  session::SessionInit init;
  init.owner = *owner;
  init.ttl_seconds = req->ttl_seconds.value_or(0);
  init.metadata = MetadataToJson(req->metadata);
  if (req->system_prompt) {
    init.messages.push_back(
        api::DumpJson(nlohmann::ordered_json{{"role", "system"}, {"content", *req->system_prompt}}));
  }
  for (const api::ChatMessage& m : req->messages) {
    init.messages.push_back(api::DumpJson(api::ChatMessageJson(m)));
  }
  Result<session::Session> s = store_->Create(std::move(init));
  if (!s.ok()) {
    return SendApiError(writer.get(), api::ApiErrorFromStatus(s.status(), api::StatusOrigin::kSession));
  }
  writer->Send(200, "application/json", api::SessionJson(ViewOf(*s, model_name_), true),
               {{"X-Session-Id", s->id}});
}

void SessionService::HandleList(const http::Request& request,
                                std::shared_ptr<http::ResponseWriter> writer) {
  const std::optional<std::string> owner = chat_->Authorize(request, writer.get());
  if (!owner) return;
  api::ApiResult<api::ListParams> params =
      api::ParseListParams(QueryParam(request.query, "limit"), std::nullopt, std::nullopt);
  if (!params.ok()) return SendApiError(writer.get(), params.error());
  const std::string after(QueryParam(request.query, "after").value_or(""));
  Result<session::SessionPage> page = store_->List(*owner, after, params->limit);
  if (!page.ok()) {
    return SendApiError(writer.get(),
                        api::InvalidRequest("after", std::string(page.status().message())));
  }
  std::vector<api::SessionView> views;
  for (const session::SessionInfo& s : page->sessions) views.push_back(ViewOf(s, model_name_));
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(
      api::SessionListJson(views, !page->next_cursor.empty()));
  j["next_after"] = page->next_cursor.empty() ? nlohmann::ordered_json(nullptr)
                                              : nlohmann::ordered_json(page->next_cursor);
  writer->Send(200, "application/json", api::DumpJson(j));
}

void SessionService::HandleOne(const http::Request& request,
                               std::shared_ptr<http::ResponseWriter> writer) {
  const std::optional<std::string> owner = chat_->Authorize(request, writer.get());
  if (!owner) return;
  constexpr std::string_view kPrefix = "/v1/sessions/";
  std::string_view rest = std::string_view(request.path).substr(kPrefix.size());
  bool fork = false;
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    if (rest.substr(slash) != "/fork" || request.method != "POST") {
      return SendApiError(writer.get(), api::MakeError(404, "unknown route " + request.path));
    }
    fork = true;
    rest = rest.substr(0, slash);
  }
  const std::string id(rest);
  if (fork) {
    api::ApiResult<api::SessionForkRequest> req = api::ParseSessionForkRequest(request.body);
    if (!req.ok()) return SendApiError(writer.get(), req.error());
    if (req->message_count || req->metadata || req->ttl_seconds) {
      return SendApiError(writer.get(),
                          api::InvalidRequest("message_count", "fork copies the whole history; "
                                                               "options are not supported yet",
                                              "unsupported_value"));
    }
    Result<session::Session> s = store_->Fork(id, *owner);
    if (!s.ok()) return SendApiError(writer.get(), api::SessionNotFound(id));
    api::SessionView v = ViewOf(*s, model_name_);
    v.forked_from = id;
    writer->Send(200, "application/json", api::SessionJson(v, true), {{"X-Session-Id", s->id}});
    return;
  }
  if (request.method == "DELETE") {
    Status s = store_->Delete(id, *owner);
    if (!s.ok()) return SendApiError(writer.get(), api::SessionNotFound(id));
    writer->Send(200, "application/json", api::SessionDeletedJson(id));
    return;
  }
  if (request.method != "GET" && request.method != "HEAD") {
    writer->Send(405, "application/json",
                 api::ErrorBody(api::MakeError(405, "use GET or DELETE on a session")),
                 {{"Allow", "GET, DELETE"}});
    return;
  }
  Result<session::Session> s = store_->Get(id, *owner);
  if (!s.ok()) return SendApiError(writer.get(), api::SessionNotFound(id));
  writer->Send(200, "application/json", api::SessionJson(ViewOf(*s, model_name_), true));
}

}  // namespace mneme::server
