// See value.h. Printing and equality follow JavaScript because the reference
// is written in it: Display() is RuntimeValue.toString(), JsString() is
// String(value.value), LooseEquals() is `==`.
#include "jinja/value.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "jinja/js_string.h"

namespace mneme::jinja {

namespace {

constexpr int kMaxPrintDepth = 256;  // cyclic namespaces/arrays stop here

// JavaScript array-index keys ("0".."4294967294") come first in
// Object.entries order.
bool IsArrayIndexKey(const std::string& k, uint64_t* index) {
  if (k.empty() || k.size() > 10) return false;
  if (k.size() > 1 && k[0] == '0') return false;
  uint64_t v = 0;
  for (char c : k) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v >= 4294967295ull) return false;
  *index = v;
  return true;
}

}  // namespace

const Value* CallArgs::Kwarg(std::string_view name) const {
  for (const auto& [k, v] : kwargs) {
    if (k == name) return &v;
  }
  return nullptr;
}

const Value* CallArgs::Get(size_t i, std::string_view name) const {
  if (i < positional.size()) return &positional[i];
  return Kwarg(name);
}

const Value* ObjectData::Find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

Value* ObjectData::Find(std::string_view key) {
  for (auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

void ObjectData::Set(std::string key, Value value) {
  depth = std::max(depth, value.depth() + 1);
  if (Value* existing = Find(key)) {
    *existing = std::move(value);
  } else {
    entries.emplace_back(std::move(key), std::move(value));
  }
}

Value Value::Bool(bool b) {
  Value v(ValueKind::kBool);
  v.b_ = b;
  return v;
}

Value Value::Int(double n) {
  Value v(ValueKind::kInt);
  v.n_ = n;
  return v;
}

Value Value::Float(double n) {
  Value v(ValueKind::kFloat);
  v.n_ = n;
  return v;
}

Value Value::String(std::string s) {
  Value v(ValueKind::kString);
  v.p_ = std::make_shared<std::string>(std::move(s));
  return v;
}

uint32_t Value::depth() const {
  switch (kind_) {
    case ValueKind::kArray: return array().depth;
    case ValueKind::kObject:
    case ValueKind::kNamespace: return object().depth;
    case ValueKind::kFunction: return function().depth;
    default: return 0;
  }
}

Value Value::Array(std::vector<Value> items, bool is_tuple) {
  Value v(ValueKind::kArray);
  auto data = std::make_shared<ArrayData>();
  for (const Value& item : items) data->depth = std::max(data->depth, item.depth() + 1);
  data->items = std::move(items);
  data->is_tuple = is_tuple;
  v.p_ = std::move(data);
  return v;
}

Value Value::Object(std::vector<std::pair<std::string, Value>> entries) {
  Value v(ValueKind::kObject);
  auto data = std::make_shared<ObjectData>();
  for (const auto& [k, x] : entries) data->depth = std::max(data->depth, x.depth() + 1);
  data->entries = std::move(entries);
  v.p_ = std::move(data);
  return v;
}

Value Value::Namespace(std::vector<std::pair<std::string, Value>> entries) {
  Value v = Object(std::move(entries));
  v.kind_ = ValueKind::kNamespace;
  return v;
}

Value Value::Function(std::string name, NativeFn fn) {
  Value v(ValueKind::kFunction);
  auto data = std::make_shared<FunctionData>();
  data->name = std::move(name);
  data->fn = std::move(fn);
  v.p_ = std::move(data);
  return v;
}

namespace {

Result<Value> FromJsonAt(const nlohmann::ordered_json& j, uint32_t depth);

}  // namespace

Result<Value> Value::FromJson(const nlohmann::ordered_json& j) {
  return FromJsonAt(j, 0);
}

namespace {

Result<Value> FromJsonAt(const nlohmann::ordered_json& j, uint32_t depth) {
  if (depth >= kMaxValueDepth) return InvalidArgument("template context nested too deeply");
  using Value = ::mneme::jinja::Value;
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::Null();
    case nlohmann::ordered_json::value_t::boolean: return Value::Bool(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value::Int(static_cast<double>(j.get<int64_t>()));
    case nlohmann::ordered_json::value_t::number_unsigned:
      return Value::Int(static_cast<double>(j.get<uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float: {
      const double d = j.get<double>();
      return (std::isfinite(d) && std::trunc(d) == d) ? Value::Int(d) : Value::Float(d);
    }
    case nlohmann::ordered_json::value_t::string: return Value::String(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& e : j) {
        MNEME_ASSIGN_OR_RETURN(Value item, FromJsonAt(e, depth + 1));
        items.push_back(std::move(item));
      }
      return Value::Array(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      std::vector<std::pair<uint64_t, std::string>> index_keys;
      std::vector<std::pair<std::string, Value>> entries;
      for (auto it = j.begin(); it != j.end(); ++it) {
        uint64_t index = 0;
        if (IsArrayIndexKey(it.key(), &index)) index_keys.emplace_back(index, it.key());
      }
      std::sort(index_keys.begin(), index_keys.end());
      for (const auto& [index, key] : index_keys) {
        MNEME_ASSIGN_OR_RETURN(Value v, FromJsonAt(j.at(key), depth + 1));
        entries.emplace_back(key, std::move(v));
      }
      for (auto it = j.begin(); it != j.end(); ++it) {
        uint64_t index = 0;
        if (IsArrayIndexKey(it.key(), &index)) continue;
        MNEME_ASSIGN_OR_RETURN(Value v, FromJsonAt(it.value(), depth + 1));
        entries.emplace_back(it.key(), std::move(v));
      }
      return Value::Object(std::move(entries));
    }
    default: return Value();  // binary / discarded: not produced by JSON text
  }
}

}  // namespace

std::string_view TypeName(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined: return "UndefinedValue";
    case ValueKind::kNull: return "NullValue";
    case ValueKind::kBool: return "BooleanValue";
    case ValueKind::kInt: return "IntegerValue";
    case ValueKind::kFloat: return "FloatValue";
    case ValueKind::kString: return "StringValue";
    case ValueKind::kArray: return v.is_tuple() ? "TupleValue" : "ArrayValue";
    case ValueKind::kObject: return "ObjectValue";
    case ValueKind::kNamespace: return "NamespaceValue";
    case ValueKind::kFunction: return "FunctionValue";
  }
  return "?";
}

bool Truthy(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
    case ValueKind::kNull: return false;
    case ValueKind::kBool: return v.bool_value();
    case ValueKind::kInt:
    case ValueKind::kFloat: return v.number() != 0 && !std::isnan(v.number());
    case ValueKind::kString: return !v.str().empty();
    case ValueKind::kArray: return !v.array().items.empty();
    case ValueKind::kObject: return !v.object().entries.empty();
    case ValueKind::kNamespace:
    case ValueKind::kFunction: return true;
  }
  return false;
}

namespace {

std::string FloatDisplay(double d) {
  if (d == 0 && std::signbit(d)) return "-0.0";
  // Number.prototype.toFixed(1) prints exact digits below 1e21.
  if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < 1e21) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.1f", d);
    return buf;
  }
  return JsNumberToString(d);
}

Status AppendDisplayAt(const Value& v, int depth, std::string* out);

void AppendJsString(const Value& v, int depth, std::string* out) {
  switch (v.kind()) {
    case ValueKind::kUndefined: out->append("undefined"); return;
    case ValueKind::kNull: out->append("null"); return;
    case ValueKind::kBool: out->append(v.bool_value() ? "true" : "false"); return;
    case ValueKind::kInt:
    case ValueKind::kFloat: out->append(JsNumberToString(v.number())); return;
    case ValueKind::kString: out->append(v.str()); return;
    case ValueKind::kArray: {
      if (depth > kMaxPrintDepth) return;
      bool first = true;
      for (const Value& e : v.array().items) {
        if (!first) out->push_back(',');
        first = false;
        Status ignored = AppendDisplayAt(e, depth + 1, out);  // JS would throw; print what we can
        (void)ignored;
      }
      return;
    }
    case ValueKind::kObject:
    case ValueKind::kNamespace: out->append("[object Map]"); return;
    case ValueKind::kFunction:
      out->append("function " + v.function().name + "() { [native code] }");
      return;
  }
}

Status AppendDisplayAt(const Value& v, int depth, std::string* out) {
  switch (v.kind()) {
    case ValueKind::kFloat: out->append(FloatDisplay(v.number())); return Status::Ok();
    case ValueKind::kArray:
    case ValueKind::kObject:
    case ValueKind::kNamespace:
      if (depth > kMaxPrintDepth) return InvalidArgument("value nested too deeply to print");
      return AppendJson(v, JsonOptions(), /*undefined_as_null=*/false, 0, out);
    default: AppendJsString(v, depth, out); return Status::Ok();
  }
}

int TypeRank(const Value& v) {  // JS typeof of value.value, for ==
  switch (v.kind()) {
    case ValueKind::kUndefined: return 0;
    case ValueKind::kNull: return 1;
    case ValueKind::kBool: return 2;
    case ValueKind::kInt:
    case ValueKind::kFloat: return 3;
    case ValueKind::kString: return 4;
    default: return 5;  // object
  }
}

}  // namespace

