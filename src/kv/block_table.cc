// BlockTable: appending, sharing and copy on write (see block_table.h).
#include "kv/block_table.h"

#include <string>
#include <utility>

namespace mneme::kv {
namespace {

int CeilDiv(int a, int b) { return (a + b - 1) / b; }

}  // namespace

Result<BlockTable> BlockTable::FromBlocks(BlockPool* pool, std::span<const BlockId> blocks,
                                          int num_tokens) {
  CHECK(pool != nullptr);
  if (num_tokens < 0 || CeilDiv(num_tokens, pool->block_size()) != static_cast<int>(blocks.size())) {
    return InvalidArgument(std::to_string(blocks.size()) + " blocks of " +
                           std::to_string(pool->block_size()) + " tokens cannot hold exactly " +
                           std::to_string(num_tokens) + " tokens");
  }
  for (BlockId b : blocks) {
    if (!pool->IsValid(b) || pool->RefCount(b) == 0) {
      return InvalidArgument("block " + std::to_string(b) + " is not allocated");
    }
  }
  BlockTable t(pool);
  for (BlockId b : blocks) pool->AddRef(b);
  t.blocks_.assign(blocks.begin(), blocks.end());
  t.num_tokens_ = num_tokens;
  t.DebugCheck();
  return t;
}

BlockTable::BlockTable(BlockTable&& other) noexcept
    : pool_(other.pool_), blocks_(std::move(other.blocks_)), num_tokens_(other.num_tokens_) {
  other.blocks_.clear();
  other.num_tokens_ = 0;
}

BlockTable& BlockTable::operator=(BlockTable&& other) noexcept {
  if (this != &other) {
    Release();
    pool_ = other.pool_;
    blocks_ = std::move(other.blocks_);
    num_tokens_ = other.num_tokens_;
    other.blocks_.clear();
    other.num_tokens_ = 0;
  }
  return *this;
}

BlockTable BlockTable::Fork() const {
  BlockTable t(pool_);
  for (BlockId b : blocks_) pool_->AddRef(b);
  t.blocks_ = blocks_;
  t.num_tokens_ = num_tokens_;
  return t;
}

int BlockTable::free_slots_in_last_block() const {
  if (pool_ == nullptr) return 0;
  return num_blocks() * BlockSize() - num_tokens_;
}

bool BlockTable::LastBlockNeedsCopy() const {
  return num_tokens_ % BlockSize() != 0 && pool_->RefCount(blocks_.back()) > 1;
}

int BlockTable::BlocksNeededToAppend(int n) const {
  CHECK(n >= 0 && pool_ != nullptr) << "BlocksNeededToAppend(" << n << ")";
  if (n == 0) return 0;
  const int fresh = CeilDiv(num_tokens_ + n, BlockSize()) - num_blocks();
  return fresh + (LastBlockNeedsCopy() ? 1 : 0);
}

bool BlockTable::CanAppend(int n) const { return pool_->CanAllocate(BlocksNeededToAppend(n)); }

Status BlockTable::Append(int n) {
  const int needed = BlocksNeededToAppend(n);
  if (n == 0) return Status::Ok();
  MNEME_ASSIGN_OR_RETURN(std::vector<BlockId> fresh, pool_->Allocate(needed));
  size_t next = 0;
  if (LastBlockNeedsCopy()) {
    const BlockId copy = fresh[next++];
    pool_->CopyBlock(blocks_.back(), copy);
    pool_->Release(blocks_.back());
    blocks_.back() = copy;
  }
  for (; next < fresh.size(); ++next) blocks_.push_back(fresh[next]);
  num_tokens_ += n;
  DebugCheck();
  return Status::Ok();
}

void BlockTable::Truncate(int n) {
  CHECK(n >= 0 && n <= num_tokens_) << "Truncate(" << n << ") of " << num_tokens_ << " tokens";
  if (pool_ == nullptr) return;
  const int keep = CeilDiv(n, BlockSize());
  while (num_blocks() > keep) {
    pool_->Release(blocks_.back());
    blocks_.pop_back();
  }
  num_tokens_ = n;
  DebugCheck();
}

void BlockTable::Release() {
  if (pool_ != nullptr) pool_->Release(blocks_);
  blocks_.clear();
  num_tokens_ = 0;
}

void BlockTable::ReplaceFullBlock(int index, BlockId block) {
  CHECK(pool_ != nullptr && index >= 0 && (index + 1) * BlockSize() <= num_tokens_)
      << "ReplaceFullBlock(" << index << ") of " << num_tokens_ << " tokens";
  CHECK(pool_->RefCount(block) > 0) << "ReplaceFullBlock with free block " << block;
  BlockId& slot = blocks_[static_cast<size_t>(index)];
  if (slot == block) return;
  pool_->AddRef(block);
  pool_->Release(slot);
  slot = block;
  DebugCheck();
}

KvSlot BlockTable::Slot(int p) const {
  DCHECK(p >= 0 && p < num_tokens_);
  return KvSlot{blocks_[static_cast<size_t>(p / BlockSize())], p % BlockSize()};
}

void BlockTable::AppendSlots(int start, int n, std::vector<KvSlot>* out) const {
  CHECK(start >= 0 && n >= 0 && start + n <= num_tokens_)
      << "AppendSlots(" << start << ", " << n << ") of " << num_tokens_ << " tokens";
  out->reserve(out->size() + static_cast<size_t>(n));
  for (int p = start; p < start + n; ++p) out->push_back(Slot(p));
}

void BlockTable::DebugCheck() const {
#ifndef NDEBUG
  CHECK(pool_ != nullptr);
  CHECK(CeilDiv(num_tokens_, BlockSize()) == num_blocks())
      << num_tokens_ << " tokens in " << num_blocks() << " blocks";
  for (BlockId b : blocks_) CHECK(pool_->RefCount(b) > 0) << "table holds free block " << b;
  Status s = pool_->CheckInvariants();
  CHECK(s.ok()) << s.ToString();
#endif
}

}  // namespace mneme::kv
