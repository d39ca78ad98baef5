// Batch: the work of one ModelRunner::Forward call, data-oriented.
//
// A batch is a list of entries; entry e processes positions [start, end) of
// one sequence: a prefill chunk (end - start > 1) or a decode step (1 token).
// Entries of different sequences may be freely mixed; a sequence appears at
// most once per batch. The tokens of all entries are flattened into rows:
//
//   rows:      [ e0: start0..end0-1 | e1: start1..end1-1 | ... ]   num_rows()
//   token_ids  [num_rows]  the token at each row
//   positions  [num_rows]  its position in its sequence
//   row_begin  [entries+1] entry e owns rows [row_begin[e], row_begin[e+1])
//
// want_logits[e]: Forward returns the logits of entry e's last row.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/sequence.h"
#include "util/status.h"

namespace mneme::engine {

class Batch {
 public:
  // Adds positions [start, end) of `seq` (tokens seq->tokens[start..end)).
  // INVALID_ARGUMENT (and nothing added) for an empty or out-of-range span,
  // start != seq->num_computed, or a sequence already in the batch.
  Status Add(Sequence* seq, int start, int end, bool want_logits);
  // Adds every uncomputed token of `seq` (a prefill chunk or decode step).
  Status AddRemaining(Sequence* seq, bool want_logits) {
    return Add(seq, seq->num_computed, seq->size(), want_logits);
  }
  void Clear();

  int num_entries() const { return static_cast<int>(seqs_.size()); }
  int num_rows() const { return static_cast<int>(token_ids_.size()); }
  bool empty() const { return seqs_.empty(); }

  // Per entry.
  const std::vector<Sequence*>& seqs() const { return seqs_; }
  const std::vector<int>& starts() const { return starts_; }
  const std::vector<int>& ends() const { return ends_; }
  const std::vector<uint8_t>& want_logits() const { return want_logits_; }
  const std::vector<int>& row_begin() const { return row_begin_; }  // [entries + 1]
  int num_logits() const { return num_logits_; }
  // Per row.
  const std::vector<TokenId>& token_ids() const { return token_ids_; }
  const std::vector<int32_t>& positions() const { return positions_; }

 private:
  std::vector<Sequence*> seqs_;
  std::vector<int> starts_, ends_;
  std::vector<uint8_t> want_logits_;
  std::vector<int> row_begin_{0};
  std::vector<TokenId> token_ids_;
  std::vector<int32_t> positions_;
  int num_logits_ = 0;
};

}  // namespace mneme::engine
