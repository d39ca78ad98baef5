// BlockTable: one sequence's KV, as the list of pool blocks holding it.
//
// Token position p of the sequence lives in block blocks()[p / block_size],
// slot p % block_size. The table owns one reference on each of its blocks and
// gives them back when released (or destroyed), so the pool must outlive it.
//
//   BlockTable seq(&pool);
//   if (!seq.CanAppend(n)) { ... preempt or wait ... }
//   MNEME_RETURN_IF_ERROR(seq.Append(n));   // room for n more tokens
//   for (p = old; p < old + n; ++p) write K/V of p at seq.Slot(p)
//
// Sharing a prefix: FromBlocks(pool, blocks, num_tokens) takes one more
// reference on existing blocks (e.g. the radix cache's, or another
// sequence's); Fork() does the same for a whole table. Appending into a last
// block that is shared and only partially filled first copies it into a fresh
// block (copy on write), so the other owners never see our tokens. Blocks
// that are completely filled are never written again and stay shared.
//
// Every mutation is check-then-act: on error nothing has changed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv/block_pool.h"
#include "util/status.h"

namespace mneme::kv {

// Where one token position's K and V live.
struct KvSlot {
  BlockId block = -1;
  int slot = 0;  // 0 .. block_size - 1
  bool operator==(const KvSlot&) const = default;
};

class BlockTable {
 public:
  BlockTable() = default;  // detached: no pool, no blocks
  explicit BlockTable(BlockPool* pool) : pool_(pool) {}
  // A table over existing blocks holding `num_tokens` tokens; takes one
  // reference on each block. INVALID_ARGUMENT unless the blocks are allocated
  // and hold exactly that many tokens (ceil(num_tokens / block_size) blocks).
  static Result<BlockTable> FromBlocks(BlockPool* pool, std::span<const BlockId> blocks,
                                       int num_tokens);

  BlockTable(BlockTable&& other) noexcept;
  BlockTable& operator=(BlockTable&& other) noexcept;
  BlockTable(const BlockTable&) = delete;
  BlockTable& operator=(const BlockTable&) = delete;
  ~BlockTable() { Release(); }

  // Another table sharing every block of this one (one more reference each).
  BlockTable Fork() const;

  // Blocks Append(n) would take from the pool (new blocks, plus one for a
  // copy on write of a shared, partially filled last block).
  int BlocksNeededToAppend(int n) const;
  bool CanAppend(int n) const;
  // Room for n more tokens: num_tokens() grows by n. RESOURCE_EXHAUSTED (and
  // nothing changed) if the pool lacks blocks.
  Status Append(int n);
  // Keeps the first n tokens (n <= num_tokens()), releasing blocks no longer
  // needed. A kept, shared last block is not copied; the next Append does.
  void Truncate(int n);
  // Gives every block back; the table is empty (and keeps its pool).
  void Release();
  // Replaces whole block `index` (every slot filled: (index + 1) * block_size
  // <= num_tokens()) by `block`, which must hold the same tokens' K/V (the
  // radix cache's copy of a prefix this sequence computed itself): takes a
  // reference on `block` and releases the old one. No-op if they are equal.
  void ReplaceFullBlock(int index, BlockId block);

  // Where token position p (0 <= p < num_tokens()) lives.
  KvSlot Slot(int p) const;
  // The slots of positions [start, start + n), appended to `out`.
  void AppendSlots(int start, int n, std::vector<KvSlot>* out) const;

  BlockPool* pool() const { return pool_; }
  const std::vector<BlockId>& blocks() const { return blocks_; }
  int num_tokens() const { return num_tokens_; }
  int num_blocks() const { return static_cast<int>(blocks_.size()); }
  // Tokens that still fit in the last block without allocating.
  int free_slots_in_last_block() const;

 private:
  int BlockSize() const { return pool_->block_size(); }
  bool LastBlockNeedsCopy() const;  // shared and partially filled
  void DebugCheck() const;

  BlockPool* pool_ = nullptr;
  std::vector<BlockId> blocks_;
  int num_tokens_ = 0;
};

}  // namespace mneme::kv
