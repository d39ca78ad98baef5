// OpenAI-schema errors and the Status -> HTTP mapping (see api_error.h).
#include "api/api_error.h"

#include <nlohmann/json.hpp>

#include "api/json_io.h"

namespace mneme::api {

std::string_view ErrorTypeForStatus(int http_status) {
  if (http_status == 401) return "authentication_error";
  if (http_status == 403) return "permission_error";
  if (http_status == 429) return "rate_limit_error";
  if (http_status >= 400 && http_status < 500) return "invalid_request_error";
  return "server_error";
}

std::string ErrorBody(const ApiError& error) {
  nlohmann::ordered_json inner = nlohmann::ordered_json::object();
  inner["message"] = error.message;
  inner["type"] = error.type;
  inner["param"] =
      error.param.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(error.param);
  inner["code"] =
      error.code.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(error.code);
  nlohmann::ordered_json body = nlohmann::ordered_json::object();
  body["error"] = std::move(inner);
  return DumpJson(body);
}

ApiError MakeError(int http_status, std::string message, std::string param, std::string code) {
  ApiError e;
  e.http_status = http_status;
  e.type = std::string(ErrorTypeForStatus(http_status));
  e.message = std::move(message);
  e.param = std::move(param);
  e.code = std::move(code);
  return e;
}

ApiError InvalidRequest(std::string param, std::string message, std::string code) {
  return MakeError(400, std::move(message), std::move(param), std::move(code));
}

ApiError InvalidJson(std::string detail) {
  return MakeError(400, "We could not parse the JSON body of your request: " + detail, "",
                   "invalid_json");
}

ApiError Unauthorized(bool provided) {
  if (!provided) {
    return MakeError(401,
                     "You didn't provide an API key. Send it in the Authorization header "
                     "(Authorization: Bearer YOUR_KEY).",
                     "", "missing_api_key");
  }
  return MakeError(401, "Incorrect API key provided.", "", "invalid_api_key");
}

ApiError ModelNotFound(std::string_view model) {
  return MakeError(404, "The model '" + TruncateForMessage(model) + "' does not exist.", "model",
                   "model_not_found");
}

ApiError SessionNotFound(std::string_view session_id) {
  return MakeError(404, "No session found with id '" + TruncateForMessage(session_id) + "'.",
                   "session_id", "session_not_found");
}

ApiError ResponseNotFound(std::string_view response_id) {
  return MakeError(404, "No response found with id '" + TruncateForMessage(response_id) + "'.",
                   "response_id", "response_not_found");
}

ApiError SessionBusy(std::string_view session_id) {
  return MakeError(409,
                   "Session '" + TruncateForMessage(session_id) +
                       "' is busy with another request; retry when it has finished.",
                   "session_id", "session_busy");
}

ApiError BodyTooLarge(size_t limit_bytes) {
  return MakeError(
      413,
      "The request body is larger than the limit of " + std::to_string(limit_bytes) + " bytes.", "",
      "request_too_large");
}

ApiError QueueFull(std::string detail) {
  std::string m = "The server is at capacity: too many requests are waiting. Retry later.";
  if (!detail.empty()) m += " (" + detail + ")";
  return MakeError(429, std::move(m), "", "queue_full");
}

ApiError ShuttingDown() {
  return MakeError(503, "The server is shutting down.", "", "shutting_down");
}

ApiError Overloaded(std::string detail) {
  std::string m = "The server is overloaded. Retry later.";
  if (!detail.empty()) m += " (" + detail + ")";
  return MakeError(503, std::move(m), "", "overloaded");
}

ApiError ContextLengthExceeded(int64_t prompt_tokens, int64_t context_length) {
  return MakeError(400,
                   "This model's maximum context length is " + std::to_string(context_length) +
                       " tokens, but the prompt has " + std::to_string(prompt_tokens) +
                       " tokens. Shorten the conversation or start a new session.",
                   "messages", "context_length_exceeded");
}

ApiError InternalError(std::string message) {
  return MakeError(500, std::move(message), "", "internal_error");
}

ApiError ApiErrorFromStatus(const Status& status, StatusOrigin origin) {
  CHECK(!status.ok()) << "ApiErrorFromStatus(OK)";
  const std::string& m = status.message();
  switch (status.code()) {
    case StatusCode::kInvalidArgument: return MakeError(400, m, "", "invalid_value");
    case StatusCode::kNotFound: return MakeError(404, m, "", "not_found");
    case StatusCode::kUnimplemented: return MakeError(400, m, "", "unsupported_value");
    case StatusCode::kResourceExhausted:
      if (origin == StatusOrigin::kEngineSubmit) {
        if (m.rfind("overloaded", 0) == 0) return MakeError(429, m, "", "queue_full");
        return MakeError(400, m, "messages", "context_length_exceeded");
      }
      if (origin == StatusOrigin::kChatTemplate)
        return MakeError(400, m, "messages", "invalid_value");
      return MakeError(429, m, "", "rate_limit_exceeded");
    case StatusCode::kAborted: return MakeError(409, m, "", "conflict");
    case StatusCode::kFailedPrecondition:
      if (origin == StatusOrigin::kChatTemplate)
        return MakeError(400, m, "messages", "invalid_value");
      if (origin == StatusOrigin::kSession) return MakeError(409, m, "", "conflict");
      return MakeError(503, m, "", "unavailable");
    case StatusCode::kOk:  // unreachable (CHECK above)
    case StatusCode::kDataLoss:
    case StatusCode::kInternal:
    case StatusCode::kIo: break;
  }
  return MakeError(500, m, "", "internal_error");
}

}  // namespace mneme::api
