// ByteLevelDecode: the inverse of the GPT-2 byte-level alphabet, for turning
// a byte-level BPE token's stored text back into the bytes it stands for.
#include "tokenizer/byte_level.h"

#include <string>
#include <string_view>

#include "tokenizer/bpe.h"

namespace mneme {

std::string ByteLevelDecode(std::string_view token_text) {
  std::string out;
  out.reserve(token_text.size());
  size_t i = 0;
  const size_t n = token_text.size();
  while (i < n) {
    const auto b0 = static_cast<unsigned char>(token_text[i]);
    // Every alphabet character is U+0021..U+0143: one byte, or two bytes with
    // a lead byte of 0xC2..0xC5.
    if (b0 < 0x80) {
      const int byte = byte_level::CodepointToByte(b0);
      out.push_back(byte >= 0 ? static_cast<char>(byte) : static_cast<char>(b0));
      ++i;
      continue;
    }
    if (b0 >= 0xC2 && b0 <= 0xC5 && i + 1 < n &&
        (static_cast<unsigned char>(token_text[i + 1]) & 0xC0) == 0x80) {
      const uint32_t cp =
          ((b0 & 0x1Fu) << 6) | (static_cast<unsigned char>(token_text[i + 1]) & 0x3Fu);
      const int byte = byte_level::CodepointToByte(cp);
      if (byte >= 0) {
        out.push_back(static_cast<char>(byte));
        i += 2;
        continue;
      }
    }
    // Not an alphabet character: keep the byte as it is (the rest of a
    // multi-byte character follows as continuation bytes and is kept too).
    out.push_back(static_cast<char>(b0));
    ++i;
  }
  return out;
}

}  // namespace mneme
