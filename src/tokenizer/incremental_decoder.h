// IncrementalDecoder: turns a stream of token ids into text that is always
// valid UTF-8 and never ends in half a code point.
//
// One token may carry only part of a character (a byte-fallback <0xE2>, or a
// byte-level BPE token holding the first two bytes of an emoji). The decoder
// keeps the bytes of an incomplete trailing sequence until the tokens that
// complete it arrive:
//
//   ids:      <0xE2>   <0x82>   <0xAC>   "▁ok"
//   Add():    ""       ""       "€"      " ok"
//
// Bytes that can never become a valid sequence (a stray continuation byte, an
// overlong form, a surrogate) come out as U+FFFD at once, one per maximal
// invalid subpart (the Unicode / WHATWG rule). Flush() ends the stream: a
// dangling incomplete sequence becomes one U+FFFD.
//
// The concatenation of everything Add() and Flush() return equals
// Tokenizer::Decode of the same ids whenever that decoded text is valid UTF-8
// (including the removal of the SPM prefix space, unless `continuation`).
#pragma once

#include <string>

#include "tokenizer/vocab.h"

namespace mneme {

class Tokenizer;

class IncrementalDecoder {
 public:
  struct Options {
    bool render_special = false;  // as Tokenizer::TokenToPiece
    // The ids continue earlier text (a generated reply after a prompt): keep
    // the leading space of the first piece instead of treating it as the SPM
    // prefix space.
    bool continuation = false;
  };

  // `tokenizer` must outlive the decoder.
  explicit IncrementalDecoder(const Tokenizer& tokenizer, bool render_special = false);
  IncrementalDecoder(const Tokenizer& tokenizer, Options options);

  // Returns the text that became complete with this token (may be empty).
  std::string Add(TokenId id);
  // Returns whatever is held back (an incomplete sequence becomes U+FFFD) and
  // resets the decoder for a new stream.
  std::string Flush();

  // Bytes held back, waiting for the rest of a character (0..3).
  size_t pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer* tokenizer_;
  Options options_;
  bool strip_space_;     // the next non-empty piece loses one leading space
  std::string pending_;  // bytes of an incomplete UTF-8 sequence
};

// Appends the valid UTF-8 prefix of `*bytes` to `*out`, replacing invalid
// subparts with U+FFFD, and leaves in `*bytes` only a trailing incomplete
// (but so far valid) sequence. With `final`, that tail is replaced too.
void AppendValidUtf8(std::string* bytes, std::string* out, bool final);

}  // namespace mneme
