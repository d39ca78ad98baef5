// ChatMessage: one turn of a conversation as the API accepts it and the
// session stores it, and its conversion to what ChatTemplate::Render takes.
//
// Request shapes accepted (OpenAI chat format):
//   {"role": "user", "content": "Hi"}
//   {"role": "user", "content": [{"type": "text", "text": "Hi"}, ...]}
//   {"role": "assistant", "content": null}            (content "" then)
//   {"role": "tool", "content": "42", "tool_call_id": "call_1"}
// Roles: system, developer, user, assistant, tool. Content parts must be
// text; image/audio/file parts are refused ("this model accepts text only").
// Text parts are joined with "\n" (as vLLM does), so the template always
// sees a plain string, which every text-only template understands.
// Assistant tool_calls are refused (this server has no tool calling).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/field_reader.h"

namespace mneme::api {

struct ChatMessage {
  std::string role;          // system | developer | user | assistant | tool
  std::string content;       // plain text
  std::string name;          // optional participant name ("" when absent)
  std::string tool_call_id;  // role "tool" only

  bool operator==(const ChatMessage&) const = default;
};

bool IsChatRole(std::string_view role);

// Which content-part types count as text (the rest of the known ones are
// media we refuse): chat {"text"} vs image_url, input_audio, file;
// responses {"input_text", "output_text"} vs input_image, input_file, input_audio.
enum class ContentPartKinds { kChat, kResponses };

// The text of a content value at `path`: a string, or an array of text parts
// joined with "\n". nullopt (error recorded) for anything else.
std::optional<std::string> ReadTextContent(const FieldReader& r, const Json& content,
                                           const std::string& path, ContentPartKinds kinds);

// Reads the array `messages` at `path`. `allow_empty` false: at least one.
std::vector<ChatMessage> ReadChatMessages(const FieldReader& r, const Json& messages,
                                          const std::string& path, bool allow_empty);

// The message as the API shows it: {"role", "content"[, "name"][, "tool_call_id"]}.
nlohmann::ordered_json ChatMessageJson(const ChatMessage& message);

// The messages argument of ChatTemplate::Render: the same objects, with
// "developer" given to the template as "system" (templates predate it).
nlohmann::ordered_json ToTemplateMessages(std::span<const ChatMessage> messages);

}  // namespace mneme::api
