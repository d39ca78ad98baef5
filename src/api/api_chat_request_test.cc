// POST /v1/chat/completions bodies: typed values from valid requests, a 400
// naming the right field for each invalid one, and no crash on anything.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "api/chat_request.h"
#include "model/sampler.h"

namespace mneme::api {
namespace {

ChatCompletionRequest ParseOk(const std::string& body, const ParseOptions& options = {}) {
  auto r = ParseChatCompletionRequest(body, options);
  EXPECT_TRUE(r.ok()) << body << "\n-> " << (r.ok() ? "" : ErrorBody(r.error()));
  return r.ok() ? std::move(r).value() : ChatCompletionRequest{};
}

ApiError ParseErr(const std::string& body, const ParseOptions& options = {}) {
  auto r = ParseChatCompletionRequest(body, options);
  EXPECT_FALSE(r.ok()) << body;
  return r.ok() ? ApiError{} : r.error();
}

// A minimal valid body with `extra` fields spliced in.
std::string Body(const std::string& extra) {
  std::string b = R"({"model":"m","messages":[{"role":"user","content":"Hi"}])";
  if (!extra.empty()) b += "," + extra;
  return b + "}";
}

TEST(ChatRequest, MinimalDefaults) {
  ChatCompletionRequest req = ParseOk(Body(""));
  EXPECT_EQ(req.model, "m");
  ASSERT_EQ(req.messages.size(), 1u);
  EXPECT_EQ(req.messages[0], (ChatMessage{"user", "Hi", "", ""}));
  EXPECT_FALSE(req.max_tokens.has_value());
  EXPECT_FALSE(req.stream);
  EXPECT_FALSE(req.include_usage);
  EXPECT_FALSE(req.session_id.has_value());
  SamplingParams defaults;
  EXPECT_EQ(req.sampling.temperature, defaults.temperature);
  EXPECT_EQ(req.sampling.top_p, defaults.top_p);
  EXPECT_TRUE(req.sampling.stop.empty());
  EXPECT_FALSE(req.sampling.seed.has_value());
}

TEST(ChatRequest, FullRequest) {
  ChatCompletionRequest req = ParseOk(R"({
    "model": "qwen",
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "developer", "content": "No emojis."},
      {"role": "user", "content": [{"type": "text", "text": "Line one"},
                                   {"type": "text", "text": "Line two"}], "name": "ann"},
      {"role": "assistant", "content": null},
      {"role": "tool", "content": "42", "tool_call_id": "call_1"}
    ],
    "max_tokens": 64, "temperature": 0.25, "top_p": 0.5, "seed": 7,
    "presence_penalty": -1.5, "frequency_penalty": 2, "stop": ["\n\n", "END"],
    "logit_bias": {"15": -100, "7": 2.5},
    "stream": true, "stream_options": {"include_usage": true},
    "n": 1, "session_id": "sess_abc-1", "user": "u-1",
    "metadata": {"k": "v"},
    "top_k": 40, "min_p": 0.05, "repetition_penalty": 1.1, "ignore_eos": true
  })",
                                      ParseOptions{.vocab_size = 100});
  EXPECT_EQ(req.model, "qwen");
  ASSERT_EQ(req.messages.size(), 5u);
  EXPECT_EQ(req.messages[0], (ChatMessage{"system", "Be brief.", "", ""}));
  EXPECT_EQ(req.messages[1], (ChatMessage{"developer", "No emojis.", "", ""}));
  EXPECT_EQ(req.messages[2], (ChatMessage{"user", "Line one\nLine two", "ann", ""}));
  EXPECT_EQ(req.messages[3], (ChatMessage{"assistant", "", "", ""}));
  EXPECT_EQ(req.messages[4], (ChatMessage{"tool", "42", "", "call_1"}));
  EXPECT_EQ(req.max_tokens, 64);
  EXPECT_FLOAT_EQ(req.sampling.temperature, 0.25f);
  EXPECT_FLOAT_EQ(req.sampling.top_p, 0.5f);
  EXPECT_EQ(req.sampling.seed, 7u);
  EXPECT_FLOAT_EQ(req.sampling.presence_penalty, -1.5f);
  EXPECT_FLOAT_EQ(req.sampling.frequency_penalty, 2.0f);
  EXPECT_EQ(req.sampling.stop, (std::vector<std::string>{"\n\n", "END"}));
  ASSERT_EQ(req.sampling.logit_bias.size(), 2u);
  EXPECT_FLOAT_EQ(req.sampling.logit_bias.at(15), -100.0f);
  EXPECT_FLOAT_EQ(req.sampling.logit_bias.at(7), 2.5f);
  EXPECT_TRUE(req.stream);
  EXPECT_TRUE(req.include_usage);
  EXPECT_EQ(req.session_id, "sess_abc-1");
  EXPECT_EQ(req.user, "u-1");
  EXPECT_EQ(req.metadata, (Metadata{{"k", "v"}}));
  EXPECT_EQ(req.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(req.sampling.min_p, 0.05f);
  EXPECT_FLOAT_EQ(req.sampling.repetition_penalty, 1.1f);
  EXPECT_TRUE(req.sampling.ignore_eos);
  // What the API accepts, the sampler accepts.
  EXPECT_TRUE(ValidateSamplingParams(req.sampling, 100).ok());
}

