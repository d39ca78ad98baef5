// Sessions API bodies: create / fork requests, list query parameters, and
// the session, list and deletion objects.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/session_api.h"

namespace mneme::api {
namespace {

using nlohmann::json;

TEST(SessionCreateRequest, EmptyBodyIsAllDefaults) {
  for (const char* body : {"", "  \n", "{}"}) {
    auto r = ParseSessionCreateRequest(body);
    ASSERT_TRUE(r.ok()) << body;
    EXPECT_EQ(r->model, "");
    EXPECT_FALSE(r->system_prompt.has_value());
    EXPECT_TRUE(r->messages.empty());
    EXPECT_TRUE(r->metadata.empty());
    EXPECT_FALSE(r->ttl_seconds.has_value());
  }
}

TEST(SessionCreateRequest, AllFields) {
  auto r = ParseSessionCreateRequest(R"({"model":"m","system_prompt":"You are terse.",
      "messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}],
      "metadata":{"team":"a"},"ttl_seconds":3600})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->model, "m");
  EXPECT_EQ(r->system_prompt, "You are terse.");
  ASSERT_EQ(r->messages.size(), 2u);
  EXPECT_EQ(r->messages[1], (ChatMessage{"assistant", "Hello", "", ""}));
  EXPECT_EQ(r->metadata, (Metadata{{"team", "a"}}));
  EXPECT_EQ(r->ttl_seconds, 3600);
}

TEST(SessionCreateRequest, Errors) {
  struct Case {
    std::string body, param, code;
  } cases[] = {
      {R"({"system_prompt":1})", "system_prompt", "invalid_type"},
      {R"({"messages":{}})", "messages", "invalid_type"},
      {R"({"messages":[{"role":"bot","content":"x"}]})", "messages[0].role", "invalid_value"},
      {R"({"ttl_seconds":0})", "ttl_seconds", "invalid_value"},
      {R"({"ttl_seconds":"60"})", "ttl_seconds", "invalid_type"},
      {R"({"ttl_seconds":99999999999})", "ttl_seconds", "invalid_value"},
      {R"({"metadata":{"a":"1","b":"2","c":"3","d":"4","e":"5","f":"6","g":"7","h":"8",)"
       R"("i":"9","j":"10","k":"11","l":"12","m":"13","n":"14","o":"15","p":"16","q":"17"}})",
       "metadata", "invalid_value"},
      {R"({"metadata":{"k":")" + std::string(513, 'v') + R"("}})", "metadata.k", "invalid_value"},
      {R"({"metadata":{")" + std::string(65, 'k') + R"(":"v"}})", "metadata", "invalid_value"},
      {"[1]", "", "invalid_json"},
  };
  for (const Case& c : cases) {
    auto r = ParseSessionCreateRequest(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.error().http_status, 400);
    EXPECT_EQ(r.error().param, c.param) << c.body << ": " << r.error().message;
    EXPECT_EQ(r.error().code, c.code) << c.body << ": " << r.error().message;
  }
}

TEST(SessionForkRequest, Fields) {
  auto empty = ParseSessionForkRequest("");
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->message_count.has_value());
  EXPECT_FALSE(empty->metadata.has_value());
  auto r = ParseSessionForkRequest(R"({"message_count":2,"metadata":{},"ttl_seconds":60})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->message_count, 2);
  ASSERT_TRUE(r->metadata.has_value());
  EXPECT_TRUE(r->metadata->empty());
  EXPECT_EQ(r->ttl_seconds, 60);
  auto bad = ParseSessionForkRequest(R"({"message_count":-1})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().param, "message_count");
}

TEST(ListParams, DefaultsAndErrors) {
  auto d = ParseListParams(std::nullopt, std::nullopt, std::nullopt);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->limit, 20);
  EXPECT_EQ(d->after, "");
  EXPECT_TRUE(d->descending);
  auto p = ParseListParams("100", "sess_1", "asc");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->limit, 100);
  EXPECT_EQ(p->after, "sess_1");
  EXPECT_FALSE(p->descending);
  for (const char* bad : {"0", "101", "-1", "abc", "5x", ""}) {
    auto r = ParseListParams(bad, std::nullopt, std::nullopt);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().param, "limit");
  }
  EXPECT_EQ(ParseListParams(std::nullopt, "a b", std::nullopt).error().param, "after");
  EXPECT_EQ(ParseListParams(std::nullopt, std::nullopt, "up").error().param, "order");
}

SessionView View(const std::string& id) {
  SessionView s;
  s.id = id;
  s.created_at = 100;
  s.last_used_at = 200;
  s.expires_at = 3800;
  s.model = "m";
  s.message_count = 2;
  s.token_count = 57;
  s.metadata = {{"k", "v"}};
  s.messages = {{"user", "Hi", "", ""}, {"assistant", "Hello", "", ""}};
  return s;
}

TEST(SessionJson, Shape) {
  json expected = json::parse(R"({"id":"sess_1","object":"session","created_at":100,
      "last_used_at":200,"expires_at":3800,"model":"m","message_count":2,"token_count":57,
      "forked_from":null,"metadata":{"k":"v"},
      "messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"}]})");
  EXPECT_EQ(json::parse(SessionJson(View("sess_1"), true)), expected);
  expected.erase("messages");
  EXPECT_EQ(json::parse(SessionJson(View("sess_1"), false)), expected);
  SessionView no_ttl = View("sess_2");
  no_ttl.expires_at.reset();
  no_ttl.forked_from = "sess_1";
  json j = json::parse(SessionJson(no_ttl, false));
  EXPECT_TRUE(j["expires_at"].is_null());
  EXPECT_EQ(j["forked_from"], "sess_1");
}

TEST(SessionListJson, Shape) {
  std::vector<SessionView> page = {View("a"), View("b")};
  json j = json::parse(SessionListJson(page, true));
  EXPECT_EQ(j["object"], "list");
  ASSERT_EQ(j["data"].size(), 2u);
  EXPECT_EQ(j["data"][0]["id"], "a");
  EXPECT_FALSE(j["data"][0].contains("messages"));
  EXPECT_EQ(j["first_id"], "a");
  EXPECT_EQ(j["last_id"], "b");
  EXPECT_EQ(j["has_more"], true);
  json empty = json::parse(SessionListJson({}, false));
  EXPECT_EQ(empty,
            json::parse(
                R"({"object":"list","data":[],"first_id":null,"last_id":null,"has_more":false})"));
}

TEST(SessionDeletedJson, Shape) {
  EXPECT_EQ(json::parse(SessionDeletedJson("sess_1")),
            json::parse(R"({"id":"sess_1","object":"session.deleted","deleted":true})"));
}

TEST(IsValidSessionId, Charset) {
  EXPECT_TRUE(IsValidSessionId("sess_0123abcDEF-x.y:z"));
  EXPECT_FALSE(IsValidSessionId(""));
  EXPECT_FALSE(IsValidSessionId(std::string(129, 'a')));
  EXPECT_TRUE(IsValidSessionId(std::string(128, 'a')));
  EXPECT_FALSE(IsValidSessionId("a/b"));
  EXPECT_FALSE(IsValidSessionId("a\nb"));
  EXPECT_FALSE(IsValidSessionId("é"));
}

}  // namespace
}  // namespace mneme::api
