// GgufFile: opening (mmap or a private copy) and the typed accessors over a
// file that gguf_parser.cc has already validated.
//
// The getters turn "the key is missing" into NOT_FOUND and "the key has the
// wrong type" into DATA_LOSS, both naming the file and the key, so callers
// (model config, tokenizer) can simply MNEME_ASSIGN_OR_RETURN.
#include <limits>

#include "gguf/gguf.h"

namespace mneme::gguf {

GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

Result<GgufFile> GgufFile::Open(const std::string& path) {
  MNEME_ASSIGN_OR_RETURN(MappedFile mapping, MappedFile::Open(path));
  GgufFile file;
  file.name_ = path;
  file.mapping_ = std::move(mapping);
  file.bytes_ = file.mapping_.bytes();
  return Parse(std::move(file));
}

Result<GgufFile> GgufFile::FromBytes(std::span<const uint8_t> bytes, std::string name) {
  GgufFile file;
  file.name_ = std::move(name);
  file.owned_.assign(bytes.begin(), bytes.end());
  file.bytes_ = std::span<const uint8_t>(file.owned_.data(), file.owned_.size());
  return Parse(std::move(file));
}

Status GgufFile::Error(StatusCode code, std::string_view what) const {
  std::string m = name_;
  m += ": ";
  m += what;
  return Status(code, std::move(m));
}

const Value* GgufFile::Find(std::string_view key) const {
  auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].second;
}

namespace {

std::string KeyName(std::string_view key) {
  std::string s;
  s.reserve(key.size() + 2);
  s += '\'';
  s.append(key);
  s += '\'';
  return s;
}

}  // namespace

// Shared by the getters: the value, or NOT_FOUND naming the file and key.
#define MNEME_GGUF_FIND_OR_RETURN(value, key)                                    \
  const Value* value = Find(key);                                                \
  if (value == nullptr) {                                                        \
    return Error(StatusCode::kNotFound, "missing required key " + KeyName(key)); \
  }

Result<std::string_view> GgufFile::GetString(std::string_view key) const {
  MNEME_GGUF_FIND_OR_RETURN(v, key);
  if (auto s = v->AsString()) return *s;
  return Error(StatusCode::kDataLoss, "key " + KeyName(key) + " has type " +
                                          std::string(ValueTypeName(v->type)) +
                                          ", expected STRING");
}

Result<uint64_t> GgufFile::GetUint(std::string_view key) const {
  MNEME_GGUF_FIND_OR_RETURN(v, key);
  if (auto u = v->AsUint()) return *u;
  if (v->IsInteger()) {
    return Error(StatusCode::kDataLoss, "key " + KeyName(key) + " = " + v->DebugString() +
                                            " is negative, expected an unsigned integer");
  }
  return Error(StatusCode::kDataLoss, "key " + KeyName(key) + " has type " +
                                          std::string(ValueTypeName(v->type)) +
                                          ", expected an unsigned integer");
}

Result<int64_t> GgufFile::GetInt(std::string_view key) const {
  MNEME_GGUF_FIND_OR_RETURN(v, key);
  if (auto i = v->AsInt()) return *i;
  if (v->IsInteger()) {
    return Error(StatusCode::kDataLoss,
                 "key " + KeyName(key) + " = " + v->DebugString() + " does not fit in INT64");
  }
  return Error(StatusCode::kDataLoss, "key " + KeyName(key) + " has type " +
                                          std::string(ValueTypeName(v->type)) +
                                          ", expected an integer");
}

Result<double> GgufFile::GetFloat(std::string_view key) const {
  MNEME_GGUF_FIND_OR_RETURN(v, key);
  if (auto d = v->AsFloat()) return *d;
  return Error(StatusCode::kDataLoss, "key " + KeyName(key) + " has type " +
                                          std::string(ValueTypeName(v->type)) +
                                          ", expected a number");
}

Result<bool> GgufFile::GetBool(std::string_view key) const {
  MNEME_GGUF_FIND_OR_RETURN(v, key);
  if (auto b = v->AsBool()) return *b;
  return Error(StatusCode::kDataLoss, "key " + KeyName(key) + " has type " +
                                          std::string(ValueTypeName(v->type)) + ", expected BOOL");
}

namespace {

// "ARRAY of INT32" / "STRING" for type errors.
std::string TypeDescription(const Value& v) {
  std::string s(ValueTypeName(v.type));
  if (const Array* a = v.AsArray()) s += " of " + std::string(ValueTypeName(a->element_type));
  return s;
}

}  // namespace

Result<std::vector<std::string_view>> GgufFile::GetStringArray(std::string_view key) const {
  MNEME_GGUF_FIND_OR_RETURN(v, key);
  const Array* a = v->AsArray();
  if (a == nullptr || a->element_type != ValueType::kString) {
    return Error(StatusCode::kDataLoss, "key " + KeyName(key) + " has type " + TypeDescription(*v) +
                                            ", expected ARRAY of STRING");
  }
  std::vector<std::string_view> out;
  out.reserve(a->items.size());
  for (const Value& item : a->items) out.push_back(std::get<std::string_view>(item.v));
  return out;
}

Result<std::vector<float>> GgufFile::GetFloatArray(std::string_view key) const {
  MNEME_GGUF_FIND_OR_RETURN(v, key);
  const Array* a = v->AsArray();
  if (a == nullptr ||
      (a->element_type != ValueType::kFloat32 && a->element_type != ValueType::kFloat64)) {
    return Error(StatusCode::kDataLoss, "key " + KeyName(key) + " has type " + TypeDescription(*v) +
                                            ", expected ARRAY of FLOAT32");
  }
  std::vector<float> out;
  out.reserve(a->items.size());
  for (const Value& item : a->items) out.push_back(static_cast<float>(std::get<double>(item.v)));
  return out;
}

Result<std::vector<int32_t>> GgufFile::GetInt32Array(std::string_view key) const {
  MNEME_GGUF_FIND_OR_RETURN(v, key);
  const Array* a = v->AsArray();
  bool integers = a != nullptr && Value{.type = a->element_type, .v = {}}.IsInteger();
  if (!integers) {
    return Error(StatusCode::kDataLoss, "key " + KeyName(key) + " has type " + TypeDescription(*v) +
                                            ", expected ARRAY of INT32");
  }
  std::vector<int32_t> out;
  out.reserve(a->items.size());
  for (size_t i = 0; i < a->items.size(); ++i) {
    std::optional<int64_t> x = a->items[i].AsInt();
    if (!x || *x < std::numeric_limits<int32_t>::min() ||
        *x > std::numeric_limits<int32_t>::max()) {
      return Error(StatusCode::kDataLoss, "key " + KeyName(key) + ": element " + std::to_string(i) +
                                              " = " + a->items[i].DebugString() +
                                              " does not fit in INT32");
    }
    out.push_back(static_cast<int32_t>(*x));
  }
  return out;
}

#undef MNEME_GGUF_FIND_OR_RETURN

const TensorInfo* GgufFile::FindTensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> GgufFile::TensorData(const TensorInfo& t) const {
  // Bounds were validated by the parser; t must be one of our tensors.
  CHECK(t.num_bytes == 0 || data_offset_ + t.offset + t.num_bytes <= bytes_.size())
      << name_ << ": tensor view out of bounds";
  if (t.num_bytes == 0) return {};
  return bytes_.subspan(data_offset_ + t.offset, t.num_bytes);
}

}  // namespace mneme::gguf
