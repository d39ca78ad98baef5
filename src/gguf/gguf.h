// GGUF: the model file format of llama.cpp and Ollama (v2 and v3).
//
// Layout (little-endian):
//
//   magic "GGUF" | u32 version | u64 n_tensors | u64 n_kv
//   n_kv x   { string key | u32 value_type | value }
//   n_tensors x { string name | u32 n_dims | u64 ne[n_dims] | u32 ggml_type | u64 offset }
//   padding to general.alignment (default 32)
//   tensor data (each tensor at data_start + offset, offsets aligned)
//
//   string = u64 length + bytes (no NUL); array = u32 elem_type + u64 count + elems
//
// GgufFile::Open maps the file and validates everything up front: every
// length against the end of the file, every tensor's bytes in bounds and
// non-overlapping, dimension products without overflow, known tensor types.
// After a successful Open, every accessor is safe; tensor views point into the
// mapping (zero copy) and live as long as the GgufFile.
//
// Every error message starts with the file name and says what is wrong.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "util/mapped_file.h"
#include "util/status.h"

namespace mneme::gguf {

// Metadata value types, numbered as in the file.
enum class ValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};
std::string_view ValueTypeName(ValueType t);

// ggml tensor types, numbered as in the file. Only the ones we know the block
// layout of are accepted; anything else is an "unknown tensor type" error.
// (Knowing a type's layout is enough to validate and list it; which types the
// kernels can compute with is the model module's business.)
enum class TensorType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ8_1 = 9,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kQ8_K = 15,
  kIQ2_XXS = 16,
  kIQ2_XS = 17,
  kIQ3_XXS = 18,
  kIQ1_S = 19,
  kIQ4_NL = 20,
  kIQ3_S = 21,
  kIQ2_S = 22,
  kIQ4_XS = 23,
  kI8 = 24,
  kI16 = 25,
  kI32 = 26,
  kI64 = 27,
  kF64 = 28,
  kIQ1_M = 29,
  kBF16 = 30,
  kTQ1_0 = 34,
  kTQ2_0 = 35,
  kMXFP4 = 39,
};

struct TensorTypeInfo {
  std::string_view name;  // "F32", "Q4_K", ...
  uint32_t block_size;    // elements per block
  uint32_t type_size;     // bytes per block
};
// Returns nullptr for a type id we do not know.
const TensorTypeInfo* FindTensorTypeInfo(uint32_t type_id);
inline const TensorTypeInfo* FindTensorTypeInfo(TensorType t) {
  return FindTensorTypeInfo(static_cast<uint32_t>(t));
}

// Limits the reader enforces (see docs/gguf.md).
inline constexpr uint32_t kMaxDims = 4;     // GGML_MAX_DIMS
inline constexpr int kMaxArrayNesting = 8;  // arrays of arrays of ...
inline constexpr uint64_t kDefaultAlignment = 32;

struct Value;
// An array value. Every element has `element_type`; elements of a nested
// array are themselves arrays (each with its own element type).
struct Array {
  ValueType element_type = ValueType::kUint8;
  std::vector<Value> items;
};

// One metadata value. Strings point into the mapped file (zero copy).
// Unsigned integer types hold uint64_t, signed ones int64_t, F32/F64 double,
// BOOL bool, STRING string_view and ARRAY shared_ptr<const Array>.
struct Value {
  ValueType type = ValueType::kUint8;
  std::variant<uint64_t, int64_t, double, bool, std::string_view, std::shared_ptr<const Array>> v;

  // Conversions that succeed only when the stored type fits; they never
  // silently truncate (e.g. a negative INT32 is not a uint).
  bool IsInteger() const;
  std::optional<uint64_t> AsUint() const;
  std::optional<int64_t> AsInt() const;
  std::optional<double> AsFloat() const;  // F32/F64 (and integers)
  std::optional<bool> AsBool() const;
  std::optional<std::string_view> AsString() const;
  const Array* AsArray() const;
  // Human-readable, for `mneme info` (arrays and long strings abbreviated).
  std::string DebugString(size_t max_items = 8) const;
};

struct TensorInfo {
  std::string_view name;
  std::vector<uint64_t> shape;  // ggml order: shape[0] is the contiguous dimension
  TensorType type = TensorType::kF32;
  uint64_t offset = 0;  // relative to the start of the data section
  uint64_t num_elements = 0;
  uint64_t num_bytes = 0;
};

class GgufFile {
 public:
  // Maps and validates `path`.
  static Result<GgufFile> Open(const std::string& path);
  // Parses a copy of `bytes` (for fuzzing and tests); `name` is used in errors.
  static Result<GgufFile> FromBytes(std::span<const uint8_t> bytes, std::string name);

  GgufFile(GgufFile&&) noexcept;
  GgufFile& operator=(GgufFile&&) noexcept;
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;
  ~GgufFile();

  const std::string& name() const { return name_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // absolute file offset of tensor data
  uint64_t file_size() const { return bytes_.size(); }
  // The whole file (e.g. to fingerprint a model).
  std::span<const uint8_t> bytes() const { return bytes_; }

  // Metadata, in file order.
  const std::vector<std::pair<std::string_view, Value>>& metadata() const { return metadata_; }
  const Value* Find(std::string_view key) const;

  // Typed getters. A missing key is NOT_FOUND ("FILE: missing required key
  // 'k'"), a wrong type is DATA_LOSS ("FILE: key 'k' has type X, expected Y").
  // GetUint/GetInt accept any integer type whose value fits (a negative value
  // is an error for GetUint); GetFloat accepts F32, F64 and integers.
  // GetFloatArray takes F32/F64 elements, GetInt32Array integer elements that
  // fit in int32. GetStringArray's views point into the file.
  Result<std::string_view> GetString(std::string_view key) const;
  Result<uint64_t> GetUint(std::string_view key) const;
  Result<int64_t> GetInt(std::string_view key) const;
  Result<double> GetFloat(std::string_view key) const;
  Result<bool> GetBool(std::string_view key) const;
  Result<std::vector<std::string_view>> GetStringArray(std::string_view key) const;
  Result<std::vector<float>> GetFloatArray(std::string_view key) const;
  Result<std::vector<int32_t>> GetInt32Array(std::string_view key) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* FindTensor(std::string_view name) const;
  // The tensor's bytes inside the mapping (`t` must come from tensors()).
  // The pointer is aligned to min(alignment(), 4096) for Open (mmap is page
  // aligned) and to min(alignment(), 16) for FromBytes (malloc); with
  // general.alignment < 4 a float view may be misaligned, so copy (memcpy)
  // rather than reinterpret_cast when alignment() is smaller than the type.
  std::span<const uint8_t> TensorData(const TensorInfo& t) const;

 private:
  GgufFile() = default;
  static Result<GgufFile> Parse(GgufFile file);                // gguf_parser.cc
  Status Error(StatusCode code, std::string_view what) const;  // "NAME: what"

  std::string name_;
  MappedFile mapping_;          // when opened from a path
  std::vector<uint8_t> owned_;  // when parsed from bytes
  std::span<const uint8_t> bytes_;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string_view, Value>> metadata_;
  std::map<std::string_view, size_t, std::less<>> metadata_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string_view, size_t, std::less<>> tensor_index_;

  friend class Parser;
};

}  // namespace mneme::gguf
