// GgufWriter and MetaValue: little-endian encoding of GGUF metadata and the
// aligned tensor data layout. See gguf_writer.h.
#include "gguf/gguf_writer.h"

#include <bit>
#include <cstring>

#include "util/mapped_file.h"

namespace mneme::gguf {

namespace {

template <typename T>
void Put(std::string& out, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.append(buf, sizeof(T));
}

void PutString(std::string& out, std::string_view s) {
  Put<uint64_t>(out, s.size());
  out.append(s);
}

template <typename T>
std::string Encode(T v) {
  std::string s;
  Put<T>(s, v);
  return s;
}

uint32_t Id(ValueType t) {
  return static_cast<uint32_t>(t);
}

uint64_t AlignUp(uint64_t x, uint64_t a) {
  return (x + a - 1) / a * a;
}

}  // namespace

MetaValue MetaValue::Uint8(uint8_t v) {
  return {Id(ValueType::kUint8), Encode(v)};
}
MetaValue MetaValue::Int8(int8_t v) {
  return {Id(ValueType::kInt8), Encode(v)};
}
MetaValue MetaValue::Uint16(uint16_t v) {
  return {Id(ValueType::kUint16), Encode(v)};
}
MetaValue MetaValue::Int16(int16_t v) {
  return {Id(ValueType::kInt16), Encode(v)};
}
MetaValue MetaValue::Uint32(uint32_t v) {
  return {Id(ValueType::kUint32), Encode(v)};
}
MetaValue MetaValue::Int32(int32_t v) {
  return {Id(ValueType::kInt32), Encode(v)};
}
MetaValue MetaValue::Uint64(uint64_t v) {
  return {Id(ValueType::kUint64), Encode(v)};
}
MetaValue MetaValue::Int64(int64_t v) {
  return {Id(ValueType::kInt64), Encode(v)};
}
MetaValue MetaValue::Float32(float v) {
  return {Id(ValueType::kFloat32), Encode(v)};
}
MetaValue MetaValue::Float64(double v) {
  return {Id(ValueType::kFloat64), Encode(v)};
}
MetaValue MetaValue::Bool(bool v) {
  return {Id(ValueType::kBool), Encode<uint8_t>(v ? 1 : 0)};
}

MetaValue MetaValue::String(std::string_view v) {
  std::string s;
  PutString(s, v);
  return {Id(ValueType::kString), std::move(s)};
}

MetaValue MetaValue::Array(ValueType element_type, const std::vector<MetaValue>& items) {
  std::string s;
  Put<uint32_t>(s, Id(element_type));
  Put<uint64_t>(s, items.size());
  for (const MetaValue& item : items) {
    CHECK(item.type_id_ == Id(element_type))
        << "array of " << ValueTypeName(element_type) << " given an item of type " << item.type_id_;
    s += item.payload_;
  }
  return {Id(ValueType::kArray), std::move(s)};
}

MetaValue MetaValue::StringArray(const std::vector<std::string>& items) {
  std::string s;
  Put<uint32_t>(s, Id(ValueType::kString));
  Put<uint64_t>(s, items.size());
  for (const std::string& item : items) PutString(s, item);
  return {Id(ValueType::kArray), std::move(s)};
}

MetaValue MetaValue::StringArray(std::initializer_list<std::string_view> items) {
  std::string s;
  Put<uint32_t>(s, Id(ValueType::kString));
  Put<uint64_t>(s, items.size());
  for (std::string_view item : items) PutString(s, item);
  return {Id(ValueType::kArray), std::move(s)};
}

MetaValue MetaValue::Float32Array(std::span<const float> items) {
  std::string s;
  Put<uint32_t>(s, Id(ValueType::kFloat32));
  Put<uint64_t>(s, items.size());
  for (float f : items) Put<float>(s, f);
  return {Id(ValueType::kArray), std::move(s)};
}

MetaValue MetaValue::Int32Array(std::span<const int32_t> items) {
  std::string s;
  Put<uint32_t>(s, Id(ValueType::kInt32));
  Put<uint64_t>(s, items.size());
  for (int32_t i : items) Put<int32_t>(s, i);
  return {Id(ValueType::kArray), std::move(s)};
}

MetaValue MetaValue::Raw(uint32_t type_id, std::string payload) {
  return {type_id, std::move(payload)};
}

void GgufWriter::Set(std::string_view key, MetaValue value) {
  for (auto& [k, v] : metadata_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  metadata_.emplace_back(std::string(key), std::move(value));
}

void GgufWriter::SetAlignment(uint32_t alignment) {
  CHECK(alignment != 0 && std::has_single_bit(alignment)) << "alignment " << alignment;
  alignment_ = alignment;
  Set("general.alignment", MetaValue::Uint32(alignment));
}

Status GgufWriter::AddTensor(std::string_view name, std::vector<uint64_t> shape, TensorType type,
                             std::span<const uint8_t> data) {
  std::string who = "tensor '" + std::string(name) + "'";
  const TensorTypeInfo* info = FindTensorTypeInfo(type);
  if (info == nullptr) return InvalidArgument(who + ": unknown tensor type");
  if (shape.size() > kMaxDims) return InvalidArgument(who + ": more than 4 dimensions");
  for (const PendingTensor& t : tensors_) {
    if (t.name == name) return InvalidArgument(who + ": duplicate tensor name");
  }
  uint64_t n = 1;
  for (uint64_t ne : shape) {
    if (ne != 0 && n > (uint64_t{1} << 62) / ne) return InvalidArgument(who + ": shape overflows");
    n *= ne;
  }
  if ((shape.empty() ? 1 : shape[0]) % info->block_size != 0) {
    return InvalidArgument(who + ": first dimension is not a multiple of the block size");
  }
  uint64_t bytes = n / info->block_size * info->type_size;
  if (bytes != data.size()) {
    return InvalidArgument(who + ": shape and type need " + std::to_string(bytes) + " bytes, got " +
                           std::to_string(data.size()));
  }
  tensors_.push_back({std::string(name), std::move(shape), type, {data.begin(), data.end()}});
  return Status::Ok();
}

Status GgufWriter::AddTensorF32(std::string_view name, std::vector<uint64_t> shape,
                                std::span<const float> data) {
  auto bytes = std::span(reinterpret_cast<const uint8_t*>(data.data()), data.size_bytes());
  return AddTensor(name, std::move(shape), TensorType::kF32, bytes);
}

std::vector<uint8_t> GgufWriter::Serialize() const {
  std::string out;
  out.append("GGUF", 4);
  Put<uint32_t>(out, version_);
  Put<uint64_t>(out, tensors_.size());
  Put<uint64_t>(out, metadata_.size());
  for (const auto& [key, value] : metadata_) {
    PutString(out, key);
    Put<uint32_t>(out, value.type_id());
    out += value.payload();
  }
  uint64_t offset = 0;
  for (const PendingTensor& t : tensors_) {
    PutString(out, t.name);
    Put<uint32_t>(out, static_cast<uint32_t>(t.shape.size()));
    for (uint64_t ne : t.shape) Put<uint64_t>(out, ne);
    Put<uint32_t>(out, static_cast<uint32_t>(t.type));
    Put<uint64_t>(out, offset);
    offset = AlignUp(offset + t.data.size(), alignment_);
  }
  if (!tensors_.empty()) {
    out.resize(AlignUp(out.size(), alignment_), '\0');
    for (const PendingTensor& t : tensors_) {
      out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size());
      out.resize(AlignUp(out.size(), alignment_), '\0');
    }
  }
  return {out.begin(), out.end()};
}

Status GgufWriter::WriteFile(const std::string& path) const {
  std::vector<uint8_t> bytes = Serialize();
  return WriteStringToFile(
      path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

}  // namespace mneme::gguf
