// Parsed chat messages rendered by real model templates: the codec's output
// is what ChatTemplate::Render expects, "developer" reaches the template as
// "system", and a template that refuses a conversation becomes a 400.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "api/api_error.h"
#include "api/chat_request.h"
#include "tokenizer/chat_template.h"

namespace mneme::api {
namespace {

std::string ReadTemplate(const std::string& name) {
  std::ifstream in(std::string(MNEME_SHARED_DIR) + "/templates/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<ChatMessage> Messages(const std::string& body) {
  auto r = ParseChatCompletionRequest(body);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value().messages : std::vector<ChatMessage>{};
}

TEST(ChatTemplate, Qwen25RendersParsedMessages) {
  auto tmpl =
      ChatTemplate::FromSource(ReadTemplate("Qwen-Qwen2.5-7B-Instruct.jinja"), "", "<|im_end|>");
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().ToString();
  auto messages = Messages(R"({"messages":[
      {"role":"developer","content":"Rules."},
      {"role":"user","content":"Hi"},
      {"role":"assistant","content":"Hello"},
      {"role":"user","content":[{"type":"text","text":"Line one"},{"type":"text","text":"Line two"}]}]})");
  auto text = tmpl->Render(ToTemplateMessages(messages), nullptr, /*add_generation_prompt=*/true);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  // Qwen2.5 uses messages[0] as the system block only when its role is
  // "system"; otherwise it would insert its default system prompt.
  EXPECT_EQ(*text,
            "<|im_start|>system\nRules.<|im_end|>\n"
            "<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nHello<|im_end|>\n"
            "<|im_start|>user\nLine one\nLine two<|im_end|>\n"
            "<|im_start|>assistant\n");
}

TEST(ChatTemplate, ChatMlFallback) {
  ChatTemplate tmpl = ChatTemplate::ChatMl("", "");
  auto text =
      tmpl.Render(ToTemplateMessages(Messages(R"({"messages":[{"role":"user","content":"Q"}]})")),
                  nullptr, true);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, TemplateRefusalIsA400) {
  auto tmpl =
      ChatTemplate::FromSource(ReadTemplate("google-gemma-2-2b-it.jinja"), "<bos>", "<eos>");
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().ToString();
  auto text =
      tmpl->Render(ToTemplateMessages(Messages(R"({"messages":[{"role":"system","content":"S"},)"
                                               R"({"role":"user","content":"Q"}]})")),
                   nullptr, true);
  ASSERT_FALSE(text.ok());
  ApiError e = ApiErrorFromStatus(text.status(), StatusOrigin::kChatTemplate);
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.param, "messages");
  EXPECT_NE(e.message.find("System role not supported"), std::string::npos) << e.message;
}

}  // namespace
}  // namespace mneme::api
