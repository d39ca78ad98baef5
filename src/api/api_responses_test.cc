// The Responses API: request parsing, the response object, deletion, and
// the streaming event sequence (names and payloads as in OpenAI's SDK types:
// ResponseCreatedEvent, ResponseTextDeltaEvent, ... each with sequence_number).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/responses_object.h"
#include "api/responses_request.h"
#include "api/sse_test_util.h"

namespace mneme::api {
namespace {

using nlohmann::json;
using testing::Data;
using testing::SplitSse;

ResponsesRequest ParseOk(const std::string& body) {
  auto r = ParseResponsesRequest(body);
  EXPECT_TRUE(r.ok()) << body << " -> " << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r).value() : ResponsesRequest{};
}

TEST(ResponsesRequest, StringInput) {
  ResponsesRequest r = ParseOk(R"({"model":"m","input":"Hi"})");
  EXPECT_EQ(r.model, "m");
  ASSERT_EQ(r.input.size(), 1u);
  EXPECT_EQ(r.input[0], (ChatMessage{"user", "Hi", "", ""}));
  EXPECT_TRUE(r.store);  // OpenAI's default
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.instructions.has_value());
  EXPECT_FALSE(r.previous_response_id.has_value());
  EXPECT_FALSE(r.max_output_tokens.has_value());
}

TEST(ResponsesRequest, ItemsAndOptions) {
  ResponsesRequest r = ParseOk(R"({
    "model": "m",
    "input": [
      {"role": "developer", "content": "Rules."},
      {"type": "message", "role": "user",
       "content": [{"type": "input_text", "text": "a"}, {"type": "input_text", "text": "b"}]},
      {"type": "message", "role": "assistant",
       "content": [{"type": "output_text", "text": "c"}]},
      {"role": "user", "content": "d"}
    ],
    "instructions": "Be brief.", "previous_response_id": "resp_1", "store": false,
    "stream": true, "max_output_tokens": 50, "temperature": 0.2, "top_p": 0.9,
    "metadata": {"a": "b"}, "user": "u", "truncation": "disabled",
    "text": {"format": {"type": "text"}}, "tools": [], "tool_choice": "auto",
    "parallel_tool_calls": true, "reasoning": {}, "include": []
  })");
  ASSERT_EQ(r.input.size(), 4u);
  EXPECT_EQ(r.input[0], (ChatMessage{"developer", "Rules.", "", ""}));
  EXPECT_EQ(r.input[1], (ChatMessage{"user", "a\nb", "", ""}));
  EXPECT_EQ(r.input[2], (ChatMessage{"assistant", "c", "", ""}));
  EXPECT_EQ(r.input[3], (ChatMessage{"user", "d", "", ""}));
  EXPECT_EQ(r.instructions, "Be brief.");
  EXPECT_EQ(r.previous_response_id, "resp_1");
  EXPECT_FALSE(r.store);
  EXPECT_TRUE(r.stream);
  EXPECT_EQ(r.max_output_tokens, 50);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.2f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
  EXPECT_EQ(r.metadata, (Metadata{{"a", "b"}}));
  EXPECT_EQ(r.user, "u");
}

TEST(ResponsesRequest, Errors) {
  struct Case {
    std::string body, param, code;
  } cases[] = {
      {R"({"model":"m"})", "input", "missing_required_parameter"},
      {R"({"input":5})", "input", "invalid_type"},
      {R"({"input":[]})", "input", "empty_array"},
      {R"({"input":["x"]})", "input[0]", "invalid_type"},
      {R"({"input":[{"content":"x"}]})", "input[0].role", "missing_required_parameter"},
      {R"({"input":[{"role":"tool","content":"x"}]})", "input[0].role", "invalid_value"},
      {R"({"input":[{"role":"user"}]})", "input[0].content", "missing_required_parameter"},
      {R"({"input":[{"type":"function_call_output","call_id":"c","output":"x"}]})", "input[0].type",
       "unsupported_value"},
      {R"({"input":[{"role":"user","content":[{"type":"input_image","image_url":"x"}]}]})",
       "input[0].content[0].type", "unsupported_value"},
      {R"({"input":[{"role":"user","content":[{"type":"text","text":"x"}]}]})",
       "input[0].content[0].type", "invalid_value"},
      {R"({"input":"x","instructions":5})", "instructions", "invalid_type"},
      {R"({"input":"x","previous_response_id":""})", "previous_response_id", "invalid_value"},
      {R"({"input":"x","store":"no"})", "store", "invalid_type"},
      {R"({"input":"x","max_output_tokens":0})", "max_output_tokens", "invalid_value"},
      {R"({"input":"x","temperature":5})", "temperature", "invalid_value"},
      {R"({"input":"x","background":true})", "background", "unsupported_value"},
      {R"({"input":"x","conversation":"conv_1"})", "conversation", "unsupported_value"},
      {R"({"input":"x","text":{"format":{"type":"json_schema"}}})", "text.format.type",
       "unsupported_value"},
      {R"({"input":"x","tools":[{"type":"web_search"}]})", "tools", "unsupported_value"},
      {R"({"input":"x","truncation":"middle"})", "truncation", "invalid_value"},
  };
  for (const Case& c : cases) {
    auto r = ParseResponsesRequest(c.body);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_EQ(r.error().http_status, 400);
    EXPECT_EQ(r.error().param, c.param) << c.body << ": " << r.error().message;
    EXPECT_EQ(r.error().code, c.code) << c.body << ": " << r.error().message;
  }
}

