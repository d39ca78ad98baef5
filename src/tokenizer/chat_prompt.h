// ChatPrompt: the prompt of a conversation turn, rendered and tokenized in
// O(new tokens) when the chat template allows it.
//
// A session keeps, after each turn, the text its tokens stand for and the
// tokens themselves: the turn's prompt tokens followed by the model's own
// answer tokens (not a re-tokenization of the answer text, so the KV cache of
// those tokens stays valid for the next turn). The next turn renders the whole
// conversation with the chat template (cheap: microseconds per message) and
//
//   prefix-stable  the new render starts with the stored text: only the
//                  suffix (end of the last answer, the new messages, the
//                  generation prompt) is tokenized and appended to the stored
//                  tokens. Tokenization is where the time goes; it is now
//                  proportional to the new text.
//   rewritten      the template changed history (e.g. strips the reasoning of
//                  earlier answers, trims whitespace, moves a system prompt):
//                  the whole render is tokenized. The radix cache still
//                  reuses whatever leading tokens are unchanged.
//
//   stored text  "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!"
//   new render   "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n
//                 <|im_start|>user\nMore?<|im_end|>\n<|im_start|>assistant\n"
//                                                                 └ suffix only ┘
//
// The suffix is tokenized with special-token text recognized, as the whole
// prompt is (llama-server does the same for chat prompts). A full
// tokenization adds BOS when the vocabulary asks for it and the render does
// not already start with the BOS text (Llama 3 templates print it).
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"
#include "util/status.h"

namespace mneme {

// What a session stores between turns: `tokens` stand for `text`.
struct ConversationTokens {
  std::string text;
  std::vector<TokenId> tokens;
};

struct TurnPrompt {
  std::string text;             // the rendered prompt (generation prompt included)
  std::vector<TokenId> tokens;  // its tokens
  int num_reused_tokens = 0;    // leading tokens carried over from the stored state
  bool incremental = false;     // whether only the suffix was tokenized
};

// `messages`: the whole conversation, this turn's new messages included, as
// the template takes them (ChatTemplate::Render). `previous`: the stored
// state after the last turn, or null for a first turn.
Result<TurnPrompt> BuildTurnPrompt(const ChatTemplate& chat_template, const Tokenizer& tokenizer,
                                   const nlohmann::ordered_json& messages,
                                   const ConversationTokens* previous,
                                   const nlohmann::ordered_json& tools = nullptr);

// The state to store after the model answered `answer_text` with
// `answer_tokens` (its own tokens, end-of-generation token excluded).
ConversationTokens AfterAnswer(const TurnPrompt& prompt, std::string_view answer_text,
                               std::span<const TokenId> answer_tokens);

}  // namespace mneme
