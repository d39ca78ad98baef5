// Shared non-sampling request fields (see common_fields.h).
#include "api/common_fields.h"

#include <limits>
#include <string_view>

namespace mneme::api {

namespace {

void Unsupported(const FieldReader& r, std::string_view key, std::string what) {
  r.Fail(r.PathOf(key), what + " not supported by this server.", "unsupported_value");
}

// Accepts null, [] (nothing asked for); refuses anything else.
void RefuseNonEmptyArray(const FieldReader& r, std::string_view key, std::string what) {
  const Json* v = r.Find(key);
  if (v == nullptr) return;
  if (!v->is_array()) {
    r.ExpectKind(*v, r.PathOf(key), Json::value_t::array);
    return;
  }
  if (!v->empty()) Unsupported(r, key, std::move(what));
}

// Accepts null, "none", "auto"; refuses other strings and objects.
void RefuseToolChoice(const FieldReader& r, std::string_view key) {
  const Json* v = r.Find(key);
  if (v == nullptr) return;
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    if (s == "none" || s == "auto") return;
  } else if (!v->is_object()) {
    r.Fail(r.PathOf(key),
           "Invalid type for '" + r.PathOf(key) + "': expected a string or an object, but got " +
               std::string(JsonKindWithArticle(*v)) + " instead.",
           "invalid_type");
    return;
  }
  Unsupported(r, key, "Tool calling is");
}

void CheckResponseFormat(const FieldReader& r) {
  const Json* v = r.Object("response_format");
  if (v == nullptr) return;
  FieldReader f = r.Nested(*v, r.PathOf("response_format"));
  auto type = f.String("type");
  if (type && *type != "text") {
    f.Fail(f.PathOf("type"),
           "response_format type '" + TruncateForMessage(*type) +
               "' is not supported by this server (only 'text').",
           "unsupported_value");
  }
}

}  // namespace

std::string ReadModel(const FieldReader& r) {
  auto model = r.String("model");
  if (!model) return "";
  if (model->size() > kMaxModelNameBytes) {
    r.Fail(r.PathOf("model"),
           "Invalid 'model': longer than " + std::to_string(kMaxModelNameBytes) + " bytes.");
    return "";
  }
  return *model;
}

bool IsValidSessionId(std::string_view id) {
  if (id.empty() || id.size() > kMaxSessionIdBytes) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.' || c == ':';
    if (!ok) return false;
  }
  return true;
}

std::optional<std::string> ReadSessionId(const FieldReader& r, std::string_view key) {
  auto id = r.String(key);
  if (!id) return std::nullopt;
  if (!IsValidSessionId(*id)) {
    r.Fail(r.PathOf(key), "Invalid '" + r.PathOf(key) +
                              "': a session id is 1 to 128 characters of A-Z, a-z, 0-9, "
                              "'-', '_', '.', ':'.");
    return std::nullopt;
  }
  return id;
}

Metadata ReadMetadata(const FieldReader& r, std::string_view key) {
  Metadata out;
  const Json* v = r.Object(key);
  if (v == nullptr) return out;
  const std::string path = r.PathOf(key);
  if (v->size() > kMaxMetadataEntries) {
    r.Fail(path, "Invalid '" + path + "': at most " + std::to_string(kMaxMetadataEntries) +
                     " key-value pairs are allowed, but got " + std::to_string(v->size()) + ".");
    return out;
  }
  for (const auto& [k, value] : v->items()) {
    const std::string at = FieldPath(path, k);
    if (k.size() > kMaxMetadataKeyBytes) {
      r.Fail(path, "Invalid '" + path + "': key '" + TruncateForMessage(k) + "' is longer than " +
                       std::to_string(kMaxMetadataKeyBytes) + " bytes.");
      return {};
    }
    auto s = r.StringValue(value, at);
    if (!s) return {};
    if (s->size() > kMaxMetadataValueBytes) {
      r.Fail(at, "Invalid '" + at + "': longer than " + std::to_string(kMaxMetadataValueBytes) +
                     " bytes.");
      return {};
    }
    out.emplace(k, std::move(*s));
  }
  return out;
}

void RequireOne(const FieldReader& r, std::string_view key) {
  auto n = r.Integer(key, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  if (n && *n != 1) {
    r.Fail(
        r.PathOf(key),
        "Invalid '" + r.PathOf(key) + "': only 1 is supported, but got " + std::to_string(*n) + ".",
        "unsupported_value");
  }
}

StreamFields ReadStreamFields(const FieldReader& r) {
  StreamFields out;
  if (auto s = r.Bool("stream")) out.stream = *s;
  if (const Json* opts = r.Object("stream_options")) {
    FieldReader o = r.Nested(*opts, r.PathOf("stream_options"));
    if (auto u = o.Bool("include_usage")) out.include_usage = *u;
  }
  return out;
}

void CheckUnsupportedFeatures(const FieldReader& r, bool chat) {
  // Accepted and ignored, but a wrong type is still an error.
  r.String("user");
  r.Bool("store");
  r.Bool("parallel_tool_calls");
  r.String("service_tier");
  r.String("reasoning_effort");

  RefuseNonEmptyArray(r, "tools", "Tools are");
  RefuseToolChoice(r, "tool_choice");
  // logprobs: a boolean in chat, a count in completions.
  if (chat) {
    if (r.Bool("logprobs").value_or(false)) Unsupported(r, "logprobs", "Log probabilities are");
  } else if (auto n = r.Integer("logprobs", 0, 5); n && *n > 0) {
    Unsupported(r, "logprobs", "Log probabilities are");
  }
  if (auto n = r.Integer("top_logprobs", 0, 20); n && *n > 0) {
    Unsupported(r, "top_logprobs", "Log probabilities are");
  }
  if (!chat) return;
  RefuseNonEmptyArray(r, "functions", "Function calling is");
  RefuseToolChoice(r, "function_call");
  CheckResponseFormat(r);
  if (const Json* m = r.Array("modalities")) {
    for (size_t i = 0; i < m->size(); ++i) {
      auto s = r.StringValue((*m)[i], IndexPath(r.PathOf("modalities"), i));
      if (!s) return;
      if (*s != "text") {
        r.Fail(IndexPath(r.PathOf("modalities"), i),
               "Output modality '" + TruncateForMessage(*s) +
                   "' is not supported: this model produces text only.",
               "unsupported_value");
        return;
      }
    }
  }
  if (r.Find("audio") != nullptr) Unsupported(r, "audio", "Audio output is");
}

}  // namespace mneme::api
