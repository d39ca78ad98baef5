// FieldReader: typed, range-checked reads of request fields, each failure a
// 400 that names the field by its path ("messages[2].content[0].text").
//
// The first error sticks: it is stored in a sink shared by a reader and the
// readers made for nested objects, and every later read returns nullopt, so
// a parser reads fields straight through and checks ok() once per step:
//
//   FieldReader r(body, "", &error);
//   if (auto t = r.Number("temperature", 0, 2)) params.temperature = *t;
//   auto stream = r.Bool("stream");
//   if (!r.ok()) return *error;
//
// JSON null counts as absent (OpenAI accepts null for optional fields).
// Unknown keys are never looked at, hence ignored.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "api/api_error.h"
#include "api/json_io.h"

namespace mneme::api {

using Json = nlohmann::json;

// "a" + "b" -> "a.b"; "" + "b" -> "b".
std::string FieldPath(std::string_view parent, std::string_view key);
// "a" + 3 -> "a[3]".
std::string IndexPath(std::string_view parent, size_t index);
// "string", "integer", "number", "boolean", "array", "object", "null".
std::string_view JsonKindName(const Json& value);
// The same for messages: "a string", "an integer", ..., "null".
std::string_view JsonKindWithArticle(const Json& value);

class FieldReader {
 public:
  // `object` must be a JSON object and outlive the reader; `path` is its own
  // path ("" for the body). Errors go to *sink (the first one only).
  FieldReader(const Json& object, std::string path, std::optional<ApiError>* sink);

  bool ok() const { return !sink_->has_value(); }
  const std::string& path() const { return path_; }
  std::string PathOf(std::string_view key) const { return FieldPath(path_, key); }
  // A reader for a nested object, sharing the sink.
  FieldReader Nested(const Json& object, std::string path) const {
    return FieldReader(object, std::move(path), sink_);
  }

  // Records an error unless one is already recorded.
  void Fail(ApiError error) const;
  void Fail(std::string param, std::string message, std::string code = "invalid_value") const;

  // The value of `key`; nullptr when absent, null, or after an error.
  const Json* Find(std::string_view key) const;
  // Fails with missing_required_parameter when `key` is absent or null.
  const Json* Require(std::string_view key) const;

  // Field reads: nullopt when absent/null or wrong (then an error is recorded).
  std::optional<std::string> String(std::string_view key) const;
  std::optional<bool> Bool(std::string_view key) const;
  // A finite number in [lo, hi].
  std::optional<double> Number(std::string_view key, double lo, double hi) const;
  // An integer (no fraction, no exponent form that parses as a double) in [lo, hi].
  std::optional<int64_t> Integer(std::string_view key, int64_t lo, int64_t hi) const;
  // The value if it is an object / an array (nullptr otherwise).
  const Json* Object(std::string_view key) const;
  const Json* Array(std::string_view key) const;

  // The same checks on a value already in hand (array elements), `path`
  // naming it. `value` must not be null JSON for these to succeed.
  std::optional<std::string> StringValue(const Json& value, const std::string& path) const;
  std::optional<double> NumberValue(const Json& value, const std::string& path, double lo,
                                    double hi) const;
  std::optional<int64_t> IntegerValue(const Json& value, const std::string& path, int64_t lo,
                                      int64_t hi) const;
  bool ExpectKind(const Json& value, const std::string& path, Json::value_t kind) const;

 private:
  void WrongType(const Json& value, const std::string& path, std::string_view expected) const;

  const Json* object_;
  std::string path_;
  std::optional<ApiError>* sink_;
};

}  // namespace mneme::api
