// ChatTemplate: turns an OpenAI-style conversation into the one prompt string
// a model was trained on, by running the model's own Jinja chat template.
//
//   GGUF tokenizer.chat_template ──jinja::Template::Parse──▶ ChatTemplate
//   messages, tools, add_generation_prompt, extra ──Render──▶ prompt text
//
// The template sees the globals Hugging Face's apply_chat_template gives it:
// `messages`, `tools` (null when the request has none), `add_generation_prompt`,
// `bos_token`, `eos_token`, plus caller-chosen extras (e.g. `enable_thinking`).
// Messages are passed through untouched: string or content-part contents,
// tool_calls with arguments as object or string, tool_call_id, name,
// reasoning_content. Templates disagree on these shapes; normalizing them is
// the API layer's business, not ours.
//
// A model whose template is missing or does not parse must still be servable,
// so FromGguf never fails: it falls back to a built-in ChatML renderer and says
// so in warning(). FromSource (a template the user named explicitly) reports
// the parse error instead. See docs/chat-templates.md.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "gguf/gguf.h"
#include "jinja/template.h"
#include "util/status.h"

namespace mneme {

class ChatTemplate {
 public:
  // Parses `source` as given (the interpreter drops one trailing newline,
  // like Jinja's keep_trailing_newline=False). A parse error is
  // INVALID_ARGUMENT with the interpreter's message (line/column).
  static Result<ChatTemplate> FromSource(std::string source, std::string bos_token,
                                         std::string eos_token);

  // The model's tokenizer.chat_template, with bos/eos token text looked up in
  // tokenizer.ggml.tokens by tokenizer.ggml.{bos,eos}_token_id ("" when absent
  // or out of range). No template, a non-string one or one that does not parse
  // gives the ChatML fallback with a warning(); this never fails.
  static ChatTemplate FromGguf(const gguf::GgufFile& file);

  // The built-in fallback, also usable directly:
  //   <|im_start|>{role}\n{content}<|im_end|>\n ... [<|im_start|>assistant\n]
  // `content` is a string, the concatenated "text" parts of a content-part
  // list, or "" (null/absent). Tool calls and reasoning are not rendered.
  static ChatTemplate ChatMl(std::string bos_token, std::string eos_token);

  ChatTemplate(ChatTemplate&&) noexcept = default;
  ChatTemplate& operator=(ChatTemplate&&) noexcept = default;

  // `messages`: a JSON array. `tools`: null or an array. `extra`: null or an
  // object of further globals; it may not redefine messages, tools,
  // add_generation_prompt, bos_token or eos_token.
  // Errors: INVALID_ARGUMENT when the inputs have the wrong shape;
  // FAILED_PRECONDITION when the template raises (raise_exception) or fails
  // while rendering them, carrying the template's / interpreter's message.
  Result<std::string> Render(const nlohmann::ordered_json& messages,
                             const nlohmann::ordered_json& tools, bool add_generation_prompt,
                             const nlohmann::ordered_json& extra = nullptr) const;

  bool is_fallback() const { return !jinja_.has_value(); }
  // Why the fallback is in use ("" when the model's template is).
  const std::string& warning() const { return warning_; }
  // The Jinja source in use ("" for the ChatML fallback).
  const std::string& source() const { return source_; }
  const std::string& bos_token() const { return bos_token_; }
  const std::string& eos_token() const { return eos_token_; }

 private:
  ChatTemplate(std::optional<jinja::Template> jinja, std::string source, std::string bos_token,
               std::string eos_token, std::string warning);

  std::optional<jinja::Template> jinja_;  // nullopt: ChatML fallback
  std::string source_;
  std::string bos_token_;
  std::string eos_token_;
  std::string warning_;
};

}  // namespace mneme
