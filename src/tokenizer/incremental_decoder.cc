// IncrementalDecoder and the UTF-8 validation it relies on. See
// incremental_decoder.h for the contract.
#include "tokenizer/incremental_decoder.h"

#include "tokenizer/tokenizer.h"

namespace mneme {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

// Well-formed UTF-8 (Unicode Table 3-7): the second byte's range depends on
// the lead byte (no overlongs, no surrogates, nothing above U+10FFFF).
void AppendValidUtf8(std::string* bytes, std::string* out, bool final) {
  const std::string& s = *bytes;
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out->push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    int need = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      need = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      need = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {  // a continuation byte, C0/C1 or F5..FF: never valid
      out->append(kReplacement);
      ++i;
      continue;
    }
    size_t j = i + 1;
    int got = 0;
    while (got < need && j < n) {
      const auto cc = static_cast<unsigned char>(s[j]);
      if (cc < (got == 0 ? lo : 0x80) || cc > (got == 0 ? hi : 0xBF)) break;
      ++j;
      ++got;
    }
    if (got == need) {
      out->append(s, i, j - i);
      i = j;
    } else if (j == n && !final) {  // a valid but incomplete tail: keep it
      bytes->erase(0, i);
      return;
    } else {  // the maximal invalid subpart [i, j) becomes one U+FFFD
      out->append(kReplacement);
      i = j;
    }
  }
  bytes->clear();
}

IncrementalDecoder::IncrementalDecoder(const Tokenizer& tokenizer, bool render_special)
    : IncrementalDecoder(tokenizer, Options{render_special, false}) {}

IncrementalDecoder::IncrementalDecoder(const Tokenizer& tokenizer, Options options)
    : tokenizer_(&tokenizer),
      options_(options),
      strip_space_(!options.continuation && tokenizer.vocab().add_space_prefix) {}

std::string IncrementalDecoder::Add(TokenId id) {
  std::string piece = tokenizer_->TokenToPiece(id, options_.render_special);
  if (piece.empty()) return "";
  if (strip_space_) {
    if (piece[0] == ' ') piece.erase(0, 1);
    strip_space_ = false;
  }
  pending_ += piece;
  std::string out;
  AppendValidUtf8(&pending_, &out, /*final=*/false);
  return out;
}

std::string IncrementalDecoder::Flush() {
  std::string out;
  AppendValidUtf8(&pending_, &out, /*final=*/true);
  strip_space_ = !options_.continuation && tokenizer_->vocab().add_space_prefix;
  return out;
}

}  // namespace mneme
