// Tokenizer: text <-> token ids exactly as llama.cpp (llama-vocab.cpp) does it.
//
//   encode: [BOS] + for each fragment of the text:
//              special token -> its id
//              plain text    -> SpmEncoder (after " " -> "▁" and, at the start
//                               and after a special token, a "▁" prefix)
//                               or BpeEncoder
//           + [EOS]
//   decode: id -> piece bytes (▁ -> space, <0xXX> -> byte, byte-level BPE
//           unicode -> bytes), concatenated.
//
// Special-token splitting (llama.cpp's tokenizer_st_partition): the special
// tokens, longest text first, each cut every remaining plain-text fragment
// at its occurrences:
//
//   "a<|im_end|>b<s>"  ->  "a" | <|im_end|> | "b" | <s>
//
// Control and unknown-type tokens are matched only with parse_special;
// user-defined tokens are always matched (Hugging Face "added tokens").
// Tokens with the lstrip/rstrip attribute also swallow the whitespace next to
// them (Phi-3).
//
// IncrementalDecoder (incremental_decoder.h) streams ids to UTF-8-safe text.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"
#include "util/status.h"

namespace mneme {

class SpmEncoder;
class BpeEncoder;

class Tokenizer {
 public:
  static Result<Tokenizer> FromGguf(const gguf::GgufFile& file);
  static Result<Tokenizer> FromVocab(Vocab vocab);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  struct EncodeOptions {
    bool add_special = true;     // BOS/EOS as the vocab's add_bos/add_eos say
    bool parse_special = false;  // recognize control/unknown token text
  };
  std::vector<TokenId> Encode(std::string_view text, EncodeOptions options) const;
  std::vector<TokenId> Encode(std::string_view text) const { return Encode(text, EncodeOptions{}); }

  // The bytes of one token (llama.cpp's token_to_piece). Control and
  // unknown-type tokens render as their text only when `render_special` is
  // true, otherwise as "". An id outside the vocabulary renders as "".
  std::string TokenToPiece(TokenId id, bool render_special = false) const;
  // Concatenated pieces, byte for byte (no UTF-8 repair, no clean-up of
  // spaces before punctuation). When the vocab has add_space_prefix (SPM),
  // one leading space is removed from the first non-empty piece: the space
  // that Encode added at the start of the text.
  std::string Decode(std::span<const TokenId> ids, bool render_special = false) const;

  // Special tokens (control, user-defined, unknown types), longest text first.
  const std::vector<TokenId>& special_tokens() const { return special_by_length_; }
  const Vocab& vocab() const { return *vocab_; }

 private:
  Tokenizer() = default;
  struct Fragment;
  std::vector<Fragment> Partition(std::string_view text, bool parse_special) const;

  std::unique_ptr<Vocab> vocab_;  // stable address: encoders point into it
  std::unique_ptr<SpmEncoder> spm_;
  std::unique_ptr<BpeEncoder> bpe_;
  // Special tokens sorted longest first, for splitting.
  std::vector<TokenId> special_by_length_;
  // id -> piece as rendered with render_special (llama.cpp caches the same).
  std::vector<std::string> pieces_;
};

}  // namespace mneme

#include "tokenizer/incremental_decoder.h"  // IWYU pragma: export
