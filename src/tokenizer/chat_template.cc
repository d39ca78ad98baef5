// ChatTemplate: context building around the Jinja interpreter, the GGUF
// lookups, and the ChatML fallback (rendered here in C++, so that a model
// stays servable even when the interpreter cannot handle its template).
#include "tokenizer/chat_template.h"

#include <array>
#include <string_view>
#include <utility>

namespace mneme {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kTemplateKey = "tokenizer.chat_template";
constexpr std::array<std::string_view, 5> kReservedGlobals = {
    "messages", "tools", "add_generation_prompt", "bos_token", "eos_token"};

// Text of token `id_key` (e.g. tokenizer.ggml.bos_token_id), or "".
std::string TokenText(const gguf::GgufFile& file, std::string_view id_key) {
  const gguf::Value* id_value = file.Find(id_key);
  const gguf::Value* tokens_value = file.Find("tokenizer.ggml.tokens");
  if (id_value == nullptr || tokens_value == nullptr) return "";
  std::optional<uint64_t> id = id_value->AsUint();
  const gguf::Array* tokens = tokens_value->AsArray();
  if (!id.has_value() || tokens == nullptr || *id >= tokens->items.size()) return "";
  std::optional<std::string_view> text = tokens->items[*id].AsString();
  return text.has_value() ? std::string(*text) : std::string();
}

// The text of a message's content for ChatML: a string as is, the "text"
// parts of a content-part list concatenated, null/absent as "".
Result<std::string> ContentText(const Json& message) {
  auto it = message.find("content");
  if (it == message.end() || it->is_null()) return std::string();
  if (it->is_string()) return it->get<std::string>();
  if (!it->is_array()) return InvalidArgument("message content must be a string, an array or null");
  std::string text;
  for (const Json& part : *it) {
    if (!part.is_object()) return InvalidArgument("content parts must be objects");
    auto type = part.find("type");
    auto part_text = part.find("text");
    if (type != part.end() && *type == "text" && part_text != part.end() &&
        part_text->is_string()) {
      text += part_text->get_ref<const std::string&>();
    }
  }
  return text;
}

Result<std::string> RenderChatMl(const Json& messages, bool add_generation_prompt) {
  std::string out;
  for (const Json& message : messages) {
    if (!message.is_object()) return InvalidArgument("each message must be a JSON object");
    auto role = message.find("role");
    if (role == message.end() || !role->is_string()) {
      return InvalidArgument("each message needs a string \"role\"");
    }
    MNEME_ASSIGN_OR_RETURN(std::string content, ContentText(message));
    out += "<|im_start|>";
    out += role->get_ref<const std::string&>();
    out += '\n';
    out += content;
    out += "<|im_end|>\n";
  }
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

}  // namespace

ChatTemplate::ChatTemplate(std::optional<jinja::Template> jinja, std::string source,
                           std::string bos_token, std::string eos_token, std::string warning)
    : jinja_(std::move(jinja)),
      source_(std::move(source)),
      bos_token_(std::move(bos_token)),
      eos_token_(std::move(eos_token)),
      warning_(std::move(warning)) {}

Result<ChatTemplate> ChatTemplate::FromSource(std::string source, std::string bos_token,
                                              std::string eos_token) {
  Result<jinja::Template> parsed = jinja::Template::Parse(source);
  if (!parsed.ok()) {
    return InvalidArgument("chat template does not parse: " + parsed.status().message());
  }
  return ChatTemplate(std::move(parsed).value(), std::move(source), std::move(bos_token),
                      std::move(eos_token), "");
}

ChatTemplate ChatTemplate::ChatMl(std::string bos_token, std::string eos_token) {
  return ChatTemplate(std::nullopt, "", std::move(bos_token), std::move(eos_token), "");
}

ChatTemplate ChatTemplate::FromGguf(const gguf::GgufFile& file) {
  std::string bos = TokenText(file, "tokenizer.ggml.bos_token_id");
  std::string eos = TokenText(file, "tokenizer.ggml.eos_token_id");
  auto fallback = [&](const std::string& why) {
    ChatTemplate t = ChatMl(std::move(bos), std::move(eos));
    t.warning_ = file.name() + ": " + why + "; using the built-in ChatML template";
    return t;
  };
  const gguf::Value* value = file.Find(kTemplateKey);
  if (value == nullptr) return fallback("no tokenizer.chat_template");
  std::optional<std::string_view> source = value->AsString();
  if (!source.has_value()) {
    return fallback("tokenizer.chat_template has type " +
                    std::string(gguf::ValueTypeName(value->type)) + ", not a string");
  }
  Result<ChatTemplate> parsed = FromSource(std::string(*source), bos, eos);
  if (!parsed.ok()) return fallback("tokenizer.chat_template " + parsed.status().message());
  return std::move(parsed).value();
}

Result<std::string> ChatTemplate::Render(const Json& messages, const Json& tools,
                                         bool add_generation_prompt, const Json& extra) const {
  if (!messages.is_array()) return InvalidArgument("messages must be a JSON array");
  if (!tools.is_null() && !tools.is_array())
    return InvalidArgument("tools must be null or an array");
  if (!extra.is_null() && !extra.is_object()) {
    return InvalidArgument("extra template variables must be a JSON object");
  }
  if (!jinja_.has_value()) return RenderChatMl(messages, add_generation_prompt);

  Json context = Json::object();
  context["messages"] = messages;
  context["tools"] = tools;
  context["add_generation_prompt"] = add_generation_prompt;
  context["bos_token"] = bos_token_;
  context["eos_token"] = eos_token_;
  if (extra.is_object()) {
    for (const auto& [key, value] : extra.items()) {
      for (std::string_view reserved : kReservedGlobals) {
        if (key == reserved) {
          return InvalidArgument("extra template variable '" + key +
                                 "' would replace a built-in one");
        }
      }
      context[key] = value;
    }
  }
  Result<std::string> rendered = jinja_->Render(context);
  if (!rendered.ok()) return FailedPrecondition(rendered.status().message());
  return rendered;
}

}  // namespace mneme
