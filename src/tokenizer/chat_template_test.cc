// ChatTemplate: the context a template sees, error paths (a template that does
// not parse, one that raises, inputs of the wrong shape) and the ChatML
// fallback for GGUFs without a usable template. Byte-for-byte agreement with
// @huggingface/jinja on real templates is tests/templates/ (the oracle test).
#include "tokenizer/chat_template.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace mneme {
namespace {

using Json = nlohmann::ordered_json;
using ::testing::HasSubstr;

// A minimal GGUF v3 file with no tensors and the given metadata, built by hand
// from the format description in gguf/gguf.h.
class GgufBuilder {
 public:
  GgufBuilder& String(const std::string& key, const std::string& value) {
    Key(key, 8);
    Str(value);
    ++n_kv_;
    return *this;
  }
  GgufBuilder& Uint32(const std::string& key, uint32_t value) {
    Key(key, 4);
    Pod(value);
    ++n_kv_;
    return *this;
  }
  GgufBuilder& StringArray(const std::string& key, const std::vector<std::string>& values) {
    Key(key, 9);
    Pod(uint32_t{8});
    Pod(uint64_t{values.size()});
    for (const std::string& v : values) Str(v);
    ++n_kv_;
    return *this;
  }
  std::vector<uint8_t> Bytes() const {
    std::vector<uint8_t> out = {'G', 'G', 'U', 'F'};
    auto put = [&](auto v) {
      for (size_t i = 0; i < sizeof(v); ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
    };
    put(uint32_t{3});
    put(uint64_t{0});  // tensors
    put(n_kv_);
    out.insert(out.end(), kv_.begin(), kv_.end());
    return out;
  }

 private:
  template <typename T>
  void Pod(T v) {
    for (size_t i = 0; i < sizeof(v); ++i) kv_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void Str(const std::string& s) {
    Pod(uint64_t{s.size()});
    kv_.insert(kv_.end(), s.begin(), s.end());
  }
  void Key(const std::string& key, uint32_t type) {
    Str(key);
    Pod(type);
  }
  std::vector<uint8_t> kv_;
  uint64_t n_kv_ = 0;
};

gguf::GgufFile OpenBytes(const GgufBuilder& b) {
  std::vector<uint8_t> bytes = b.Bytes();
  Result<gguf::GgufFile> f = gguf::GgufFile::FromBytes(bytes, "test.gguf");
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return std::move(f).value();
}

GgufBuilder WithTokens() {
  GgufBuilder b;
  b.StringArray("tokenizer.ggml.tokens", {"<unk>", "<BOS>", "<EOS>", "hello"})
      .Uint32("tokenizer.ggml.bos_token_id", 1)
      .Uint32("tokenizer.ggml.eos_token_id", 2);
  return b;
}

const Json kTwoTurns = Json::parse(R"([
  {"role": "system", "content": "Be brief."},
  {"role": "user", "content": "Hi"}
])");

// ---- Jinja templates -----------------------------------------------------

TEST(ChatTemplateTest, RendersTheHuggingFaceGlobals) {
  Result<ChatTemplate> t = ChatTemplate::FromSource(
      "{{ bos_token }}{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}"
      "{% if add_generation_prompt %}>{% endif %}{{ eos_token }}",
      "<s>", "</s>");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_FALSE(t->is_fallback());
  EXPECT_EQ(t->warning(), "");
  Result<std::string> on = t->Render(kTwoTurns, nullptr, true);
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_EQ(*on, "<s>[system:Be brief.][user:Hi]></s>");
  Result<std::string> off = t->Render(kTwoTurns, nullptr, false);
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_EQ(*off, "<s>[system:Be brief.][user:Hi]</s>");
}

TEST(ChatTemplateTest, ToolsAreNoneWithoutToolsAndAListWithThem) {
  Result<ChatTemplate> t = ChatTemplate::FromSource(
      "{% if tools is none %}none{% else %}{{ tools | length }}:{{ tools[0].function.name }}{% "
      "endif %}",
      "", "");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Result<std::string> none = t->Render(kTwoTurns, nullptr, true);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(*none, "none");
  Json tools = Json::parse(R"([{"type": "function", "function": {"name": "f"}}])");
  Result<std::string> one = t->Render(kTwoTurns, tools, true);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(*one, "1:f");
}

TEST(ChatTemplateTest, ExtraVariablesAreGlobalsButCannotReplaceBuiltIns) {
  Result<ChatTemplate> t = ChatTemplate::FromSource(
      "{% if enable_thinking is defined and enable_thinking is false %}no-think{% endif %}", "",
      "");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Result<std::string> r = t->Render(kTwoTurns, nullptr, true, Json{{"enable_thinking", false}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "no-think");
  Result<std::string> without = t->Render(kTwoTurns, nullptr, true);
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  EXPECT_EQ(*without, "");

  Result<std::string> clash = t->Render(kTwoTurns, nullptr, true, Json{{"bos_token", "x"}});
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(clash.status().message(), HasSubstr("bos_token"));
}

TEST(ChatTemplateTest, TemplateThatDoesNotParseIsAnErrorNotACrash) {
  for (const char* bad : {"{% for m in messages %}no endfor", "{{ 1 + }}", "{% if %}{% endif %}",
                          "{{ messages[ }}", "{% endfor %}", "{% unknown_tag %}"}) {
    Result<ChatTemplate> t = ChatTemplate::FromSource(bad, "", "");
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(t.status().message(), HasSubstr("does not parse")) << bad;
  }
}

TEST(ChatTemplateTest, RaisingTemplateIsFailedPreconditionWithItsMessage) {
  Result<ChatTemplate> t = ChatTemplate::FromSource(
      "{% if messages[0]['role'] == 'system' %}"
      "{{ raise_exception('System role not supported') }}{% endif %}ok",
      "", "");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Result<std::string> r = t->Render(kTwoTurns, nullptr, true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("System role not supported"));
  Result<std::string> fine =
      t->Render(Json::parse(R"([{"role": "user", "content": "x"}])"), nullptr, true);
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_EQ(*fine, "ok");
}

TEST(ChatTemplateTest, InterpreterErrorWhileRenderingIsFailedPrecondition) {
  // Calling an undefined function fails in every Jinja implementation.
  Result<ChatTemplate> t = ChatTemplate::FromSource("{{ no_such_function() }}", "", "");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  Result<std::string> r = t->Render(kTwoTurns, nullptr, true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
}

TEST(ChatTemplateTest, InputsOfTheWrongShapeAreInvalidArgument) {
  ChatTemplate chatml = ChatTemplate::ChatMl("", "");
  EXPECT_EQ(chatml.Render(Json::object(), nullptr, true).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(chatml.Render(kTwoTurns, Json::object(), true).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(chatml.Render(kTwoTurns, nullptr, true, Json::array()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      chatml.Render(Json::parse(R"([{"content": "no role"}])"), nullptr, true).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(chatml.Render(Json::parse(R"(["not an object"])"), nullptr, true).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(chatml.Render(Json::parse(R"([{"role": "user", "content": 5}])"), nullptr, true)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

// ---- ChatML fallback -----------------------------------------------------

TEST(ChatTemplateTest, ChatMlFallbackFormat) {
  ChatTemplate t = ChatTemplate::ChatMl("<s>", "</s>");
  EXPECT_TRUE(t.is_fallback());
  Json messages = Json::parse(R"([
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "Hello "}, {"type": "image_url"},
                                 {"type": "text", "text": "there"}]},
    {"role": "assistant", "content": null, "tool_calls": [{"function": {"name": "f"}}]},
    {"role": "tool", "content": "42"}
  ])");
  Result<std::string> r = t.Render(messages, nullptr, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r,
            "<|im_start|>system\nBe brief.<|im_end|>\n"
            "<|im_start|>user\nHello there<|im_end|>\n"
            "<|im_start|>assistant\n<|im_end|>\n"
            "<|im_start|>tool\n42<|im_end|>\n"
            "<|im_start|>assistant\n");
  Result<std::string> no_prompt =
      t.Render(Json::parse(R"([{"role": "user", "content": "Hi"}])"), nullptr, false);
  ASSERT_TRUE(no_prompt.ok()) << no_prompt.status().ToString();
  EXPECT_EQ(*no_prompt, "<|im_start|>user\nHi<|im_end|>\n");
}

// ---- GGUF ----------------------------------------------------------------

TEST(ChatTemplateTest, GgufWithoutTemplateFallsBackToChatMlWithAWarning) {
  gguf::GgufFile file = OpenBytes(WithTokens());
  ChatTemplate t = ChatTemplate::FromGguf(file);
  EXPECT_TRUE(t.is_fallback());
  EXPECT_THAT(t.warning(), HasSubstr("test.gguf"));
  EXPECT_THAT(t.warning(), HasSubstr("no tokenizer.chat_template"));
  EXPECT_THAT(t.warning(), HasSubstr("ChatML"));
  EXPECT_EQ(t.bos_token(), "<BOS>");
  EXPECT_EQ(t.eos_token(), "<EOS>");
  Result<std::string> r =
      t.Render(Json::parse(R"([{"role": "user", "content": "Hi"}])"), nullptr, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplateTest, GgufTemplateThatDoesNotParseFallsBackWithTheParseError) {
  gguf::GgufFile file =
      OpenBytes(WithTokens().String("tokenizer.chat_template", "{% if x %}unclosed"));
  ChatTemplate t = ChatTemplate::FromGguf(file);
  EXPECT_TRUE(t.is_fallback());
  EXPECT_THAT(t.warning(), HasSubstr("does not parse"));
  EXPECT_THAT(t.warning(), HasSubstr("ChatML"));
}

TEST(ChatTemplateTest, GgufTemplateOfTheWrongTypeFallsBack) {
  gguf::GgufFile file = OpenBytes(WithTokens().Uint32("tokenizer.chat_template", 7));
  ChatTemplate t = ChatTemplate::FromGguf(file);
  EXPECT_TRUE(t.is_fallback());
  EXPECT_THAT(t.warning(), HasSubstr("not a string"));
}

TEST(ChatTemplateTest, GgufTemplateIsUsedWithTheModelsBosAndEos) {
  gguf::GgufFile file = OpenBytes(WithTokens().String(
      "tokenizer.chat_template", "{{ bos_token }}{{ messages[-1].content }}{{ eos_token }}\n"));
  ChatTemplate t = ChatTemplate::FromGguf(file);
  EXPECT_FALSE(t.is_fallback());
  EXPECT_EQ(t.warning(), "");
  Result<std::string> r = t.Render(kTwoTurns, nullptr, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // The template's single trailing newline is dropped (keep_trailing_newline=False).
  EXPECT_EQ(*r, "<BOS>Hi<EOS>");
}

TEST(ChatTemplateTest, GgufTokenIdsOutOfRangeGiveEmptyTokens) {
  GgufBuilder b;
  b.StringArray("tokenizer.ggml.tokens", {"a", "b"})
      .Uint32("tokenizer.ggml.bos_token_id", 2)
      .Uint32("tokenizer.ggml.eos_token_id", 4294967295u);
  ChatTemplate t = ChatTemplate::FromGguf(OpenBytes(b));
  EXPECT_EQ(t.bos_token(), "");
  EXPECT_EQ(t.eos_token(), "");
}

TEST(ChatTemplateTest, RealModelsFromSharedData) {
  // stories260K has no chat template (../shared/models/README.md): fallback.
  Result<gguf::GgufFile> stories =
      gguf::GgufFile::Open(MNEME_SHARED_DIR "/models/stories260K.gguf");
  ASSERT_TRUE(stories.ok()) << stories.status().ToString();
  ChatTemplate t = ChatTemplate::FromGguf(*stories);
  EXPECT_TRUE(t.is_fallback());
  EXPECT_EQ(t.bos_token(), "<s>");
  EXPECT_EQ(t.eos_token(), "</s>");
  // The Qwen2 vocab file carries Qwen's ChatML-style template.
  Result<gguf::GgufFile> qwen =
      gguf::GgufFile::Open(MNEME_SHARED_DIR "/models/vocab/ggml-vocab-qwen2.gguf");
  ASSERT_TRUE(qwen.ok()) << qwen.status().ToString();
  ChatTemplate q = ChatTemplate::FromGguf(*qwen);
  EXPECT_FALSE(q.is_fallback()) << q.warning();
  EXPECT_THAT(q.source(), HasSubstr("<|im_start|>"));
}

}  // namespace
}  // namespace mneme
