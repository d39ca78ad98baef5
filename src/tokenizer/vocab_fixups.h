// ApplyLlamaCppFixups: the adjustments llama.cpp makes to token attributes by
// token text after loading a vocabulary (end-of-turn and fill-in-the-middle
// texts become control tokens, "unused" control tokens are marked unused,
// Phi-3's special tokens strip whitespace to their right, ...), and the
// end-of-generation set. Part of Vocab::FromGguf; separate only for size.
#pragma once

#include <string>

#include "tokenizer/vocab.h"

namespace mneme {

struct FixupInput {
  std::string general_name;  // general.name ("" when absent)
  std::string architecture;  // general.architecture
  // Fill-in-the-middle ids from the file: prefix, suffix, middle, pad, repo,
  // file separator (kNoToken when absent; found by text then).
  TokenId fim[6] = {kNoToken, kNoToken, kNoToken, kNoToken, kNoToken, kNoToken};
};

// Sets vocab->attrs adjustments, eot_id/eom_id when found by text, and
// vocab->eog_ids. Needs tokens, attrs, token_to_id and the special ids.
void ApplyLlamaCppFixups(const FixupInput& input, Vocab* vocab);

}  // namespace mneme