TEST(ResponsesConversation, InstructionsFirstThenHistoryThenInput) {
  ResponsesRequest r = ParseOk(R"({"input":"Q2","instructions":"Be brief."})");
  std::vector<ChatMessage> history = {{"user", "Q1", "", ""}, {"assistant", "A1", "", ""}};
  std::vector<ChatMessage> expected = {{"system", "Be brief.", "", ""},
                                       {"user", "Q1", "", ""},
                                       {"assistant", "A1", "", ""},
                                       {"user", "Q2", "", ""}};
  EXPECT_EQ(ResponsesConversation(r, history), expected);
  r.instructions.reset();
  expected.erase(expected.begin());
  EXPECT_EQ(ResponsesConversation(r, history), expected);
}

ResponseObject Created() {
  ResponseObject r;
  r.id = "resp_1";
  r.message_id = "msg_1";
  r.created_at = 1700000000;
  r.model = "m";
  r.instructions = "Be brief.";
  r.previous_response_id = "resp_0";
  r.max_output_tokens = 100;
  r.temperature = 0.5;
  r.metadata = {{"k", "v"}};
  return r;
}

TEST(ResponseJson, CompletedMatchesOpenAiSchema) {
  ResponseObject r = Created();
  r.status = ResponseStatus::kCompleted;
  r.output_text = "Hi!";
  r.usage = Usage{.prompt_tokens = 20, .completion_tokens = 3, .cached_tokens = 16};
  json j = json::parse(ResponseJson(r));
  json expected = json::parse(R"({
    "id": "resp_1", "object": "response", "created_at": 1700000000, "status": "completed",
    "error": null, "incomplete_details": null, "instructions": "Be brief.",
    "max_output_tokens": 100, "model": "m",
    "output": [{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": "Hi!", "annotations": [],
                             "logprobs": []}]}],
    "output_text": "Hi!", "parallel_tool_calls": false, "previous_response_id": "resp_0",
    "store": true, "temperature": 0.5, "text": {"format": {"type": "text"}},
    "tool_choice": "none", "tools": [], "top_p": 1.0, "truncation": "disabled",
    "usage": {"input_tokens": 20, "input_tokens_details": {"cached_tokens": 16},
              "output_tokens": 3, "output_tokens_details": {"reasoning_tokens": 0},
              "total_tokens": 23},
    "user": null, "metadata": {"k": "v"}})");
  EXPECT_EQ(j, expected) << j.dump(2);
}

TEST(ResponseJson, IncompleteAndFailed) {
  ResponseObject r = Created();
  r.status = ResponseStatus::kIncomplete;
  r.output_text = "cut";
  json j = json::parse(ResponseJson(r));
  EXPECT_EQ(j["status"], "incomplete");
  EXPECT_EQ(j["incomplete_details"], json::parse(R"({"reason":"max_output_tokens"})"));
  EXPECT_EQ(j["output"][0]["status"], "incomplete");

  r.status = ResponseStatus::kFailed;
  r.output_text = "";
  r.error_message = "boom";
  j = json::parse(ResponseJson(r));
  EXPECT_EQ(j["status"], "failed");
  EXPECT_EQ(j["error"], json::parse(R"({"code":"server_error","message":"boom"})"));
  EXPECT_EQ(j["output"], json::array());
}

