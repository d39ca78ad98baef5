// Responses API request parsing (see responses_request.h).
#include "api/responses_request.h"

#include "api/field_reader.h"
#include "api/json_io.h"
#include "api/sampling_fields.h"

namespace mneme::api {

namespace {

bool IsInputRole(std::string_view role) {
  return role == "user" || role == "system" || role == "developer" || role == "assistant";
}

std::vector<ChatMessage> ReadInputItems(const FieldReader& r, const Json& items,
                                        const std::string& path) {
  std::vector<ChatMessage> out;
  if (items.empty()) {
    r.Fail(path, "Invalid 'input': empty array. Expected at least one item.", "empty_array");
    return out;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string ipath = IndexPath(path, i);
    if (!r.ExpectKind(items[i], ipath, Json::value_t::object)) return {};
    FieldReader item = r.Nested(items[i], ipath);
    if (auto type = item.String("type"); type && *type != "message") {
      item.Fail(item.PathOf("type"),
                "Input items of type '" + TruncateForMessage(*type) +
                    "' are not supported by this server (only 'message').",
                "unsupported_value");
      return {};
    }
    ChatMessage msg;
    const Json* role = item.Require("role");
    auto role_text = role ? item.StringValue(*role, item.PathOf("role")) : std::nullopt;
    if (!role_text) return {};
    if (!IsInputRole(*role_text)) {
      item.Fail(item.PathOf("role"),
                "Invalid value for '" + item.PathOf("role") + "': '" +
                    TruncateForMessage(*role_text) +
                    "'. Supported values are: 'user', 'system', 'developer', 'assistant'.");
      return {};
    }
    msg.role = *role_text;
    const Json* content = item.Require("content");
    auto text = content ? ReadTextContent(item, *content, item.PathOf("content"),
                                          ContentPartKinds::kResponses)
                        : std::nullopt;
    if (!text) return {};
    msg.content = std::move(*text);
    out.push_back(std::move(msg));
  }
  return out;
}

void CheckTextFormat(const FieldReader& r) {
  const Json* text = r.Object("text");
  if (text == nullptr) return;
  FieldReader t = r.Nested(*text, r.PathOf("text"));
  const Json* format = t.Object("format");
  if (format == nullptr) return;
  FieldReader f = t.Nested(*format, t.PathOf("format"));
  if (auto type = f.String("type"); type && *type != "text") {
    f.Fail(f.PathOf("type"),
           "text.format type '" + TruncateForMessage(*type) +
               "' is not supported by this server (only 'text').",
           "unsupported_value");
  }
}

}  // namespace

ApiResult<ResponsesRequest> ParseResponsesRequest(std::string_view body,
                                                  const ParseOptions& options) {
  ApiResult<Json> parsed = ParseJsonObject(body, options.max_json_depth);
  if (!parsed.ok()) return parsed.error();
  std::optional<ApiError> error;
  FieldReader r(parsed.value(), "", &error);
  ResponsesRequest req;
  req.model = ReadModel(r);
  if (const Json* input = r.Require("input")) {
    if (input->is_string()) {
      req.input.push_back(ChatMessage{"user", input->get<std::string>(), "", ""});
    } else if (input->is_array()) {
      req.input = ReadInputItems(r, *input, r.PathOf("input"));
    } else {
      r.Fail("input",
             "Invalid type for 'input': expected a string or an array of input items, but got " +
                 std::string(JsonKindWithArticle(*input)) + " instead.",
             "invalid_type");
    }
  }
  req.instructions = r.String("instructions");
  req.previous_response_id = r.String("previous_response_id");
  if (req.previous_response_id && req.previous_response_id->empty()) {
    r.Fail("previous_response_id", "Invalid 'previous_response_id': empty string.");
  }
  req.store = r.Bool("store").value_or(true);
  req.stream = r.Bool("stream").value_or(false);
  ReadSamplingFields(r, options.vocab_size, &req.sampling);
  req.max_output_tokens = ReadMaxTokens(r, {"max_output_tokens"});
  req.metadata = ReadMetadata(r);
  req.user = r.String("user").value_or("");
  if (r.Bool("background").value_or(false)) {
    r.Fail("background", "Background responses are not supported by this server.",
           "unsupported_value");
  }
  if (r.Find("conversation") != nullptr) {
    r.Fail("conversation",
           "Conversations are not supported by this server; use previous_response_id or "
           "sessions.",
           "unsupported_value");
  }
  if (auto trunc = r.String("truncation"); trunc && *trunc != "disabled" && *trunc != "auto") {
    r.Fail("truncation", "Invalid value for 'truncation': expected 'disabled' or 'auto'.");
  }
  CheckTextFormat(r);
  r.Object("reasoning");  // type-checked, ignored (no reasoning models)
  CheckUnsupportedFeatures(r, /*chat=*/false);
  if (error) return *error;
  return req;
}

std::vector<ChatMessage> ResponsesConversation(const ResponsesRequest& request,
                                               std::span<const ChatMessage> history) {
  std::vector<ChatMessage> out;
  out.reserve(1 + history.size() + request.input.size());
  if (request.instructions) out.push_back(ChatMessage{"system", *request.instructions, "", ""});
  out.insert(out.end(), history.begin(), history.end());
  out.insert(out.end(), request.input.begin(), request.input.end());
  return out;
}

}  // namespace mneme::api
