// Typed request-field reads with path-named 400s (see field_reader.h).
#include "api/field_reader.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "util/check.h"

namespace mneme::api {

namespace {

// Numbers in messages: integers print as integers, others with up to 6
// significant digits ("0.7", "1e+300").
std::string FormatNumber(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

std::string Quoted(std::string_view path) {
  return "'" + std::string(path) + "'";
}

}  // namespace

std::string FieldPath(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  std::string p(parent);
  p += '.';
  p += key;
  return p;
}

std::string IndexPath(std::string_view parent, size_t index) {
  std::string p(parent);
  p += '[';
  p += std::to_string(index);
  p += ']';
  return p;
}

std::string_view JsonKindName(const Json& value) {
  switch (value.type()) {
    case Json::value_t::string: return "string";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "integer";
    case Json::value_t::number_float: return "number";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::array: return "array";
    case Json::value_t::object: return "object";
    case Json::value_t::null: return "null";
    case Json::value_t::binary:
    case Json::value_t::discarded: break;
  }
  return "value";
}

std::string_view JsonKindWithArticle(const Json& value) {
  switch (value.type()) {
    case Json::value_t::string: return "a string";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::array: return "an array";
    case Json::value_t::object: return "an object";
    case Json::value_t::null: return "null";
    case Json::value_t::binary:
    case Json::value_t::discarded: break;
  }
  return "a value";
}

FieldReader::FieldReader(const Json& object, std::string path, std::optional<ApiError>* sink)
    : object_(&object), path_(std::move(path)), sink_(sink) {
  CHECK(object.is_object()) << "FieldReader over a non-object at '" << path_ << "'";
}

void FieldReader::Fail(ApiError error) const {
  if (!sink_->has_value()) *sink_ = std::move(error);
}

void FieldReader::Fail(std::string param, std::string message, std::string code) const {
  if (sink_->has_value()) return;
  Fail(InvalidRequest(std::move(param), std::move(message), std::move(code)));
}

void FieldReader::WrongType(const Json& value, const std::string& path,
                            std::string_view expected) const {
  Fail(path,
       "Invalid type for " + Quoted(path) + ": expected " + std::string(expected) + ", but got " +
           std::string(JsonKindWithArticle(value)) + " instead.",
       "invalid_type");
}

const Json* FieldReader::Find(std::string_view key) const {
  if (!ok()) return nullptr;
  auto it = object_->find(key);
  if (it == object_->end() || it->is_null()) return nullptr;
  return &*it;
}

const Json* FieldReader::Require(std::string_view key) const {
  if (!ok()) return nullptr;
  const Json* v = Find(key);
  if (v == nullptr) {
    Fail(PathOf(key), "Missing required parameter: " + Quoted(PathOf(key)) + ".",
         "missing_required_parameter");
  }
  return v;
}

std::optional<std::string> FieldReader::String(std::string_view key) const {
  const Json* v = Find(key);
  if (v == nullptr) return std::nullopt;
  return StringValue(*v, PathOf(key));
}

std::optional<bool> FieldReader::Bool(std::string_view key) const {
  const Json* v = Find(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) {
    WrongType(*v, PathOf(key), "a boolean");
    return std::nullopt;
  }
  return v->get<bool>();
}

std::optional<double> FieldReader::Number(std::string_view key, double lo, double hi) const {
  const Json* v = Find(key);
  if (v == nullptr) return std::nullopt;
  return NumberValue(*v, PathOf(key), lo, hi);
}

std::optional<int64_t> FieldReader::Integer(std::string_view key, int64_t lo, int64_t hi) const {
  const Json* v = Find(key);
  if (v == nullptr) return std::nullopt;
  return IntegerValue(*v, PathOf(key), lo, hi);
}

const Json* FieldReader::Object(std::string_view key) const {
  const Json* v = Find(key);
  if (v == nullptr) return nullptr;
  return ExpectKind(*v, PathOf(key), Json::value_t::object) ? v : nullptr;
}

const Json* FieldReader::Array(std::string_view key) const {
  const Json* v = Find(key);
  if (v == nullptr) return nullptr;
  return ExpectKind(*v, PathOf(key), Json::value_t::array) ? v : nullptr;
}

std::optional<std::string> FieldReader::StringValue(const Json& value,
                                                    const std::string& path) const {
  if (!ok()) return std::nullopt;
  if (!value.is_string()) {
    WrongType(value, path, "a string");
    return std::nullopt;
  }
  return value.get_ref<const std::string&>();
}

std::optional<double> FieldReader::NumberValue(const Json& value, const std::string& path,
                                               double lo, double hi) const {
  if (!ok()) return std::nullopt;
  if (!value.is_number()) {
    WrongType(value, path, "a number");
    return std::nullopt;
  }
  double d = value.get<double>();
  if (!std::isfinite(d)) {
    Fail(path, "Invalid " + Quoted(path) + ": expected a finite number.");
    return std::nullopt;
  }
  if (d < lo || d > hi) {
    Fail(path, "Invalid " + Quoted(path) + ": expected a value between " + FormatNumber(lo) +
                   " and " + FormatNumber(hi) + ", but got " + FormatNumber(d) + " instead.");
    return std::nullopt;
  }
  return d;
}

std::optional<int64_t> FieldReader::IntegerValue(const Json& value, const std::string& path,
                                                 int64_t lo, int64_t hi) const {
  if (!ok()) return std::nullopt;
  if (!value.is_number_integer()) {
    WrongType(value, path, "an integer");
    return std::nullopt;
  }
  // An unsigned value above INT64_MAX is above any hi we use.
  bool too_big = value.is_number_unsigned() &&
                 value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  int64_t n = too_big ? std::numeric_limits<int64_t>::max() : value.get<int64_t>();
  if (too_big || n < lo || n > hi) {
    std::string got = value.is_number_unsigned() ? std::to_string(value.get<uint64_t>())
                                                 : std::to_string(value.get<int64_t>());
    Fail(path, "Invalid " + Quoted(path) + ": expected an integer between " + std::to_string(lo) +
                   " and " + std::to_string(hi) + ", but got " + got + " instead.");
    return std::nullopt;
  }
  return n;
}

bool FieldReader::ExpectKind(const Json& value, const std::string& path, Json::value_t kind) const {
  if (!ok()) return false;
  if (value.type() == kind) return true;
  WrongType(value, path,
            kind == Json::value_t::object  ? "an object"
            : kind == Json::value_t::array ? "an array"
                                           : "another type");
  return false;
}

}  // namespace mneme::api