TEST(ChatRequest, TemplateMessagesMapDeveloperToSystem) {
  ChatCompletionRequest req = ParseOk(R"({"messages":[
      {"role":"developer","content":"D"},{"role":"user","content":"U","name":"n"}]})");
  nlohmann::ordered_json t = ToTemplateMessages(req.messages);
  ASSERT_TRUE(t.is_array());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0]["role"], "system");
  EXPECT_EQ(t[0]["content"], "D");
  EXPECT_EQ(t[1]["role"], "user");
  EXPECT_EQ(t[1]["content"], "U");
  EXPECT_EQ(t[1]["name"], "n");
}

TEST(ChatRequest, NullMeansAbsentAndUnknownFieldsAreIgnored) {
  ChatCompletionRequest req = ParseOk(
      Body(R"("temperature":null,"max_tokens":null,"stop":null,"seed":null,"stream":null,)"
           R"("user":"x","store":false,"metadata":null,"parallel_tool_calls":true,)"
           R"("service_tier":"auto","frobnicate":{"deep":[1,2,3]},"prediction":{"type":"content"},)"
           R"("tools":[],"tool_choice":"none","response_format":{"type":"text"},"logprobs":false,)"
           R"("top_logprobs":0,"modalities":["text"])"));
  EXPECT_EQ(req.sampling.temperature, SamplingParams().temperature);
  EXPECT_FALSE(req.max_tokens.has_value());
  EXPECT_FALSE(req.stream);
}

TEST(ChatRequest, MaxCompletionTokensWinsOverMaxTokens) {
  EXPECT_EQ(ParseOk(Body(R"("max_tokens":10,"max_completion_tokens":20)")).max_tokens, 20);
  EXPECT_EQ(ParseOk(Body(R"("max_tokens":10)")).max_tokens, 10);
}

