// The GPT-2 "byte-level" alphabet: a bijection between the 256 byte values
// and 256 printable Unicode characters, so that byte-level BPE vocabularies
// can store any byte sequence as readable text ("Ġhello" is " hello").
//
// Printable Latin-1 bytes ('!'..'~', '¡'..'¬', '®'..'ÿ') map to themselves;
// the other 68 bytes map, in increasing byte order, to U+0100, U+0101, ...
// (so ' ' = 0x20 -> U+0120 'Ġ', '\n' = 0x0A -> U+010A 'Ċ'). The table is
// computed at compile time from that rule.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace mneme::byte_level {

namespace internal {

constexpr bool IsPrintableLatin1(int b) {
  return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

constexpr std::array<uint16_t, 256> MakeByteToCodepoint() {
  std::array<uint16_t, 256> table{};
  int next = 0x100;
  for (int b = 0; b < 256; ++b) {
    table[b] = static_cast<uint16_t>(IsPrintableLatin1(b) ? b : next++);
  }
  return table;
}

// Every mapped code point is below U+0144, so its UTF-8 form is 1 or 2 bytes.
struct Utf8Char {
  char bytes[2];
  uint8_t size;
};

constexpr std::array<Utf8Char, 256> MakeByteToUtf8(const std::array<uint16_t, 256>& cps) {
  std::array<Utf8Char, 256> table{};
  for (int b = 0; b < 256; ++b) {
    const uint32_t cp = cps[b];
    if (cp < 0x80) {
      table[b] = {{static_cast<char>(cp), 0}, 1};
    } else {
      table[b] = {{static_cast<char>(0xC0 | (cp >> 6)), static_cast<char>(0x80 | (cp & 0x3F))}, 2};
    }
  }
  return table;
}

constexpr uint32_t kMaxMappedCodepoint = 0x144;

constexpr std::array<int16_t, kMaxMappedCodepoint> MakeCodepointToByte(
    const std::array<uint16_t, 256>& cps) {
  std::array<int16_t, kMaxMappedCodepoint> table{};
  for (auto& v : table) v = -1;
  for (int b = 0; b < 256; ++b) table[cps[b]] = static_cast<int16_t>(b);
  return table;
}

inline constexpr std::array<uint16_t, 256> kByteToCodepoint = MakeByteToCodepoint();
inline constexpr std::array<Utf8Char, 256> kByteToUtf8 = MakeByteToUtf8(kByteToCodepoint);
inline constexpr std::array<int16_t, kMaxMappedCodepoint> kCodepointToByte =
    MakeCodepointToByte(kByteToCodepoint);

}  // namespace internal

// The code point that stands for byte `b`.
constexpr uint32_t ByteToCodepoint(uint8_t b) {
  return internal::kByteToCodepoint[b];
}

// The UTF-8 text of the character that stands for byte `b` (1 or 2 bytes).
constexpr std::string_view ByteToUtf8(uint8_t b) {
  const auto& c = internal::kByteToUtf8[b];
  return {c.bytes, c.size};
}

// The byte that code point `cp` stands for, or -1 if `cp` is not in the
// alphabet.
constexpr int CodepointToByte(uint32_t cp) {
  return cp < internal::kMaxMappedCodepoint ? internal::kCodepointToByte[cp] : -1;
}

}  // namespace mneme::byte_level