Status AppendDisplay(const Value& v, std::string* out) {
  return AppendDisplayAt(v, 0, out);
}

std::string Display(const Value& v) {
  std::string out;
  Status ignored = AppendDisplayAt(v, 0, &out);
  (void)ignored;
  return out;
}

std::string JsString(const Value& v) {
  std::string out;
  AppendJsString(v, 0, &out);
  return out;
}

Status AppendJson(const Value& v, const JsonOptions& options, bool undefined_as_null, int depth,
                  std::string* out) {
  if (depth > kMaxPrintDepth) return InvalidArgument("tojson: value nested too deeply (cyclic?)");
  switch (v.kind()) {
    case ValueKind::kNull: out->append("null"); return Status::Ok();
    case ValueKind::kUndefined:
      out->append(undefined_as_null ? "null" : "undefined");
      return Status::Ok();
    case ValueKind::kBool: out->append(v.bool_value() ? "true" : "false"); return Status::Ok();
    case ValueKind::kInt:
    case ValueKind::kFloat:
      out->append(std::isfinite(v.number()) ? JsNumberToString(v.number()) : "null");
      return Status::Ok();
    case ValueKind::kString:
      AppendJsonString(v.str(), options.ensure_ascii, out);
      return Status::Ok();
    case ValueKind::kFunction: return InvalidArgument("Cannot convert to JSON: FunctionValue");
    case ValueKind::kArray:
      if (v.is_tuple()) return InvalidArgument("Cannot convert to JSON: TupleValue");
      break;
    default: break;
  }
  const std::string item_sep = options.has_separators ? options.item_separator
                               : options.indent > 0   ? ","
                                                      : ", ";
  const std::string key_sep = options.has_separators ? options.key_separator : ": ";
  std::string base_pad;
  std::string child_pad;
  if (options.indent > 0) {
    base_pad.assign(1 + static_cast<size_t>(options.indent) * depth, ' ');
    base_pad[0] = '\n';
    child_pad = base_pad;
    child_pad.append(static_cast<size_t>(options.indent), ' ');
  }
  if (v.is_array()) {
    const auto& items = v.array().items;
    out->push_back('[');
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out->append(item_sep);
      out->append(child_pad);
      MNEME_RETURN_IF_ERROR(AppendJson(items[i], options, undefined_as_null, depth + 1, out));
    }
    if (!items.empty()) out->append(base_pad);
    out->push_back(']');
    return Status::Ok();
  }
  std::vector<const std::pair<std::string, Value>*> entries;
  for (const auto& e : v.object().entries) entries.push_back(&e);
  if (options.sort_keys) {
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto* a, const auto* b) { return a->first < b->first; });
  }
  out->push_back('{');
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) out->append(item_sep);
    out->append(child_pad);
    AppendJsonString(entries[i]->first, options.ensure_ascii, out);
    out->append(key_sep);
    MNEME_RETURN_IF_ERROR(
        AppendJson(entries[i]->second, options, undefined_as_null, depth + 1, out));
  }
  if (!entries.empty()) out->append(base_pad);
  out->push_back('}');
  return Status::Ok();
}

