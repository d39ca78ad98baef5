// Error bodies in OpenAI's schema and the Status -> HTTP mapping.
#include "api/api_error.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace mneme::api {
namespace {

TEST(ErrorBody, HasOpenAiShape) {
  ApiError e = InvalidRequest("messages[2].role", "Invalid value for 'messages[2].role'.");
  nlohmann::json j = nlohmann::json::parse(ErrorBody(e));
  ASSERT_TRUE(j.contains("error"));
  ASSERT_EQ(j.size(), 1u);
  const auto& err = j["error"];
  EXPECT_EQ(err["message"], "Invalid value for 'messages[2].role'.");
  EXPECT_EQ(err["type"], "invalid_request_error");
  EXPECT_EQ(err["param"], "messages[2].role");
  EXPECT_EQ(err["code"], "invalid_value");
  EXPECT_EQ(e.http_status, 400);
}

TEST(ErrorBody, EmptyParamAndCodeAreNull) {
  ApiError e = MakeError(500, "boom");
  nlohmann::json j = nlohmann::json::parse(ErrorBody(e));
  EXPECT_TRUE(j["error"]["param"].is_null());
  EXPECT_TRUE(j["error"]["code"].is_null());
  EXPECT_EQ(j["error"]["type"], "server_error");
}

TEST(ErrorBody, InvalidUtf8InMessageStillGivesJson) {
  ApiError e = MakeError(400, std::string("bad \xff byte"));
  nlohmann::json j = nlohmann::json::parse(ErrorBody(e));
  EXPECT_EQ(j["error"]["message"], "bad \xEF\xBF\xBD byte");
}

TEST(ErrorTypeForStatus, FollowsOpenAi) {
  EXPECT_EQ(ErrorTypeForStatus(400), "invalid_request_error");
  EXPECT_EQ(ErrorTypeForStatus(401), "authentication_error");
  EXPECT_EQ(ErrorTypeForStatus(403), "permission_error");
  EXPECT_EQ(ErrorTypeForStatus(404), "invalid_request_error");
  EXPECT_EQ(ErrorTypeForStatus(409), "invalid_request_error");
  EXPECT_EQ(ErrorTypeForStatus(413), "invalid_request_error");
  EXPECT_EQ(ErrorTypeForStatus(429), "rate_limit_error");
  EXPECT_EQ(ErrorTypeForStatus(500), "server_error");
  EXPECT_EQ(ErrorTypeForStatus(503), "server_error");
}

TEST(Factories, StatusesAndCodes) {
  struct Case {
    ApiError e;
    int status;
    const char* code;
  } cases[] = {
      {Unauthorized(false), 401, "missing_api_key"},
      {Unauthorized(true), 401, "invalid_api_key"},
      {ModelNotFound("gpt-9"), 404, "model_not_found"},
      {SessionNotFound("s1"), 404, "session_not_found"},
      {ResponseNotFound("resp_1"), 404, "response_not_found"},
      {SessionBusy("s1"), 409, "session_busy"},
      {BodyTooLarge(1 << 20), 413, "request_too_large"},
      {QueueFull(), 429, "queue_full"},
      {ShuttingDown(), 503, "shutting_down"},
      {Overloaded(), 503, "overloaded"},
      {ContextLengthExceeded(5000, 4096), 400, "context_length_exceeded"},
      {InternalError("x"), 500, "internal_error"},
      {InvalidJson("x"), 400, "invalid_json"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.e.http_status, c.status) << c.code;
    EXPECT_EQ(c.e.code, c.code);
    EXPECT_EQ(c.e.type, ErrorTypeForStatus(c.status)) << c.code;
    EXPECT_FALSE(c.e.message.empty()) << c.code;
  }
  EXPECT_NE(ModelNotFound("gpt-9").message.find("gpt-9"), std::string::npos);
  EXPECT_NE(ContextLengthExceeded(5000, 4096).message.find("4096"), std::string::npos);
  EXPECT_EQ(ModelNotFound("m").param, "model");
}

TEST(ApiErrorFromStatus, Table) {
  using O = StatusOrigin;
  struct Case {
    Status s;
    O origin;
    int http;
    const char* code;
  } cases[] = {
      {InvalidArgument("x"), O::kGeneric, 400, "invalid_value"},
      {NotFound("x"), O::kSession, 404, "not_found"},
      {Unimplemented("x"), O::kGeneric, 400, "unsupported_value"},
      {ResourceExhausted("overloaded: 256 requests are waiting"), O::kEngineSubmit, 429,
       "queue_full"},
      {ResourceExhausted("the prompt needs 99 blocks"), O::kEngineSubmit, 400,
       "context_length_exceeded"},
      {ResourceExhausted("template rendering exceeded its work budget"), O::kChatTemplate, 400,
       "invalid_value"},
      {ResourceExhausted("x"), O::kGeneric, 429, "rate_limit_exceeded"},
      {Aborted("busy"), O::kSession, 409, "conflict"},
      {FailedPrecondition("the engine is shutting down"), O::kEngineSubmit, 503, "unavailable"},
      {FailedPrecondition("Conversation roles must alternate"), O::kChatTemplate, 400,
       "invalid_value"},
      {FailedPrecondition("x"), O::kSession, 409, "conflict"},
      {DataLoss("x"), O::kGeneric, 500, "internal_error"},
      {Internal("x"), O::kGeneric, 500, "internal_error"},
      {IoError("x"), O::kGeneric, 500, "internal_error"},
  };
  for (const Case& c : cases) {
    ApiError e = ApiErrorFromStatus(c.s, c.origin);
    EXPECT_EQ(e.http_status, c.http) << c.s.ToString();
    EXPECT_EQ(e.code, c.code) << c.s.ToString();
    EXPECT_EQ(e.message, c.s.message());
    EXPECT_EQ(e.type, ErrorTypeForStatus(c.http));
  }
}

TEST(ApiResult, HoldsValueOrError) {
  ApiResult<int> v = 5;
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v.value(), 5);
  ApiResult<int> e = InvalidRequest("p", "m");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().param, "p");
}

}  // namespace
}  // namespace mneme::api
