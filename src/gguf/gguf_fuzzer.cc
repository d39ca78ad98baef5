// libFuzzer entry point for the GGUF reader (`make fuzz`).
//
// Any input must either be refused with a Status or yield a GgufFile whose
// every accessor is safe: we walk every metadata value (nested arrays
// included), run every typed getter on every key and read every byte of every
// tensor view, so ASan/UBSan see any out-of-bounds view the parser let through.
#include <cstddef>
#include <cstdint>

#include "gguf/gguf.h"

namespace {

uint64_t Touch(const mneme::gguf::Value& v, int depth) {
  uint64_t h = static_cast<uint64_t>(v.type);
  if (auto u = v.AsUint()) h += *u;
  if (auto i = v.AsInt()) h += static_cast<uint64_t>(*i);
  if (auto d = v.AsFloat()) h += *d > 0 ? 1 : 0;
  if (auto b = v.AsBool()) h += *b;
  if (auto s = v.AsString()) {
    for (char c : *s) h += static_cast<unsigned char>(c);
  }
  if (const mneme::gguf::Array* a = v.AsArray()) {
    for (const mneme::gguf::Value& item : a->items) h += Touch(item, depth + 1);
  }
  if (depth == 0) h += v.DebugString().size();
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using mneme::gguf::GgufFile;
  mneme::Result<GgufFile> f = GgufFile::FromBytes(std::span(data, size), "fuzz.gguf");
  if (!f.ok()) {
    if (f.status().message().rfind("fuzz.gguf: ", 0) != 0)
      __builtin_trap();  // errors name the file
    return 0;
  }
  volatile uint64_t sink = f->version() + f->alignment() + f->data_offset();
  for (const auto& [key, value] : f->metadata()) {
    sink = sink + Touch(value, 0);
    if (f->Find(key) != &value) __builtin_trap();  // keys are unique
    (void)f->GetString(key);
    (void)f->GetUint(key);
    (void)f->GetInt(key);
    (void)f->GetFloat(key);
    (void)f->GetBool(key);
    (void)f->GetStringArray(key);
    (void)f->GetFloatArray(key);
    (void)f->GetInt32Array(key);
  }
  for (const mneme::gguf::TensorInfo& t : f->tensors()) {
    if (f->FindTensor(t.name) != &t) __builtin_trap();
    std::span<const uint8_t> bytes = f->TensorData(t);
    if (bytes.size() != t.num_bytes) __builtin_trap();
    for (uint8_t b : bytes) sink = sink + b;
  }
  return 0;
}
