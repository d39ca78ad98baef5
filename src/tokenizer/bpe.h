// BpeEncoder: byte-level BPE (GPT-2 style) as llama.cpp's "gpt2" tokenizer
// model does it.
//
//   text --pre-tokenizer regexes (by tokenizer.ggml.pre)--> words
//   word --bytes to GPT-2 "byte unicode" chars--> symbols
//   symbols --merge lowest-ranked adjacent pair until none--> tokens
//
// The input to Encode never contains special tokens (Tokenizer splits them out
// first). Unknown `pre` values are refused by Create.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"
#include "util/status.h"

namespace mneme {

class BpeEncoder {
 public:
  // `vocab` must outlive the encoder.
  static Result<std::unique_ptr<BpeEncoder>> Create(const Vocab& vocab);
  ~BpeEncoder();

  // Appends the ids of `text` to `out`.
  void Encode(std::string_view text, std::vector<TokenId>* out) const;

  // The pre-tokenizer names accepted for tokenizer.ggml.pre.
  static const std::vector<std::string_view>& SupportedPreTokenizers();

 private:
  BpeEncoder() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Maps a token's stored text from GPT-2 "byte unicode" back to raw bytes
// ("Ġhello" -> " hello"). Characters outside the map are kept as UTF-8.
std::string ByteLevelDecode(std::string_view token_text);

}  // namespace mneme