TEST(ChatRequest, StopAsStringAndEmptyStringsDropped) {
  EXPECT_EQ(ParseOk(Body(R"("stop":"###")")).sampling.stop, std::vector<std::string>{"###"});
  EXPECT_TRUE(ParseOk(Body(R"("stop":"")")).sampling.stop.empty());
  EXPECT_EQ(ParseOk(Body(R"("stop":["","x"])")).sampling.stop, std::vector<std::string>{"x"});
}

TEST(ChatRequest, SeedAcceptsTheWholeInt64AndUint64Range) {
  EXPECT_EQ(ParseOk(Body(R"("seed":-1)")).sampling.seed, UINT64_MAX);
  EXPECT_EQ(ParseOk(Body(R"("seed":18446744073709551615)")).sampling.seed, UINT64_MAX);
  EXPECT_EQ(ParseOk(Body(R"("seed":0)")).sampling.seed, 0u);
}

TEST(ChatRequest, TopKMinusOneMeansOff) {
  EXPECT_EQ(ParseOk(Body(R"("top_k":-1)")).sampling.top_k, 0);
}

TEST(ChatRequest, IncludeUsageOnlyWhenStreaming) {
  EXPECT_FALSE(ParseOk(Body(R"("stream_options":{"include_usage":true})")).include_usage);
}

struct ErrorCase {
  std::string extra;  // spliced into Body() unless `whole` is set
  std::string param;
  std::string code;
  std::string whole;  // the entire body instead
};

TEST(ChatRequest, ValidationErrorsNameTheField) {
  const ErrorCase cases[] = {
      {"", "messages", "missing_required_parameter", R"({"model":"m"})"},
      {"", "messages", "missing_required_parameter", R"({"messages":null})"},
      {"", "messages", "empty_array", R"({"messages":[]})"},
      {"", "messages", "invalid_type", R"({"messages":"hi"})"},
      {"", "messages[0]", "invalid_type", R"({"messages":["hi"]})"},
      {"", "messages[1].role", "missing_required_parameter",
       R"({"messages":[{"role":"user","content":"a"},{"content":"b"}]})"},
      {"", "messages[2].role", "invalid_value",
       R"({"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},)"
       R"({"role":"wizard","content":"c"}]})"},
      {"", "messages[0].role", "invalid_type", R"({"messages":[{"role":1,"content":"a"}]})"},
      {"", "messages[0].content", "missing_required_parameter",
       R"({"messages":[{"role":"user"}]})"},
      {"", "messages[0].content", "invalid_type", R"({"messages":[{"role":"user","content":5}]})"},
      {"", "messages[0].content[1].type", "unsupported_value",
       R"({"messages":[{"role":"user","content":[{"type":"text","text":"a"},)"
       R"({"type":"image_url","image_url":{"url":"http://x"}}]}]})"},
      {"", "messages[0].content[0].type", "invalid_value",
       R"({"messages":[{"role":"user","content":[{"type":"video","text":"a"}]}]})"},
      {"", "messages[0].content[0].text", "missing_required_parameter",
       R"({"messages":[{"role":"user","content":[{"type":"text"}]}]})"},
      {"", "messages[0].content[0]", "invalid_type",
       R"({"messages":[{"role":"user","content":["text"]}]})"},
      {"", "messages[0].tool_call_id", "missing_required_parameter",
       R"({"messages":[{"role":"tool","content":"x"}]})"},
      {"", "messages[0].tool_calls", "unsupported_value",
       R"({"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c"}]}]})"},
      {"", "messages[0].name", "invalid_type",
       R"({"messages":[{"role":"user","content":"a","name":3}]})"},
      {R"("model":5)", "model", "invalid_type", ""},
      {R"("temperature":"0.7")", "temperature", "invalid_type", ""},
      {R"("temperature":2.5)", "temperature", "invalid_value", ""},
      {R"("temperature":-0.1)", "temperature", "invalid_value", ""},
      {R"("temperature":true)", "temperature", "invalid_type", ""},
      {R"("top_p":1.01)", "top_p", "invalid_value", ""},
      {R"("presence_penalty":-2.01)", "presence_penalty", "invalid_value", ""},
      {R"("frequency_penalty":3)", "frequency_penalty", "invalid_value", ""},
      {R"("max_tokens":0)", "max_tokens", "invalid_value", ""},
      {R"("max_tokens":-5)", "max_tokens", "invalid_value", ""},
      {R"("max_tokens":1.5)", "max_tokens", "invalid_type", ""},
      {R"("max_tokens":"100")", "max_tokens", "invalid_type", ""},
      {R"("max_tokens":4294967296)", "max_tokens", "invalid_value", ""},
      {R"("max_tokens":99999999999999999999999)", "max_tokens", "invalid_type", ""},
      {R"("max_completion_tokens":0)", "max_completion_tokens", "invalid_value", ""},
      {R"("seed":1.5)", "seed", "invalid_type", ""},
      {R"("seed":"7")", "seed", "invalid_type", ""},
      {R"("stop":5)", "stop", "invalid_type", ""},
      {R"("stop":["a",5])", "stop[1]", "invalid_type", ""},
      {R"("stop":["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"])",
       "stop", "invalid_value", ""},
      {R"("stop":")" + std::string(300, 'x') + "\"", "stop", "invalid_value", ""},
      {R"("logit_bias":[1])", "logit_bias", "invalid_type", ""},
      {R"("logit_bias":{"abc":1})", "logit_bias", "invalid_value", ""},
      {R"("logit_bias":{"-1":1})", "logit_bias", "invalid_value", ""},
      {R"("logit_bias":{"99999999999":1})", "logit_bias", "invalid_value", ""},
      {R"("logit_bias":{"5":101})", "logit_bias.5", "invalid_value", ""},
      {R"("logit_bias":{"5":"x"})", "logit_bias.5", "invalid_type", ""},
      {R"("n":2)", "n", "unsupported_value", ""},
      {R"("n":"1")", "n", "invalid_type", ""},
      {R"("stream":"yes")", "stream", "invalid_type", ""},
      {R"("stream_options":true)", "stream_options", "invalid_type", ""},
      {R"("stream":true,"stream_options":{"include_usage":1})", "stream_options.include_usage",
       "invalid_type", ""},
      {R"("session_id":42)", "session_id", "invalid_type", ""},
      {R"("session_id":"")", "session_id", "invalid_value", ""},
      {R"("session_id":"has space")", "session_id", "invalid_value", ""},
      {R"("metadata":[])", "metadata", "invalid_type", ""},
      {R"("metadata":{"k":1})", "metadata.k", "invalid_type", ""},
      {R"("user":7)", "user", "invalid_type", ""},
      {R"("store":"true")", "store", "invalid_type", ""},
      {R"("top_k":-2)", "top_k", "invalid_value", ""},
      {R"("top_k":1.5)", "top_k", "invalid_type", ""},
      {R"("min_p":1.5)", "min_p", "invalid_value", ""},
      {R"("repetition_penalty":0)", "repetition_penalty", "invalid_value", ""},
      {R"("repetition_penalty":11)", "repetition_penalty", "invalid_value", ""},
      {R"("ignore_eos":"true")", "ignore_eos", "invalid_type", ""},
      {R"("tools":[{"type":"function","function":{"name":"f"}}])", "tools", "unsupported_value",
       ""},
      {R"("tool_choice":"required")", "tool_choice", "unsupported_value", ""},
      {R"("tool_choice":{"type":"function"})", "tool_choice", "unsupported_value", ""},
      {R"("functions":[{"name":"f"}])", "functions", "unsupported_value", ""},
      {R"("response_format":{"type":"json_object"})", "response_format.type", "unsupported_value",
       ""},
      {R"("logprobs":true)", "logprobs", "unsupported_value", ""},
      {R"("top_logprobs":3)", "top_logprobs", "unsupported_value", ""},
      {R"("modalities":["text","audio"])", "modalities[1]", "unsupported_value", ""},
      {R"("audio":{"voice":"x"})", "audio", "unsupported_value", ""},
  };
  for (const ErrorCase& c : cases) {
    std::string body = c.whole.empty() ? Body(c.extra) : c.whole;
    ApiError e = ParseErr(body);
    EXPECT_EQ(e.http_status, 400) << body;
    EXPECT_EQ(e.type, "invalid_request_error") << body;
    EXPECT_EQ(e.param, c.param) << body << "\n" << e.message;
    EXPECT_EQ(e.code, c.code) << body << "\n" << e.message;
    EXPECT_FALSE(e.message.empty());
  }
}

TEST(ChatRequest, ImagePartsSayTextOnly) {
  ApiError e = ParseErr(
      R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]})");
  EXPECT_NE(e.message.find("text only"), std::string::npos) << e.message;
}

