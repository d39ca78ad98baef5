// GgufWriter: builds GGUF files (v2/v3) in memory, for tests and tools.
//
// Tests make synthetic models with it; `mneme make-model` will too. The
// output is what the reader expects and what llama.cpp writes:
//
//   header | metadata in insertion order | tensor infos in insertion order |
//   zero padding to the alignment | each tensor's bytes, zero padded so the
//   next one starts aligned (offsets relative to the data section)
//
//   GgufWriter w;
//   w.Set("general.architecture", MetaValue::String("llama"));
//   w.Set("tokenizer.ggml.tokens", MetaValue::StringArray({"<unk>", "a"}));
//   MNEME_RETURN_IF_ERROR(w.AddTensorF32("output_norm.weight", {64}, weights));
//   MNEME_RETURN_IF_ERROR(w.WriteFile("tiny.gguf"));
//
// Handing the writer a value of the wrong kind (an array whose items do not
// match its element type, an alignment that is not a power of two) is a bug
// in the caller and CHECK-fails; tensor problems that can come from data
// (size mismatch, duplicate name) are returned as Status.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf.h"
#include "util/status.h"

namespace mneme::gguf {

// A metadata value owned by the writer, kept already encoded (the reader's
// Value points into a file and cannot be built from scratch).
class MetaValue {
 public:
  static MetaValue Uint8(uint8_t v);
  static MetaValue Int8(int8_t v);
  static MetaValue Uint16(uint16_t v);
  static MetaValue Int16(int16_t v);
  static MetaValue Uint32(uint32_t v);
  static MetaValue Int32(int32_t v);
  static MetaValue Uint64(uint64_t v);
  static MetaValue Int64(int64_t v);
  static MetaValue Float32(float v);
  static MetaValue Float64(double v);
  static MetaValue Bool(bool v);
  static MetaValue String(std::string_view v);
  // An array of `element_type`; every item must have that type (CHECK).
  // Items may themselves be arrays (of any element type): nested arrays.
  static MetaValue Array(ValueType element_type, const std::vector<MetaValue>& items);
  static MetaValue StringArray(const std::vector<std::string>& items);
  static MetaValue StringArray(std::initializer_list<std::string_view> items);
  static MetaValue Float32Array(std::span<const float> items);
  static MetaValue Int32Array(std::span<const int32_t> items);
  // For tests of the reader: any type id and payload bytes, unchecked.
  static MetaValue Raw(uint32_t type_id, std::string payload);

  uint32_t type_id() const { return type_id_; }
  // The encoded value without its type tag.
  const std::string& payload() const { return payload_; }

 private:
  MetaValue(uint32_t type_id, std::string payload)
      : type_id_(type_id), payload_(std::move(payload)) {}
  uint32_t type_id_;
  std::string payload_;
};

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3) : version_(version) {}

  // Adds a key, or replaces its value in place if it exists.
  void Set(std::string_view key, MetaValue value);
  // Sets the alignment and writes general.alignment (a power of two, CHECK).
  void SetAlignment(uint32_t alignment);

  // Adds a tensor; `data` must hold exactly the bytes its shape and type
  // need. `shape` is in ggml order (shape[0] contiguous), at most 4 dims.
  Status AddTensor(std::string_view name, std::vector<uint64_t> shape, TensorType type,
                   std::span<const uint8_t> data);
  Status AddTensorF32(std::string_view name, std::vector<uint64_t> shape,
                      std::span<const float> data);

  std::vector<uint8_t> Serialize() const;
  Status WriteFile(const std::string& path) const;

 private:
  struct PendingTensor {
    std::string name;
    std::vector<uint64_t> shape;
    TensorType type;
    std::vector<uint8_t> data;
  };

  uint32_t version_;
  uint64_t alignment_ = kDefaultAlignment;
  std::vector<std::pair<std::string, MetaValue>> metadata_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace mneme::gguf
