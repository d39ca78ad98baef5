// Batch: flattening of entries into rows (see batch.h).
#include "engine/batch.h"

#include <algorithm>
#include <string>

namespace mneme::engine {

Status Batch::Add(Sequence* seq, int start, int end, bool want_logits) {
  if (seq == nullptr) return InvalidArgument("batch entry without a sequence");
  if (start < 0 || start >= end || end > seq->size()) {
    return InvalidArgument("sequence " + std::to_string(seq->id) + ": positions [" +
                           std::to_string(start) + ", " + std::to_string(end) +
                           ") are not a non-empty range of its " + std::to_string(seq->size()) +
                           " tokens");
  }
  if (start != seq->num_computed) {
    return InvalidArgument("sequence " + std::to_string(seq->id) + ": chunk starts at " +
                           std::to_string(start) + " but " + std::to_string(seq->num_computed) +
                           " positions are computed");
  }
  if (std::find(seqs_.begin(), seqs_.end(), seq) != seqs_.end()) {
    return InvalidArgument("sequence " + std::to_string(seq->id) + " is already in the batch");
  }
  seqs_.push_back(seq);
  starts_.push_back(start);
  ends_.push_back(end);
  want_logits_.push_back(want_logits ? 1 : 0);
  num_logits_ += want_logits ? 1 : 0;
  for (int p = start; p < end; ++p) {
    token_ids_.push_back(seq->tokens[static_cast<size_t>(p)]);
    positions_.push_back(p);
  }
  row_begin_.push_back(num_rows());
  return Status::Ok();
}

void Batch::Clear() {
  seqs_.clear();
  starts_.clear();
  ends_.clear();
  want_logits_.clear();
  row_begin_.assign(1, 0);
  token_ids_.clear();
  positions_.clear();
  num_logits_ = 0;
}

}  // namespace mneme::engine
