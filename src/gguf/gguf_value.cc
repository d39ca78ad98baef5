// Metadata values and the tensor type table: the vocabulary the reader,
// the writer and `mneme info` share.
//
// Block layouts (elements per block, bytes per block) are ggml's: a tensor of
// n elements of a quantized type takes n / block_size * type_size bytes, and
// its first dimension must be a multiple of block_size.
#include <charconv>
#include <cstdio>
#include <limits>

#include "gguf/gguf.h"

namespace mneme::gguf {

std::string_view ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kUint8: return "UINT8";
    case ValueType::kInt8: return "INT8";
    case ValueType::kUint16: return "UINT16";
    case ValueType::kInt16: return "INT16";
    case ValueType::kUint32: return "UINT32";
    case ValueType::kInt32: return "INT32";
    case ValueType::kFloat32: return "FLOAT32";
    case ValueType::kBool: return "BOOL";
    case ValueType::kString: return "STRING";
    case ValueType::kArray: return "ARRAY";
    case ValueType::kUint64: return "UINT64";
    case ValueType::kInt64: return "INT64";
    case ValueType::kFloat64: return "FLOAT64";
  }
  return "UNKNOWN";
}

namespace {

struct TypeRow {
  uint32_t id;
  TensorTypeInfo info;
};

// Sorted by id. QK_K = 256 for the k-quants and most i-quants.
constexpr TypeRow kTensorTypes[] = {
    {0, {"F32", 1, 4}},         {1, {"F16", 1, 2}},         {2, {"Q4_0", 32, 18}},
    {3, {"Q4_1", 32, 20}},      {6, {"Q5_0", 32, 22}},      {7, {"Q5_1", 32, 24}},
    {8, {"Q8_0", 32, 34}},      {9, {"Q8_1", 32, 36}},      {10, {"Q2_K", 256, 84}},
    {11, {"Q3_K", 256, 110}},   {12, {"Q4_K", 256, 144}},   {13, {"Q5_K", 256, 176}},
    {14, {"Q6_K", 256, 210}},   {15, {"Q8_K", 256, 292}},   {16, {"IQ2_XXS", 256, 66}},
    {17, {"IQ2_XS", 256, 74}},  {18, {"IQ3_XXS", 256, 98}}, {19, {"IQ1_S", 256, 50}},
    {20, {"IQ4_NL", 32, 18}},   {21, {"IQ3_S", 256, 110}},  {22, {"IQ2_S", 256, 82}},
    {23, {"IQ4_XS", 256, 136}}, {24, {"I8", 1, 1}},         {25, {"I16", 1, 2}},
    {26, {"I32", 1, 4}},        {27, {"I64", 1, 8}},        {28, {"F64", 1, 8}},
    {29, {"IQ1_M", 256, 56}},   {30, {"BF16", 1, 2}},       {34, {"TQ1_0", 256, 54}},
    {35, {"TQ2_0", 256, 66}},   {39, {"MXFP4", 32, 17}},
};

bool IsUnsignedType(ValueType t) {
  return t == ValueType::kUint8 || t == ValueType::kUint16 || t == ValueType::kUint32 ||
         t == ValueType::kUint64;
}

bool IsSignedType(ValueType t) {
  return t == ValueType::kInt8 || t == ValueType::kInt16 || t == ValueType::kInt32 ||
         t == ValueType::kInt64;
}

// Appends `s` quoted, escaping control bytes, quotes and backslashes; strings
// longer than `max_len` bytes are cut and their length noted.
void AppendQuoted(std::string& out, std::string_view s, size_t max_len) {
  out += '"';
  size_t n = std::min(s.size(), max_len);
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  if (n < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
}

void AppendFloat(std::string& out, double d, bool is_f32) {
  char buf[64];
  std::to_chars_result r = is_f32 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(d))
                                  : std::to_chars(buf, buf + sizeof buf, d);
  out.append(buf, r.ptr);
}

void AppendDebug(std::string& out, const Value& value, size_t max_items) {
  switch (value.type) {
    case ValueType::kUint8:
    case ValueType::kUint16:
    case ValueType::kUint32:
    case ValueType::kUint64:
      if (const auto* u = std::get_if<uint64_t>(&value.v)) out += std::to_string(*u);
      return;
    case ValueType::kInt8:
    case ValueType::kInt16:
    case ValueType::kInt32:
    case ValueType::kInt64:
      if (const auto* i = std::get_if<int64_t>(&value.v)) out += std::to_string(*i);
      return;
    case ValueType::kFloat32:
    case ValueType::kFloat64:
      if (const auto* d = std::get_if<double>(&value.v)) {
        AppendFloat(out, *d, value.type == ValueType::kFloat32);
      }
      return;
    case ValueType::kBool:
      if (const auto* b = std::get_if<bool>(&value.v)) out += *b ? "true" : "false";
      return;
    case ValueType::kString:
      if (const auto* s = std::get_if<std::string_view>(&value.v)) AppendQuoted(out, *s, 120);
      return;
    case ValueType::kArray: {
      const Array* a = value.AsArray();
      if (a == nullptr) return;
      out += '[';
      size_t n = std::min(a->items.size(), max_items);
      for (size_t i = 0; i < n; ++i) {
        if (i > 0) out += ", ";
        AppendDebug(out, a->items[i], max_items);
      }
      if (n < a->items.size()) out += n > 0 ? ", ..." : "...";
      out += "] (";
      out += std::to_string(a->items.size());
      out += " x ";
      out += ValueTypeName(a->element_type);
      out += ')';
      return;
    }
  }
}

}  // namespace