TEST(ResponseDeletedJson, Shape) {
  EXPECT_EQ(json::parse(ResponseDeletedJson("resp_1")),
            json::parse(R"({"id":"resp_1","object":"response","deleted":true})"));
}

TEST(ResponseStreamEncoder, CompletedSequence) {
  ResponseStreamEncoder enc(Created());
  std::string stream = enc.Start();
  stream += enc.Delta("Hel");
  stream += enc.Delta("");
  stream += enc.Delta("lo");
  ResponseObject done = Created();
  done.status = ResponseStatus::kCompleted;
  done.output_text = "Hello";
  done.usage = Usage{4, 2, 0};
  stream += enc.Finish(done);

  auto frames = SplitSse(stream);
  const std::vector<std::string> kTypes = {
      "response.created",           "response.in_progress",
      "response.output_item.added", "response.content_part.added",
      "response.output_text.delta", "response.output_text.delta",
      "response.output_text.done",  "response.content_part.done",
      "response.output_item.done",  "response.completed"};
  ASSERT_EQ(frames.size(), kTypes.size());
  std::string deltas;
  for (size_t i = 0; i < frames.size(); ++i) {
    json e = Data(frames[i]);
    EXPECT_EQ(frames[i].event, kTypes[i]);
    EXPECT_EQ(e["type"], kTypes[i]);
    EXPECT_EQ(e["sequence_number"], i);
    if (kTypes[i] == "response.output_text.delta") {
      EXPECT_EQ(e["item_id"], "msg_1");
      EXPECT_EQ(e["output_index"], 0);
      EXPECT_EQ(e["content_index"], 0);
      deltas += e["delta"].get<std::string>();
    }
  }
  EXPECT_EQ(deltas, "Hello");
  json created = Data(frames[0])["response"];
  EXPECT_EQ(created["status"], "in_progress");
  EXPECT_EQ(created["output"], json::array());
  EXPECT_TRUE(created["usage"].is_null());
  json added = Data(frames[2]);
  EXPECT_EQ(added["output_index"], 0);
  EXPECT_EQ(added["item"], json::parse(R"({"type":"message","id":"msg_1",
      "status":"in_progress","role":"assistant","content":[]})"));
  EXPECT_EQ(Data(frames[3])["part"],
            json::parse(R"({"type":"output_text","text":"","annotations":[],"logprobs":[]})"));
  EXPECT_EQ(Data(frames[6])["text"], "Hello");
  EXPECT_EQ(Data(frames[7])["part"]["text"], "Hello");
  EXPECT_EQ(Data(frames[8])["item"]["status"], "completed");
  EXPECT_EQ(Data(frames[8])["item"]["content"][0]["text"], "Hello");
  json completed = Data(frames[9])["response"];
  EXPECT_EQ(completed["status"], "completed");
  EXPECT_EQ(completed["output"][0]["content"][0]["text"], "Hello");
  EXPECT_EQ(completed["usage"]["total_tokens"], 6);
  EXPECT_EQ(enc.sequence_number(), 10);
}

TEST(ResponseStreamEncoder, IncompleteEndsWithResponseIncomplete) {
  ResponseStreamEncoder enc(Created());
  std::string stream = enc.Start();  // one call per statement: the encoder counts events
  stream += enc.Delta("x");
  ResponseObject done = Created();
  done.status = StatusForFinish(FinishReason::kLength);
  done.output_text = "x";
  done.usage = Usage{1, 1, 0};
  stream += enc.Finish(done);
  auto frames = SplitSse(stream);
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames.back().event, "response.incomplete");
  json r = Data(frames.back())["response"];
  EXPECT_EQ(r["status"], "incomplete");
  EXPECT_EQ(r["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(Data(frames[frames.size() - 2])["item"]["status"], "incomplete");
}

TEST(ResponseStreamEncoder, Fail) {
  ResponseStreamEncoder enc(Created());
  std::string stream = enc.Start();
  stream += enc.Fail(InternalError("engine stopped"));
  auto frames = SplitSse(stream);
  ASSERT_EQ(frames.size(), 5u);
  EXPECT_EQ(frames.back().event, "response.failed");
  json r = Data(frames.back());
  EXPECT_EQ(r["sequence_number"], 4);
  EXPECT_EQ(r["response"]["status"], "failed");
  EXPECT_EQ(r["response"]["error"]["code"], "internal_error");
  EXPECT_EQ(r["response"]["error"]["message"], "engine stopped");
}

}  // namespace
}  // namespace mneme::api
