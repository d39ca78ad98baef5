// Sequence: one conversation's tokens and how far the engine has computed
// them. Its KV lives in the paged cache through its BlockTable.
//
//   tokens        [0 ............................. size)
//   num_computed  [0 ..... num_computed)  K/V stored; logits of the last known
//   block_table   num_tokens() >= every position a Forward will write
//
// The caller (scheduler, `mneme generate`) Appends room to the block table
// before scheduling a chunk [num_computed, end) in a Batch; ModelRunner
// writes K/V of those positions and advances num_computed to end.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "kv/block_table.h"
#include "tokenizer/vocab.h"

namespace mneme::engine {

struct Sequence {
  Sequence() = default;
  Sequence(int64_t id_, std::vector<TokenId> tokens_, kv::BlockPool* pool)
      : id(id_), tokens(std::move(tokens_)), block_table(pool) {}

  int64_t id = 0;
  std::vector<TokenId> tokens;
  int num_computed = 0;  // positions whose K/V are in the cache
  kv::BlockTable block_table;

  int size() const { return static_cast<int>(tokens.size()); }
  int num_uncomputed() const { return size() - num_computed; }
};

}  // namespace mneme::engine