TEST(ChatRequest, LogitBiasIdsCheckedAgainstVocab) {
  ParseOptions o{.vocab_size = 10};
  EXPECT_TRUE(ParseChatCompletionRequest(Body(R"("logit_bias":{"9":1})"), o).ok());
  ApiError e = ParseErr(Body(R"("logit_bias":{"10":1})"), o);
  EXPECT_EQ(e.param, "logit_bias");
  EXPECT_NE(e.message.find("0..9"), std::string::npos) << e.message;
}

TEST(ChatRequest, FirstErrorWins) {
  ApiError e = ParseErr(Body(R"("temperature":9,"top_p":9)"));
  EXPECT_EQ(e.param, "temperature");
}

TEST(ChatRequest, DeepNestingInAnIgnoredFieldIsRefused) {
  std::string deep = std::string(5000, '[') + std::string(5000, ']');
  ApiError e = ParseErr(Body("\"extra\":" + deep));
  EXPECT_EQ(e.code, "invalid_json");
}

// Mutated and truncated bodies: the parser must answer (ok or a 400 whose
// body is valid JSON), never crash or hang. Fixed seed: deterministic.
TEST(ChatRequest, MutatedBodiesNeverCrash) {
  const std::string base =
      R"({"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"héllo"}]},{"role":"assistant","content":null}],"temperature":0.5,"stop":["a","b"],"logit_bias":{"1":2},"seed":3,"stream":true,"stream_options":{"include_usage":true},"n":1})";
  const char alphabet[] = "{}[]\":,0123456789.-+eEtrufalsn \\\xff\xc3";
  std::mt19937 rng(1234);
  int ok = 0, bad = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string b = base;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      size_t pos = rng() % b.size();
      switch (rng() % 3) {
        case 0: b[pos] = alphabet[rng() % (sizeof(alphabet) - 1)]; break;
        case 1: b.erase(pos, 1 + rng() % 3); break;
        default: b.insert(pos, 1, alphabet[rng() % (sizeof(alphabet) - 1)]); break;
      }
      if (b.empty()) b = "{";
    }
    auto r = ParseChatCompletionRequest(b);
    if (r.ok()) {
      ++ok;
      EXPECT_TRUE(ValidateSamplingParams(r.value().sampling, 1 << 20).ok()) << b;
    } else {
      ++bad;
      EXPECT_EQ(r.error().http_status, 400) << b;
      EXPECT_FALSE(nlohmann::json::parse(ErrorBody(r.error()), nullptr, false).is_discarded());
    }
  }
  EXPECT_GT(bad, 0);
  EXPECT_GT(ok, 0);  // some mutations land in strings and stay valid
}

}  // namespace
}  // namespace mneme::api
