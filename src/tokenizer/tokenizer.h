// Tokenizer: text <-> token ids exactly as the model's own tokenizer (and
// llama.cpp) does it.
//
//   encode: [BOS] + for each fragment of the text:
//              special token (only with parse_special) -> its id
//              plain text -> SpmEncoder or BpeEncoder
//   decode: id -> piece bytes (▁ -> space, <0xXX> -> byte, byte-level BPE
//           unicode -> bytes), concatenated.
//
// IncrementalDecoder turns a stream of ids into text that never ends in half
// a UTF-8 code point (the bytes of an incomplete sequence are held back).
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
    bool parse_special = false;  // recognize control/user-defined token text
  };
  std::vector<TokenId> Encode(std::string_view text, EncodeOptions options) const;
  std::vector<TokenId> Encode(std::string_view text) const { return Encode(text, EncodeOptions{}); }

  // The bytes of one token. Control tokens (BOS/EOS...) render as their text
  // only when `render_special` is true, otherwise as "".
  std::string TokenToPiece(TokenId id, bool render_special = false) const;
  // Concatenated pieces. For SPM with add_space_prefix, the leading space of
  // the first piece is removed (as llama.cpp does when detokenizing a whole
  // sequence that starts at the beginning of the text).
  std::string Decode(std::span<const TokenId> ids, bool render_special = false) const;

  const Vocab& vocab() const { return *vocab_; }

 private:
  Tokenizer() = default;
  std::unique_ptr<Vocab> vocab_;  // stable address: encoders point into it
  std::unique_ptr<SpmEncoder> spm_;
  std::unique_ptr<BpeEncoder> bpe_;
  // Special tokens sorted longest first, for parse_special.
  std::vector<TokenId> special_by_length_;
};

// Streams ids to UTF-8-safe text.
class IncrementalDecoder {
 public:
  explicit IncrementalDecoder(const Tokenizer& tokenizer, bool render_special = false);
  // Returns the text that became complete with this token (may be empty).
  std::string Add(TokenId id);
  // Returns whatever is held back (invalid trailing bytes become U+FFFD).
  std::string Flush();

 private:
  const Tokenizer* tokenizer_;
  bool render_special_;
  bool first_ = true;
  std::string pending_;  // bytes of an incomplete UTF-8 sequence
};

}  // namespace mneme
