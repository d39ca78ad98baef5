// See utf8.h.
#include "util/utf8.h"

#include <cstdint>
#include <cstring>

namespace mneme {
namespace {

bool IsCont(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

}  // namespace

// Strict UTF-8 validation (shortest form, no surrogates, <= U+10FFFF).
bool IsWellFormedUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    // Fast path: 8 ASCII bytes at a time.
    while (i + 8 <= n) {
      uint64_t w;
      std::memcpy(&w, p + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
    } else if (c >= 0xC2 && c <= 0xDF) {
      if (i + 1 >= n || !IsCont(p[i + 1])) return false;
      i += 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      if (i + 2 >= n || !IsCont(p[i + 1]) || !IsCont(p[i + 2])) return false;
      if (c == 0xE0 && p[i + 1] < 0xA0) return false;   // overlong
      if (c == 0xED && p[i + 1] >= 0xA0) return false;  // surrogate
      i += 3;
    } else if (c >= 0xF0 && c <= 0xF4) {
      if (i + 3 >= n || !IsCont(p[i + 1]) || !IsCont(p[i + 2]) || !IsCont(p[i + 3])) {
        return false;
      }
      if (c == 0xF0 && p[i + 1] < 0x90) return false;   // overlong
      if (c == 0xF4 && p[i + 1] >= 0x90) return false;  // > U+10FFFF
      i += 4;
    } else {
      return false;
    }
  }
  return true;
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace mneme
