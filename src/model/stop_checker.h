// StopChecker: decides when a generation ends and which text may reach the
// client, so that a stop string never leaks, not even in part.
//
// Stop strings are matched on the detokenized text stream, across token
// boundaries. Text that could still be the beginning of a stop string is held
// back until the next tokens settle it:
//
//   stop = "\nUser:"
//   token text:   "Hi"    "!\n"    "Us"    "er"   ":"
//   released:     "Hi"    "!"      ""      ""     ""   -> stop, "\nUser:" dropped
//   (had the 4th token been "ed", "\nUsed" would have been released at once)
//
// An end-of-generation token (Vocab::eog_ids) ends the stream too, unless
// ignore_eos; its own text is not output, but held-back text is released
// (it was not a stop string after all). Finish() releases held-back text when
// generation ends for another reason (max tokens, context full).
//
// Input text must be whole UTF-8 characters (IncrementalDecoder output); the
// released text then is too, since holding back starts at the first byte of a
// stop string.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace mneme {

enum class StopReason { kNone, kEog, kStopString };

class StopChecker {
 public:
  struct Step {
    std::string text;  // safe to send now (may be empty)
    StopReason stop = StopReason::kNone;
    std::string stop_string;  // the stop string matched (kStopString)
  };

  // `stop_strings` must be non-empty strings (ValidateSamplingParams).
  // `eog_ids` need not be sorted.
  StopChecker(std::vector<std::string> stop_strings, std::span<const TokenId> eog_ids,
              bool ignore_eos);

  // Feeds one generated token and the text it completed. After a step that
  // stops, further calls are a checker bug (CHECK).
  Step Add(TokenId id, std::string_view text);
  // Generation ended for another reason: returns whatever is held back.
  std::string Finish();

  bool stopped() const { return stopped_; }
  // Bytes held back as a possible stop-string prefix.
  size_t held_bytes() const { return pending_.size(); }

 private:
  // Index in pending_ where the longest suffix that is a proper prefix of a
  // stop string starts (pending_.size() when there is none).
  size_t HoldFrom() const;

  std::vector<std::string> stop_strings_;
  std::vector<TokenId> eog_ids_;  // sorted
  bool ignore_eos_;
  bool stopped_ = false;
  std::string pending_;  // text not yet released
};

}  // namespace mneme
