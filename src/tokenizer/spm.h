// SpmEncoder: SentencePiece BPE with scores, as llama.cpp's "llama" tokenizer
// model does it: split into UTF-8 characters, repeatedly merge the adjacent
// pair whose concatenation is a vocab token with the highest score, and fall
// back to <0xXX> byte tokens for anything not in the vocab.
//
// Encode receives text that already has spaces replaced by "▁" and the space
// prefix applied (Tokenizer does both); it never contains special tokens.
//
//   "▁hello" -> symbols ▁ h e l l o -> best-scored pair first:
//   ▁ h e ll o -> ▁ h e llo -> ▁ hello -> ▁hello  (each step a vocab token)
//
// Characters are split by the lead byte's length without validating the
// continuation bytes (as llama.cpp does), so invalid UTF-8 falls back to one
// <0xXX> token per byte and never fails.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"
#include "util/status.h"

namespace mneme {

class SpmEncoder {
 public:
  // `vocab` must outlive the encoder.
  static Result<std::unique_ptr<SpmEncoder>> Create(const Vocab& vocab);
  ~SpmEncoder();

  // Appends the ids of `text` to `out`.
  void Encode(std::string_view text, std::vector<TokenId>* out) const;

 private:
  SpmEncoder() = default;
  const Vocab* vocab_ = nullptr;
  // byte value -> <0xXX> token, else the one-byte token, else unk (or kNoToken).
  TokenId byte_tokens_[256] = {};
};

}  // namespace mneme
