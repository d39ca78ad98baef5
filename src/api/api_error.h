// ApiError: every failure the OpenAI-compatible API answers, in OpenAI's
// error schema, and the one place that decides which HTTP status a
// mneme::Status becomes.
//
//   {"error": {"message": "...", "type": "invalid_request_error",
//              "param": "messages[2].role", "code": "invalid_value"}}
//
// `param` names the offending request field by its path (dots for object
// keys, [i] for array elements), null when no single field is to blame.
// Parsers in this folder return ApiResult<T>: a typed request or the ApiError
// to send. Nothing here throws; ErrorBody() is valid JSON whatever bytes the
// message holds (invalid UTF-8 becomes U+FFFD).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "util/check.h"
#include "util/status.h"

namespace mneme::api {

struct ApiError {
  int http_status = 400;
  std::string type = "invalid_request_error";  // see ErrorTypeForStatus
  std::string message;
  std::string param;  // "" -> null
  std::string code;   // "" -> null
};

// OpenAI's error "type" for a status, as the http layer uses it too:
// 401 authentication_error, 403 permission_error, 429 rate_limit_error, other
// 4xx invalid_request_error (OpenAI answers 404 with that type as well),
// 5xx server_error.
std::string_view ErrorTypeForStatus(int http_status);

// The JSON body for `error` (compact, one line).
std::string ErrorBody(const ApiError& error);

// Factories for the errors the server answers. `code` strings follow OpenAI
// where OpenAI has one (invalid_type, missing_required_parameter,
// invalid_value, unsupported_value, model_not_found, invalid_api_key,
// context_length_exceeded); the rest are ours.
ApiError MakeError(int http_status, std::string message, std::string param = "",
                   std::string code = "");
// 400 about one field.
ApiError InvalidRequest(std::string param, std::string message, std::string code = "invalid_value");
// 400: the body is not JSON (or not an object, or nested too deeply).
ApiError InvalidJson(std::string detail);
// 401: `provided` says whether the request carried a key at all.
ApiError Unauthorized(bool provided);
// 404s.
ApiError ModelNotFound(std::string_view model);
ApiError SessionNotFound(std::string_view session_id);
ApiError ResponseNotFound(std::string_view response_id);
// 409: another turn of this session is running.
ApiError SessionBusy(std::string_view session_id);
// 413: the body is over `limit_bytes`.
ApiError BodyTooLarge(size_t limit_bytes);
// 429: the engine's queue is full.
ApiError QueueFull(std::string detail = "");
// 503s.
ApiError ShuttingDown();
ApiError Overloaded(std::string detail = "");
// 400: the prompt plus the requested output do not fit the model's context.
ApiError ContextLengthExceeded(int64_t prompt_tokens, int64_t context_length);
// 500.
ApiError InternalError(std::string message);

// Where a Status came from: the same code means different things in
// different modules (RESOURCE_EXHAUSTED is "queue full" from the engine but
// "budget exceeded" from a chat template).
enum class StatusOrigin {
  kGeneric,
  kEngineSubmit,  // EngineService::Submit
  kChatTemplate,  // ChatTemplate::Render, tokenizing the rendered prompt
  kSession,       // the session store
};

// Maps a non-OK Status to the error sent. The table (docs/api.md):
//   INVALID_ARGUMENT     400 invalid_value
//   NOT_FOUND            404 not_found
//   UNIMPLEMENTED        400 unsupported_value
//   RESOURCE_EXHAUSTED   kEngineSubmit: 429 queue_full when the message
//                        starts with "overloaded", else 400
//                        context_length_exceeded (the prompt can never fit);
//                        kChatTemplate: 400; otherwise 429 rate_limit
//   ABORTED              409 conflict (a busy session, a stale version)
//   FAILED_PRECONDITION  kChatTemplate: 400 (the template refused the
//                        conversation, e.g. roles that do not alternate);
//                        kSession: 409 conflict; otherwise 503 unavailable
//                        (EngineService::Submit after Stop: shutting down)
//   DATA_LOSS, INTERNAL, IO, anything else   500 server_error
// The message is the Status message. OK is a caller bug (CHECK).
ApiError ApiErrorFromStatus(const Status& status, StatusOrigin origin = StatusOrigin::kGeneric);

// Either a T or the ApiError to answer with.
template <typename T>
class [[nodiscard]] ApiResult {
 public:
  ApiResult(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  ApiResult(ApiError error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  const ApiError& error() const {
    CHECK(!ok()) << "ApiResult::error() on a value";
    return std::get<ApiError>(v_);
  }
  T& value() & {
    CHECK(ok()) << error().message;
    return std::get<T>(v_);
  }
  const T& value() const& {
    CHECK(ok()) << error().message;
    return std::get<T>(v_);
  }
  T&& value() && {
    CHECK(ok()) << error().message;
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, ApiError> v_;
};

}  // namespace mneme::api
