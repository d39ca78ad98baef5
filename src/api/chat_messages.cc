// Chat messages: parsing, validation and template conversion (see chat_messages.h).
#include "api/chat_messages.h"

#include <algorithm>
#include <span>

#include "api/json_io.h"

namespace mneme::api {

namespace {

bool Contains(std::span<const std::string_view> set, std::string_view s) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

std::string ListQuoted(std::span<const std::string_view> set) {
  std::string out;
  for (std::string_view s : set) {
    if (!out.empty()) out += ", ";
    out += "'" + std::string(s) + "'";
  }
  return out;
}

constexpr std::string_view kRoles[] = {"system", "developer", "user", "assistant", "tool"};
constexpr std::string_view kChatText[] = {"text"};
constexpr std::string_view kChatMedia[] = {"image_url", "input_audio", "file"};
constexpr std::string_view kResponsesText[] = {"input_text", "output_text"};
constexpr std::string_view kResponsesMedia[] = {"input_image", "input_file", "input_audio"};

}  // namespace

bool IsChatRole(std::string_view role) {
  return Contains(kRoles, role);
}

std::optional<std::string> ReadTextContent(const FieldReader& r, const Json& content,
                                           const std::string& path, ContentPartKinds kinds) {
  const bool chat = kinds == ContentPartKinds::kChat;
  std::span<const std::string_view> text_kinds =
      chat ? std::span<const std::string_view>(kChatText) : kResponsesText;
  std::span<const std::string_view> media_kinds =
      chat ? std::span<const std::string_view>(kChatMedia) : kResponsesMedia;
  if (!r.ok()) return std::nullopt;
  if (content.is_string()) return content.get_ref<const std::string&>();
  if (!content.is_array()) {
    r.Fail(path,
           "Invalid type for '" + path +
               "': expected a string or an array of content parts, "
               "but got " +
               std::string(JsonKindWithArticle(content)) + " instead.",
           "invalid_type");
    return std::nullopt;
  }
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string part_path = IndexPath(path, i);
    const Json& part = content[i];
    if (!r.ExpectKind(part, part_path, Json::value_t::object)) return std::nullopt;
    FieldReader pr = r.Nested(part, part_path);
    const Json* type_value = pr.Require("type");
    auto type = type_value ? pr.StringValue(*type_value, pr.PathOf("type")) : std::nullopt;
    if (!type) return std::nullopt;
    if (Contains(media_kinds, *type)) {
      r.Fail(
          pr.PathOf("type"),
          "Content parts of type '" + *type + "' are not supported: this model accepts text only.",
          "unsupported_value");
      return std::nullopt;
    }
    if (!Contains(text_kinds, *type)) {
      r.Fail(pr.PathOf("type"), "Invalid value for '" + pr.PathOf("type") + "': '" +
                                    TruncateForMessage(*type) +
                                    "'. Supported values are: " + ListQuoted(text_kinds) + ".");
      return std::nullopt;
    }
    const Json* text_value = pr.Require("text");
    auto part_text = text_value ? pr.StringValue(*text_value, pr.PathOf("text")) : std::nullopt;
    if (!part_text) return std::nullopt;
    if (i > 0) text += '\n';
    text += *part_text;
  }
  return text;
}

std::vector<ChatMessage> ReadChatMessages(const FieldReader& r, const Json& messages,
                                          const std::string& path, bool allow_empty) {
  std::vector<ChatMessage> out;
  if (!r.ExpectKind(messages, path, Json::value_t::array)) return out;
  if (messages.empty() && !allow_empty) {
    r.Fail(path, "Invalid '" + path + "': empty array. Expected at least one message.",
           "empty_array");
    return out;
  }
  out.reserve(messages.size());
  for (size_t i = 0; i < messages.size() && r.ok(); ++i) {
    const std::string mpath = IndexPath(path, i);
    if (!r.ExpectKind(messages[i], mpath, Json::value_t::object)) break;
    FieldReader m = r.Nested(messages[i], mpath);
    ChatMessage msg;
    const Json* role_value = m.Require("role");
    auto role = role_value ? m.StringValue(*role_value, m.PathOf("role")) : std::nullopt;
    if (!role) break;
    if (!IsChatRole(*role)) {
      m.Fail(m.PathOf("role"), "Invalid value for '" + m.PathOf("role") + "': '" +
                                   TruncateForMessage(*role) +
                                   "'. Supported values are: " + ListQuoted(kRoles) + ".");
      break;
    }
    msg.role = *role;
    const Json* content = m.Find("content");
    if (content == nullptr) {
      // OpenAI lets an assistant message (one that made tool calls) omit content.
      if (msg.role != "assistant") {
        m.Require("content");
        break;
      }
    } else {
      auto text = ReadTextContent(m, *content, m.PathOf("content"), ContentPartKinds::kChat);
      if (!text) break;
      msg.content = std::move(*text);
    }
    if (auto name = m.String("name")) msg.name = std::move(*name);
    if (const Json* calls = m.Find("tool_calls")) {
      if (!calls->is_array() || !calls->empty()) {
        m.Fail(m.PathOf("tool_calls"), "Tool calls are not supported by this server.",
               "unsupported_value");
        break;
      }
    }
    if (msg.role == "tool") {
      const Json* id = m.Require("tool_call_id");
      auto id_text = id ? m.StringValue(*id, m.PathOf("tool_call_id")) : std::nullopt;
      if (!id_text) break;
      msg.tool_call_id = std::move(*id_text);
    }
    if (!m.ok()) break;
    out.push_back(std::move(msg));
  }
  if (!r.ok()) out.clear();
  return out;
}

nlohmann::ordered_json ChatMessageJson(const ChatMessage& message) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["role"] = message.role;
  j["content"] = message.content;
  if (!message.name.empty()) j["name"] = message.name;
  if (!message.tool_call_id.empty()) j["tool_call_id"] = message.tool_call_id;
  return j;
}

nlohmann::ordered_json ToTemplateMessages(std::span<const ChatMessage> messages) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ChatMessage& m : messages) {
    nlohmann::ordered_json j = ChatMessageJson(m);
    if (m.role == "developer") j["role"] = "system";
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace mneme::api