const TensorTypeInfo* FindTensorTypeInfo(uint32_t type_id) {
  for (const TypeRow& row : kTensorTypes) {
    if (row.id == type_id) return &row.info;
  }
  return nullptr;
}

bool Value::IsInteger() const {
  return IsUnsignedType(type) || IsSignedType(type);
}

std::optional<uint64_t> Value::AsUint() const {
  if (const auto* u = std::get_if<uint64_t>(&v); u != nullptr && IsUnsignedType(type)) return *u;
  if (const auto* i = std::get_if<int64_t>(&v); i != nullptr && IsSignedType(type) && *i >= 0) {
    return static_cast<uint64_t>(*i);
  }
  return std::nullopt;
}

std::optional<int64_t> Value::AsInt() const {
  if (const auto* i = std::get_if<int64_t>(&v); i != nullptr && IsSignedType(type)) return *i;
  if (const auto* u = std::get_if<uint64_t>(&v);
      u != nullptr && IsUnsignedType(type) &&
      *u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return static_cast<int64_t>(*u);
  }
  return std::nullopt;
}

std::optional<double> Value::AsFloat() const {
  if (const auto* d = std::get_if<double>(&v);
      d != nullptr && (type == ValueType::kFloat32 || type == ValueType::kFloat64)) {
    return *d;
  }
  if (const auto* u = std::get_if<uint64_t>(&v); u != nullptr && IsUnsignedType(type)) {
    return static_cast<double>(*u);
  }
  if (const auto* i = std::get_if<int64_t>(&v); i != nullptr && IsSignedType(type)) {
    return static_cast<double>(*i);
  }
  return std::nullopt;
}

std::optional<bool> Value::AsBool() const {
  if (const auto* b = std::get_if<bool>(&v); b != nullptr && type == ValueType::kBool) return *b;
  return std::nullopt;
}

std::optional<std::string_view> Value::AsString() const {
  if (const auto* s = std::get_if<std::string_view>(&v);
      s != nullptr && type == ValueType::kString) {
    return *s;
  }
  return std::nullopt;
}

const Array* Value::AsArray() const {
  if (const auto* a = std::get_if<std::shared_ptr<const Array>>(&v);
      a != nullptr && type == ValueType::kArray) {
    return a->get();
  }
  return nullptr;
}

std::string Value::DebugString(size_t max_items) const {
  std::string out;
  AppendDebug(out, *this, max_items);
  return out;
}

}  // namespace mneme::gguf
