// Completion request parsing (see completion_request.h).
#include "api/completion_request.h"

#include <limits>

#include "api/common_fields.h"
#include "api/field_reader.h"
#include "api/json_io.h"
#include "api/sampling_fields.h"

namespace mneme::api {

namespace {

std::vector<TokenId> ReadTokenIds(const FieldReader& r, const Json& ids, const std::string& path,
                                  int32_t vocab_size) {
  std::vector<TokenId> out;
  const int64_t hi = vocab_size > 0 ? vocab_size - 1 : std::numeric_limits<int32_t>::max();
  out.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    auto id = r.IntegerValue(ids[i], IndexPath(path, i), 0, hi);
    if (!id) return {};
    out.push_back(static_cast<TokenId>(*id));
  }
  return out;
}

void ReadPrompt(const FieldReader& r, int32_t vocab_size, CompletionRequest* req) {
  const Json* p = r.Require("prompt");
  if (p == nullptr) return;
  const std::string path = r.PathOf("prompt");
  if (p->is_string()) {
    req->prompt = p->get<std::string>();
    return;
  }
  if (!p->is_array()) {
    r.Fail(path,
           "Invalid type for 'prompt': expected a string or an array of token ids, but got " +
               std::string(JsonKindWithArticle(*p)) + " instead.",
           "invalid_type");
    return;
  }
  if (p->empty()) {
    r.Fail(path, "Invalid 'prompt': empty array.", "empty_array");
    return;
  }
  const Json& first = (*p)[0];
  if (first.is_number()) {  // [1, 2, 3]: one prompt as token ids
    req->prompt = ReadTokenIds(r, *p, path, vocab_size);
    return;
  }
  if (p->size() > 1) {
    r.Fail(path,
           "Several prompts in one request are not supported by this server; send one "
           "request per prompt.",
           "unsupported_value");
    return;
  }
  const std::string elem = IndexPath(path, 0);
  if (first.is_string()) {
    req->prompt = first.get<std::string>();
  } else if (first.is_array()) {
    if (first.empty()) {
      r.Fail(elem, "Invalid '" + elem + "': empty array.", "empty_array");
      return;
    }
    req->prompt = ReadTokenIds(r, first, elem, vocab_size);
  } else {
    r.Fail(elem,
           "Invalid type for '" + elem + "': expected a string or an array of token ids, but got " +
               std::string(JsonKindWithArticle(first)) + " instead.",
           "invalid_type");
  }
}

}  // namespace

ApiResult<CompletionRequest> ParseCompletionRequest(std::string_view body,
                                                    const ParseOptions& options) {
  ApiResult<Json> parsed = ParseJsonObject(body, options.max_json_depth);
  if (!parsed.ok()) return parsed.error();
  std::optional<ApiError> error;
  FieldReader r(parsed.value(), "", &error);
  CompletionRequest req;
  req.model = ReadModel(r);
  ReadPrompt(r, options.vocab_size, &req);
  ReadSamplingFields(r, options.vocab_size, &req.sampling);
  req.max_tokens = ReadMaxTokens(r, {"max_tokens"});
  StreamFields stream = ReadStreamFields(r);
  req.stream = stream.stream;
  req.include_usage = stream.stream && stream.include_usage;
  req.user = r.String("user").value_or("");
  RequireOne(r, "n");
  RequireOne(r, "best_of");
  if (r.Bool("echo").value_or(false)) {
    r.Fail("echo", "echo is not supported by this server.", "unsupported_value");
  }
  if (auto suffix = r.String("suffix"); suffix && !suffix->empty()) {
    r.Fail("suffix", "suffix is not supported by this server.", "unsupported_value");
  }
  CheckUnsupportedFeatures(r, /*chat=*/false);
  if (error) return *error;
  return req;
}

}  // namespace mneme::api
