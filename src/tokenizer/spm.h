// SpmEncoder: SentencePiece BPE with scores, as llama.cpp's "llama" tokenizer
// model does it: split into UTF-8 characters, repeatedly merge the adjacent
// pair whose concatenation is a vocab token with the highest score, and fall
// back to <0xXX> byte tokens for anything not in the vocab.
//
// Encode receives text that already has spaces replaced by "▁" and the space
// prefix applied (Tokenizer does both); it never contains special tokens.
#pragma once

#include <memory>
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

  void Encode(std::string_view text, std::vector<TokenId>* out) const;

 private:
  SpmEncoder() = default;
  const Vocab* vocab_ = nullptr;
  std::vector<TokenId> byte_tokens_;  // byte value -> <0xXX> id (or kNoToken)
};

}  // namespace mneme
