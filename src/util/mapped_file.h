// MappedFile: a read-only, move-only memory mapping of a whole file.
//
// GGUF model files are opened this way so tensor data is never copied: the
// kernel pages weights in on demand and shares them between processes.
// An empty file maps to an empty span (mmap of length 0 is not allowed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "util/status.h"

namespace mneme {

class MappedFile {
 public:
  static Result<MappedFile> Open(const std::string& path);

  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string path_;
};

// Reads a whole file (binary-safe). Used for small inputs: JSON, templates.
Result<std::string> ReadFileToString(const std::string& path);

// Writes `data` to `path` (truncating). Used by tools and tests.
Status WriteStringToFile(const std::string& path, std::string_view data);

}  // namespace mneme
