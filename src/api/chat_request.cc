// Chat completion request parsing (see chat_request.h).
#include "api/chat_request.h"

#include "api/json_io.h"
#include "api/sampling_fields.h"

namespace mneme::api {

ApiResult<ChatCompletionRequest> ParseChatCompletionRequest(std::string_view body,
                                                            const ParseOptions& options) {
  ApiResult<Json> parsed = ParseJsonObject(body, options.max_json_depth);
  if (!parsed.ok()) return parsed.error();
  const Json& root = parsed.value();

  std::optional<ApiError> error;
  FieldReader r(root, "", &error);
  ChatCompletionRequest req;
  req.model = ReadModel(r);
  if (const Json* messages = r.Require("messages")) {
    req.messages = ReadChatMessages(r, *messages, r.PathOf("messages"), /*allow_empty=*/false);
  }
  ReadSamplingFields(r, options.vocab_size, &req.sampling);
  req.max_tokens = ReadMaxTokens(r, {"max_completion_tokens", "max_tokens"});
  StreamFields stream = ReadStreamFields(r);
  req.stream = stream.stream;
  req.include_usage = stream.stream && stream.include_usage;
  req.session_id = ReadSessionId(r);
  req.user = r.String("user").value_or("");
  req.metadata = ReadMetadata(r);
  RequireOne(r, "n");
  CheckUnsupportedFeatures(r, /*chat=*/true);
  if (error) return *error;
  return req;
}

}  // namespace mneme::api
