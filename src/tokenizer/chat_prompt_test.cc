// BuildTurnPrompt on real templates and vocabularies: a prefix-stable
// template tokenizes only the new suffix, and the result equals tokenizing
// the whole render; a template that rewrites history (Qwen3 drops earlier
// answers' reasoning) falls back to a full tokenization; BOS is added once.
#include "tokenizer/chat_prompt.h"

#include <gtest/gtest.h>

#include "util/mapped_file.h"

namespace mneme {
namespace {

using nlohmann::ordered_json;

Tokenizer LoadTokenizer(const std::string& vocab) {
  auto file = gguf::GgufFile::Open(MNEME_SHARED_DIR "/models/vocab/ggml-vocab-" + vocab + ".gguf");
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  auto t = Tokenizer::FromGguf(*file);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(*t);
}

ChatTemplate LoadTemplate(const std::string& name, const std::string& bos, const std::string& eos) {
  auto source = ReadFileToString(MNEME_SHARED_DIR "/templates/" + name + ".jinja");
  EXPECT_TRUE(source.ok()) << source.status().ToString();
  auto t = ChatTemplate::FromSource(*source, bos, eos);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(*t);
}

ordered_json Msg(const std::string& role, const std::string& content) {
  return {{"role", role}, {"content", content}};
}

std::vector<TokenId> Full(const Tokenizer& t, const std::string& text) {
  return t.Encode(text, {.add_special = false, .parse_special = true});
}

TEST(ChatPromptTest, PrefixStableTemplateTokenizesOnlyTheSuffix) {
  const Tokenizer tok = LoadTokenizer("qwen2");
  const ChatTemplate tmpl = LoadTemplate("Qwen-Qwen2.5-7B-Instruct", "", "<|im_end|>");
  ordered_json messages = ordered_json::array({Msg("system", "Be brief."), Msg("user", "Hi there")});

  auto t1 = BuildTurnPrompt(tmpl, tok, messages, nullptr);
  ASSERT_TRUE(t1.ok()) << t1.status().ToString();
  EXPECT_FALSE(t1->incremental);
  EXPECT_EQ(t1->tokens, Full(tok, t1->text));  // qwen2 adds no BOS
  ConversationTokens state = AfterAnswer(*t1, "Hello! How can I help?",
                                         Full(tok, "Hello! How can I help?"));

  for (const char* next : {"Tell me a joke.", "Another one, please!\n\nThanks."}) {
    messages.push_back(Msg("assistant", state.text.substr(t1->text.size())));
    messages.push_back(Msg("user", next));
    auto t2 = BuildTurnPrompt(tmpl, tok, messages, &state);
    ASSERT_TRUE(t2.ok()) << t2.status().ToString();
    EXPECT_TRUE(t2->incremental);
    EXPECT_EQ(t2->num_reused_tokens, static_cast<int>(state.tokens.size()));
    ASSERT_GE(t2->tokens.size(), state.tokens.size());
    EXPECT_TRUE(std::equal(state.tokens.begin(), state.tokens.end(), t2->tokens.begin()));
    // The suffix starts at a special token (<|im_end|>), so nothing merges
    // across the boundary: identical to tokenizing the whole render.
    EXPECT_EQ(t2->tokens, Full(tok, t2->text));
    EXPECT_EQ(tok.Decode(t2->tokens, /*render_special=*/true), t2->text);
    const std::string answer = "Sure.";
    state = AfterAnswer(*t2, answer, Full(tok, answer));
    t1 = std::move(t2);
  }
}

TEST(ChatPromptTest, TemplateThatRewritesHistoryFallsBackToAFullTokenization) {
  const Tokenizer tok = LoadTokenizer("qwen2");
  const ChatTemplate tmpl = LoadTemplate("Qwen-Qwen3-0.6B", "", "<|im_end|>");
  ordered_json messages = ordered_json::array({Msg("user", "What is 2+2?")});
  auto t1 = BuildTurnPrompt(tmpl, tok, messages, nullptr);
  ASSERT_TRUE(t1.ok()) << t1.status().ToString();
  const std::string answer = "<think>\nSimple sum.\n</think>\n\n4";
  const ConversationTokens state = AfterAnswer(*t1, answer, Full(tok, answer));
  // Qwen3's template drops the reasoning of answers before the last user
  // message: the stored text is no longer a prefix of the new render.
  messages.push_back(Msg("assistant", answer));
  messages.push_back(Msg("user", "And 3+3?"));
  auto t2 = BuildTurnPrompt(tmpl, tok, messages, &state);
  ASSERT_TRUE(t2.ok()) << t2.status().ToString();
  EXPECT_EQ(t2->text.find("Simple sum"), std::string::npos);
  EXPECT_FALSE(t2->incremental);
  EXPECT_EQ(t2->num_reused_tokens, 0);
  EXPECT_EQ(t2->tokens, Full(tok, t2->text));
}

TEST(ChatPromptTest, BosIsAddedOnceWhenTheTemplatePrintsIt) {
  const Tokenizer tok = LoadTokenizer("llama-bpe");
  ASSERT_TRUE(tok.vocab().add_bos);
  const std::string bos = tok.TokenToPiece(tok.vocab().bos_id, /*render_special=*/true);
  const ChatTemplate tmpl = LoadTemplate("meta-llama-Llama-3.1-8B-Instruct", bos, "<|eot_id|>");
  ordered_json messages = ordered_json::array({Msg("user", "Hello")});
  auto t1 = BuildTurnPrompt(tmpl, tok, messages, nullptr);
  ASSERT_TRUE(t1.ok()) << t1.status().ToString();
  ASSERT_EQ(t1->text.rfind(bos, 0), 0u) << "the template prints BOS";
  ASSERT_GE(t1->tokens.size(), 2u);
  EXPECT_EQ(t1->tokens[0], tok.vocab().bos_id);
  EXPECT_NE(t1->tokens[1], tok.vocab().bos_id);
  // ChatML's fallback prints no BOS: the vocabulary's add_bos adds it.
  const ChatTemplate chatml = ChatTemplate::ChatMl(bos, "<|eot_id|>");
  auto c1 = BuildTurnPrompt(chatml, tok, messages, nullptr);
  ASSERT_TRUE(c1.ok());
  EXPECT_EQ(c1->tokens[0], tok.vocab().bos_id);
  EXPECT_EQ(std::vector<TokenId>(c1->tokens.begin() + 1, c1->tokens.end()), Full(tok, c1->text));

  // Turn 2 is prefix-stable for Llama 3.1 (answers are trimmed: use one
  // without surrounding whitespace).
  const ConversationTokens state = AfterAnswer(*t1, "Hi! What can I do?", Full(tok, "Hi! What can I do?"));
  messages.push_back(Msg("assistant", "Hi! What can I do?"));
  messages.push_back(Msg("user", "Nothing."));
  auto t2 = BuildTurnPrompt(tmpl, tok, messages, &state);
  ASSERT_TRUE(t2.ok());
  EXPECT_TRUE(t2->incremental);
  EXPECT_EQ(t2->tokens[0], tok.vocab().bos_id);
  EXPECT_EQ(tok.Decode(t2->tokens, true), t2->text);
}

TEST(ChatPromptTest, TemplateErrorsPropagate) {
  const Tokenizer tok = LoadTokenizer("qwen2");
  auto tmpl = ChatTemplate::FromSource("{{ raise_exception('no') }}", "", "");
  ASSERT_TRUE(tmpl.ok());
  auto r = BuildTurnPrompt(*tmpl, tok, ordered_json::array({Msg("user", "x")}), nullptr);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace mneme
