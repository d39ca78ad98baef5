// BuildTurnPrompt / AfterAnswer (see chat_prompt.h).
#include "tokenizer/chat_prompt.h"

#include <utility>

namespace mneme {

Result<TurnPrompt> BuildTurnPrompt(const ChatTemplate& chat_template, const Tokenizer& tokenizer,
                                   const nlohmann::ordered_json& messages,
                                   const ConversationTokens* previous,
                                   const nlohmann::ordered_json& tools) {
  TurnPrompt p;
  MNEME_ASSIGN_OR_RETURN(p.text, chat_template.Render(messages, tools,
                                                      /*add_generation_prompt=*/true));
  if (previous != nullptr && !previous->tokens.empty() &&
      p.text.size() >= previous->text.size() &&
      std::string_view(p.text).substr(0, previous->text.size()) == previous->text) {
    const std::string_view suffix = std::string_view(p.text).substr(previous->text.size());
    const std::vector<TokenId> tail =
        tokenizer.Encode(suffix, {.add_special = false, .parse_special = true});
    p.tokens.reserve(previous->tokens.size() + tail.size());
    p.tokens = previous->tokens;
    p.tokens.insert(p.tokens.end(), tail.begin(), tail.end());
    p.num_reused_tokens = static_cast<int>(previous->tokens.size());
    p.incremental = true;
    return p;
  }
  const Vocab& vocab = tokenizer.vocab();
  p.tokens = tokenizer.Encode(p.text, {.add_special = false, .parse_special = true});
  const bool starts_with_bos = !p.tokens.empty() && p.tokens.front() == vocab.bos_id;
  if (vocab.add_bos && vocab.IsValid(vocab.bos_id) && !starts_with_bos) {
    p.tokens.insert(p.tokens.begin(), vocab.bos_id);
  }
  return p;
}

ConversationTokens AfterAnswer(const TurnPrompt& prompt, std::string_view answer_text,
                               std::span<const TokenId> answer_tokens) {
  ConversationTokens c;
  c.text = prompt.text;
  c.text.append(answer_text);
  c.tokens = prompt.tokens;
  c.tokens.insert(c.tokens.end(), answer_tokens.begin(), answer_tokens.end());
  return c;
}

}  // namespace mneme
