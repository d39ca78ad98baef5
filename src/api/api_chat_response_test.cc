// chat.completion objects, chunk streams and the legacy text_completion
// shapes, checked against OpenAI's documented schema (expected objects are
// written out by hand here, then compared as parsed JSON).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/chat_response.h"
#include "api/completion_response.h"
#include "api/model_list.h"
#include "api/sse.h"
#include "api/sse_test_util.h"

namespace mneme::api {
namespace {

using nlohmann::json;
using testing::Data;
using testing::SplitSse;

TEST(ChatCompletionJson, MatchesOpenAiSchema) {
  ChatCompletionResult r;
  r.id = "chatcmpl-abc";
  r.created = 1700000000;
  r.model = "m";
  r.content = "Hello";
  r.finish_reason = FinishReason::kStop;
  r.usage = {.prompt_tokens = 10, .completion_tokens = 2, .cached_tokens = 8};
  json expected = json::parse(R"({
    "id": "chatcmpl-abc", "object": "chat.completion", "created": 1700000000, "model": "m",
    "choices": [{"index": 0,
                 "message": {"role": "assistant", "content": "Hello", "refusal": null},
                 "logprobs": null, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12,
              "prompt_tokens_details": {"cached_tokens": 8},
              "completion_tokens_details": {"reasoning_tokens": 0}}})");
  EXPECT_EQ(json::parse(ChatCompletionJson(r)), expected);

  r.session_id = "sess_1";
  r.finish_reason = FinishReason::kLength;
  expected["session_id"] = "sess_1";
  expected["choices"][0]["finish_reason"] = "length";
  EXPECT_EQ(json::parse(ChatCompletionJson(r)), expected);
}

TEST(ChatCompletionJson, InvalidUtf8ContentStillSerializes) {
  ChatCompletionResult r;
  r.content = std::string("caf\xC3");  // a token boundary cut "é" in half
  json j = json::parse(ChatCompletionJson(r));
  EXPECT_EQ(j["choices"][0]["message"]["content"], "caf\xEF\xBF\xBD");
}

StreamHeader Header(bool include_usage) {
  return StreamHeader{.id = "chatcmpl-s",
                      .created = 1700000001,
                      .model = "m",
                      .session_id = "sess_9",
                      .include_usage = include_usage};
}

TEST(ChatStreamEncoder, ChunkSequence) {
  ChatStreamEncoder enc(Header(false));
  std::string stream = enc.Start();
  for (const char* piece : {"Hel", "", "lo", " wörld"}) stream += enc.Delta(piece);
  stream += enc.Finish(FinishReason::kStop, Usage{5, 3, 4});

  auto frames = SplitSse(stream);
  // start, 3 non-empty deltas, finish chunk, [DONE]
  ASSERT_EQ(frames.size(), 6u);
  EXPECT_EQ(frames.back().data, "[DONE]");
  std::string content;
  for (size_t i = 0; i + 1 < frames.size(); ++i) {
    EXPECT_EQ(frames[i].event, "");
    json c = Data(frames[i]);
    EXPECT_EQ(c["id"], "chatcmpl-s");
    EXPECT_EQ(c["object"], "chat.completion.chunk");
    EXPECT_EQ(c["created"], 1700000001);
    EXPECT_EQ(c["model"], "m");
    EXPECT_EQ(c["session_id"], "sess_9");
    EXPECT_FALSE(c.contains("usage"));  // only with include_usage
    ASSERT_EQ(c["choices"].size(), 1u);
    const json& ch = c["choices"][0];
    EXPECT_EQ(ch["index"], 0);
    EXPECT_TRUE(ch["logprobs"].is_null());
    if (i == 0) {
      EXPECT_EQ(ch["delta"], json::parse(R"({"role":"assistant","content":""})"));
    }
    if (i + 2 < frames.size()) {
      EXPECT_TRUE(ch["finish_reason"].is_null()) << i;
    } else {
      EXPECT_EQ(ch["delta"], json::object());
      EXPECT_EQ(ch["finish_reason"], "stop");
    }
    if (ch["delta"].contains("content")) content += ch["delta"]["content"].get<std::string>();
  }
  EXPECT_EQ(content, "Hello wörld");
}

TEST(ChatStreamEncoder, IncludeUsageAddsAUsageChunk) {
  ChatStreamEncoder enc(Header(true));
  std::string stream = enc.Start() + enc.Delta("x") + enc.Finish(FinishReason::kLength, {7, 1, 6});
  auto frames = SplitSse(stream);
  ASSERT_EQ(frames.size(), 5u);  // start, delta, finish, usage, [DONE]
  for (size_t i = 0; i < 3; ++i) {
    json c = Data(frames[i]);
    ASSERT_TRUE(c.contains("usage")) << i;
    EXPECT_TRUE(c["usage"].is_null()) << i;
  }
  EXPECT_EQ(Data(frames[2])["choices"][0]["finish_reason"], "length");
  json u = Data(frames[3]);
  EXPECT_EQ(u["choices"], json::array());
  EXPECT_EQ(u["usage"], json::parse(R"({"prompt_tokens":7,"completion_tokens":1,
      "total_tokens":8,"prompt_tokens_details":{"cached_tokens":6},
      "completion_tokens_details":{"reasoning_tokens":0}})"));
  EXPECT_EQ(frames[4].data, "[DONE]");
}

TEST(ChatStreamEncoder, ErrorEvent) {
  auto frames = SplitSse(ChatStreamEncoder::Error(InternalError("engine failed")));
  ASSERT_EQ(frames.size(), 1u);
  json e = Data(frames[0]);
  EXPECT_EQ(e["error"]["message"], "engine failed");
  EXPECT_EQ(e["error"]["type"], "server_error");
}

TEST(Sse, Framing) {
  EXPECT_EQ(SseData("{}"), "data: {}\n\n");
  EXPECT_EQ(SseDone(), "data: [DONE]\n\n");
  EXPECT_EQ(SseEvent("response.created", "{}"), "event: response.created\ndata: {}\n\n");
}

TEST(CompletionJson, MatchesOpenAiSchema) {
  CompletionResult r{.id = "cmpl-1",
                     .created = 1700000002,
                     .model = "m",
                     .text = " there",
                     .finish_reason = FinishReason::kLength,
                     .usage = {.prompt_tokens = 3, .completion_tokens = 16, .cached_tokens = 0}};
  json expected = json::parse(R"({
    "id": "cmpl-1", "object": "text_completion", "created": 1700000002, "model": "m",
    "choices": [{"text": " there", "index": 0, "logprobs": null, "finish_reason": "length"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 16, "total_tokens": 19,
              "prompt_tokens_details": {"cached_tokens": 0},
              "completion_tokens_details": {"reasoning_tokens": 0}}})");
  EXPECT_EQ(json::parse(CompletionJson(r)), expected);
}

TEST(CompletionStreamEncoder, ChunkSequence) {
  CompletionStreamEncoder enc(StreamHeader{.id = "cmpl-2",
                                           .created = 5,
                                           .model = "m",
                                           .session_id = std::nullopt,
                                           .include_usage = true});
  std::string stream = enc.Delta("a") + enc.Delta("") + enc.Delta("b") +
                       enc.Finish(FinishReason::kStop, Usage{1, 2, 0});
  auto frames = SplitSse(stream);
  ASSERT_EQ(frames.size(), 5u);  // a, b, finish, usage, [DONE]
  std::string text;
  for (size_t i = 0; i < 3; ++i) {
    json c = Data(frames[i]);
    EXPECT_EQ(c["object"], "text_completion");
    EXPECT_EQ(c["id"], "cmpl-2");
    EXPECT_TRUE(c["usage"].is_null());
    text += c["choices"][0]["text"].get<std::string>();
    EXPECT_EQ(c["choices"][0]["finish_reason"].is_null(), i < 2);
  }
  EXPECT_EQ(text, "ab");
  EXPECT_EQ(Data(frames[2])["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(Data(frames[3])["usage"]["total_tokens"], 3);
  EXPECT_EQ(frames[4].data, "[DONE]");
}

TEST(ModelList, MatchesOpenAiSchema) {
  ModelInfo models[] = {{"a", 1, "mneme"}, {"b", 2, "mneme"}};
  EXPECT_EQ(json::parse(ModelListJson(models)), json::parse(R"({"object":"list","data":[
      {"id":"a","object":"model","created":1,"owned_by":"mneme"},
      {"id":"b","object":"model","created":2,"owned_by":"mneme"}]})"));
  EXPECT_EQ(json::parse(ModelJson(models[0])),
            json::parse(R"({"id":"a","object":"model","created":1,"owned_by":"mneme"})"));
  EXPECT_EQ(json::parse(ModelListJson({})), json::parse(R"({"object":"list","data":[]})"));
}

}  // namespace
}  // namespace mneme::api