bool StrictEquals(const Value& a, const Value& b) {
  const int ra = TypeRank(a);
  if (ra != TypeRank(b)) return false;
  switch (ra) {
    case 0:
    case 1: return true;
    case 2: return a.bool_value() == b.bool_value();
    case 3: return a.number() == b.number();
    case 4: return a.str() == b.str();
    default: return a.identity() == b.identity();
  }
}

bool LooseEquals(const Value& a, const Value& b) {
  const int ra = TypeRank(a);
  const int rb = TypeRank(b);
  if (ra == rb) return StrictEquals(a, b);
  if (ra <= 1 || rb <= 1) return ra <= 1 && rb <= 1;  // null == undefined only
  if (ra == 2) return LooseEquals(Value::Int(a.bool_value() ? 1 : 0), b);
  if (rb == 2) return LooseEquals(a, Value::Int(b.bool_value() ? 1 : 0));
  if (ra == 3 && rb == 4) return a.number() == JsStringToNumber(b.str());
  if (ra == 4 && rb == 3) return JsStringToNumber(a.str()) == b.number();
  // An object against a string or number: compare its primitive form.
  if (ra == 5) return LooseEquals(Value::String(JsString(a)), b);
  return LooseEquals(a, Value::String(JsString(b)));
}

}  // namespace mneme::jinja
