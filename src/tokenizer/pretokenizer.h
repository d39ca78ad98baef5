// PreTokenizer: splits text into the "words" that byte-level BPE merges
// within, exactly as llama.cpp does for each `tokenizer.ggml.pre` value.
//
// A pre-tokenizer is an ordered list of regexes. The first regex splits the
// whole text; each next regex splits every piece the previous one produced.
// Within a piece, every match is a piece and so is every non-empty gap
// between matches (nothing is dropped):
//
//   text ──regex 1──▶ [m][gap][m][m] ──regex 2 on each──▶ ... ──▶ words
//
// llama.cpp runs these regexes through custom code (GPT-2 and Llama 3
// patterns) or through std::regex over a "collapsed" text where every
// non-ASCII code point is replaced by one byte per Unicode category. We use
// PCRE2 (UTF, JIT) on the real text and get the same splits because:
//   - `\s` is spelled out as llama.cpp's whitespace set (the Unicode
//     White_Space property; PCRE2's own \s also has U+180E);
//   - llama.cpp shows its regexes every non-ASCII whitespace code point as
//     U+000B, so explicit ranges that contain such code points (deepseek's)
//     are written without them;
//   - each regex sees only its piece as the subject, so lookaheads and `$`
//     stop at the piece end (PCRE2_DOLLAR_ENDONLY: `$` only at the very end);
//   - invalid UTF-8 is decoded the way llama.cpp decodes it: every byte that
//     does not start a well-formed sequence becomes U+FFFD, overlong forms
//     are re-encoded in their shortest form.
// Remaining differences are the Unicode versions of the category tables
// (PCRE2's vs the one llama.cpp was generated from), code points above
// U+10FFFF (llama.cpp throws) and UTF-16 surrogates encoded in UTF-8
// (llama.cpp keeps their bytes); we turn both into U+FFFD.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace mneme {

// Receives the words of a text, in order. Words are never empty.
class WordSink {
 public:
  virtual ~WordSink() = default;
  virtual void OnWord(std::string_view word) = 0;
};

class PreTokenizer {
 public:
  // `pre` is the tokenizer.ggml.pre value. Unknown values are refused with
  // an error that names the value and lists the supported ones.
  static Result<PreTokenizer> Create(std::string_view pre);

  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;
  ~PreTokenizer();

  // Every accepted `pre` value (aliases included), in a stable order.
  static const std::vector<std::string_view>& SupportedNames();

  // The name this pre-tokenizer was created with.
  const std::string& name() const { return name_; }
  // llama.cpp's `ignore_merges`: a word that is itself a vocab token is
  // emitted as that token without running the merges (Llama 3 family).
  bool ignore_merges() const { return ignore_merges_; }

  // Splits `text` and hands every word to `sink`. Safe to call from several
  // threads at once. Words point into `text`, or into a repaired copy when
  // `text` is not valid UTF-8; they are valid only during the callback.
  void Split(std::string_view text, WordSink* sink) const;

  // Convenience for tests: the words as strings.
  std::vector<std::string> SplitToStrings(std::string_view text) const;

  struct Regex;  // a compiled PCRE2 regex (pretokenizer.cc)

 private:
  PreTokenizer() = default;

  std::string name_;
  bool ignore_merges_ = false;
  std::vector<std::unique_ptr<Regex>> regexes_;
};

// llama.cpp's decoding of possibly invalid UTF-8, re-encoded: returns true
// and leaves `*out` untouched when `text` is already well-formed UTF-8
// (shortest forms, no surrogates, at most U+10FFFF); otherwise writes the
// repaired text to `*out` and returns false.
bool RepairUtf8(std::string_view text, std::string* out);

}  // namespace mneme
