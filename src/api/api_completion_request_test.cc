// POST /v1/completions bodies: the prompt forms, refused features, errors.
#include <gtest/gtest.h>

#include "api/completion_request.h"

namespace mneme::api {
namespace {

CompletionRequest ParseOk(const std::string& body, ParseOptions o = {}) {
  auto r = ParseCompletionRequest(body, o);
  EXPECT_TRUE(r.ok()) << body << " -> " << (r.ok() ? "" : r.error().message);
  return r.ok() ? std::move(r).value() : CompletionRequest{};
}

ApiError ParseErr(const std::string& body, ParseOptions o = {}) {
  auto r = ParseCompletionRequest(body, o);
  EXPECT_FALSE(r.ok()) << body;
  return r.ok() ? ApiError{} : r.error();
}

TEST(CompletionRequest, StringPrompt) {
  CompletionRequest r =
      ParseOk(R"({"model":"m","prompt":"Once upon","max_tokens":16,"temperature":0,"stop":"\n",)"
              R"("stream":true,"stream_options":{"include_usage":true},"echo":false,"best_of":1,)"
              R"("logprobs":null,"suffix":null,"n":1,"top_k":5})");
  EXPECT_EQ(r.model, "m");
  ASSERT_FALSE(r.prompt_is_tokens());
  EXPECT_EQ(std::get<std::string>(r.prompt), "Once upon");
  EXPECT_EQ(r.max_tokens, 16);
  EXPECT_EQ(r.sampling.temperature, 0.0f);
  EXPECT_EQ(r.sampling.stop, std::vector<std::string>{"\n"});
  EXPECT_EQ(r.sampling.top_k, 5);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
}

TEST(CompletionRequest, OtherPromptForms) {
  EXPECT_EQ(std::get<std::string>(ParseOk(R"({"prompt":["only one"]})").prompt), "only one");
  EXPECT_EQ(std::get<std::vector<TokenId>>(ParseOk(R"({"prompt":[1,2,3]})").prompt),
            (std::vector<TokenId>{1, 2, 3}));
  EXPECT_EQ(std::get<std::vector<TokenId>>(ParseOk(R"({"prompt":[[4,5]]})").prompt),
            (std::vector<TokenId>{4, 5}));
  EXPECT_EQ(std::get<std::string>(ParseOk(R"({"prompt":""})").prompt), "");
}

TEST(CompletionRequest, Errors) {
  struct Case {
    std::string body, param, code;
  } cases[] = {
      {R"({})", "prompt", "missing_required_parameter"},
      {R"({"prompt":5})", "prompt", "invalid_type"},
      {R"({"prompt":[]})", "prompt", "empty_array"},
      {R"({"prompt":["a","b"]})", "prompt", "unsupported_value"},
      {R"({"prompt":[[1],[2]]})", "prompt", "unsupported_value"},
      {R"({"prompt":[[]]})", "prompt[0]", "empty_array"},
      {R"({"prompt":[1,"a"]})", "prompt[1]", "invalid_type"},
      {R"({"prompt":[1,-2]})", "prompt[1]", "invalid_value"},
      {R"({"prompt":[1,2.5]})", "prompt[1]", "invalid_type"},
      {R"({"prompt":[true]})", "prompt[0]", "invalid_type"},
      {R"({"prompt":[[1,"x"]]})", "prompt[0][1]", "invalid_type"},
      {R"({"prompt":"a","echo":true})", "echo", "unsupported_value"},
      {R"({"prompt":"a","suffix":"z"})", "suffix", "unsupported_value"},
      {R"({"prompt":"a","best_of":2})", "best_of", "unsupported_value"},
      {R"({"prompt":"a","n":2})", "n", "unsupported_value"},
      {R"({"prompt":"a","logprobs":2})", "logprobs", "unsupported_value"},
      {R"({"prompt":"a","max_tokens":0})", "max_tokens", "invalid_value"},
      {R"({"prompt":"a","temperature":"hot"})", "temperature", "invalid_type"},
  };
  for (const Case& c : cases) {
    ApiError e = ParseErr(c.body);
    EXPECT_EQ(e.http_status, 400) << c.body;
    EXPECT_EQ(e.param, c.param) << c.body << ": " << e.message;
    EXPECT_EQ(e.code, c.code) << c.body << ": " << e.message;
  }
}

TEST(CompletionRequest, TokenIdsCheckedAgainstVocab) {
  ParseOptions o{.vocab_size = 32};
  EXPECT_TRUE(ParseCompletionRequest(R"({"prompt":[0,31]})", o).ok());
  EXPECT_EQ(ParseErr(R"({"prompt":[0,32]})", o).param, "prompt[1]");
}

}  // namespace
}  // namespace mneme::api
