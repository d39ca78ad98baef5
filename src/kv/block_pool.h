// BlockPool: the paged KV cache's storage, a fixed set of fixed-size blocks.
//
// The pool is sized once from a memory budget (`--kv-mem MiB`) and never
// grows. A block holds the keys and values of `block_size` consecutive token
// positions of one sequence, for every layer. Blocks are reference counted so
// that sequences (and, next, the radix prefix cache) can share a prefix; a
// block returns to the free list when its count drops to zero.
//
// Storage: one contiguous, 64-byte aligned allocation. Per layer L there is a
// K region followed by a V region, each an array over all blocks, and within
// a block the layout is head-major, as kernels/attention.h's KvLayerView
// expects (one KV head's keys of one block are a contiguous [block_size,
// head_dim] tile):
//
//   storage = [n_layers][2 (K, V)][num_blocks][n_kv_heads][block_size][head_dim]
//
// so in layer L's K (or V) region, block b, kv head h, slot s starts at
//   ((b * n_kv_heads + h) * block_size + s) * head_dim  elements,
// K(L, b) / V(L, b) return the start of block b in layer L, and consecutive
// blocks are block_stride() bytes apart (a KvLayerView is {LayerK(L),
// LayerV(L), block_stride()}). Elements are F16 (IEEE binary16 bits, the
// default) or F32.
//
// All operations are check-then-act: CanAllocate(n) says whether Allocate(n)
// will succeed, and a failing Allocate changes nothing. Misuse by the caller
// (releasing a free block, an id out of range) is a bug and CHECK-fails.
// In debug builds every mutation ends with DCHECK(CheckInvariants().ok()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "util/status.h"

namespace mneme::kv {

using BlockId = int32_t;

enum class KvDType { kF16, kF32 };
size_t KvDTypeBytes(KvDType t);

// The shape of the KV cache of one model, and how tokens are paged.
struct KvShape {
  int n_layers = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int block_size = 16;  // tokens per block
  KvDType dtype = KvDType::kF16;

  // Elements of K (or V) for one token in one layer: n_kv_heads * head_dim.
  int64_t TokenElements() const { return int64_t{n_kv_heads} * head_dim; }
  // Bytes of K and V of one token over all layers:
  // n_layers * n_kv_heads * head_dim * 2 * bytes per element.
  size_t BytesPerToken() const;
  // Bytes of one block over all layers (K and V).
  size_t BytesPerBlock() const { return BytesPerToken() * static_cast<size_t>(block_size); }
  // Bytes of one block's K (or V) in one layer.
  size_t BytesPerLayerBlock() const;
};

class BlockPool {
 public:
  // As many blocks as fit in `budget_bytes`. INVALID_ARGUMENT for a shape
  // with a non-positive field, RESOURCE_EXHAUSTED if not even one block fits.
  static Result<std::unique_ptr<BlockPool>> Create(const KvShape& shape, size_t budget_bytes);
  // Exactly `num_blocks` blocks (tests, tools).
  static Result<std::unique_ptr<BlockPool>> CreateWithBlocks(const KvShape& shape,
                                                             int num_blocks);

  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  const KvShape& shape() const { return shape_; }
  int block_size() const { return shape_.block_size; }
  int num_blocks() const { return static_cast<int>(ref_counts_.size()); }
  int num_free() const { return static_cast<int>(free_list_.size()); }
  int num_used() const { return num_blocks() - num_free(); }
  size_t storage_bytes() const { return storage_bytes_; }
  // Bytes from block b to block b + 1 within a layer's K (or V) region.
  size_t block_stride() const { return shape_.BytesPerLayerBlock(); }
  // Element offset of (kv head, slot) from the start of a block's K (or V).
  int64_t ElementOffset(int kv_head, int slot) const {
    return (int64_t{kv_head} * shape_.block_size + slot) * shape_.head_dim;
  }

  bool CanAllocate(int n) const { return n >= 0 && n <= num_free(); }
  // n fresh blocks, each with reference count 1, or RESOURCE_EXHAUSTED (and
  // nothing allocated) if fewer than n are free. Lowest ids first on a fresh
  // pool; after that, the most recently freed first.
  Result<std::vector<BlockId>> Allocate(int n);
  // One more owner of an allocated block.
  void AddRef(BlockId b);
  // One owner fewer; the block is free again when the count reaches 0.
  void Release(BlockId b);
  void Release(std::span<const BlockId> blocks);
  int RefCount(BlockId b) const;
  bool IsValid(BlockId b) const { return b >= 0 && b < num_blocks(); }

  // Copies block src's K and V, every layer, every slot, into dst (copy on
  // write). Both must be allocated and distinct.
  void CopyBlock(BlockId src, BlockId dst);

  // Start of block b's keys / values in `layer` (see the layout above).
  uint8_t* K(int layer, BlockId b) { return BlockPtr(layer, 0, b); }
  uint8_t* V(int layer, BlockId b) { return BlockPtr(layer, 1, b); }
  const uint8_t* K(int layer, BlockId b) const { return BlockPtr(layer, 0, b); }
  const uint8_t* V(int layer, BlockId b) const { return BlockPtr(layer, 1, b); }
  // Start of the whole K / V region of a layer ([num_blocks][n_kv_heads]
  // [block_size][head_dim]), for kernels that index blocks themselves.
  uint8_t* LayerK(int layer) { return BlockPtr(layer, 0, 0); }
  uint8_t* LayerV(int layer) { return BlockPtr(layer, 1, 0); }
  const uint8_t* LayerK(int layer) const { return BlockPtr(layer, 0, 0); }
  const uint8_t* LayerV(int layer) const { return BlockPtr(layer, 1, 0); }

  // The free list and the reference counts agree: every free block has count
  // 0 and appears once, every other block has a positive count, free + used
  // == total. (Whether the counts match the owners is checked by
  // VerifyOwners, which knows the owners.)
  Status CheckInvariants() const;

  // Checks that every block's reference count equals the number of times it
  // appears in `owners` (each a list of block ids, e.g. the block tables of
  // all live sequences) and that no other block is allocated.
  Status VerifyOwners(std::span<const std::span<const BlockId>> owners) const;

 private:
  struct FreeDeleter {
    void operator()(uint8_t* p) const;
  };

  BlockPool(const KvShape& shape, int num_blocks, std::unique_ptr<uint8_t[], FreeDeleter> storage,
            size_t storage_bytes);
  uint8_t* BlockPtr(int layer, int kv, BlockId b) const;
  void DebugCheck() const;

  KvShape shape_;
  std::unique_ptr<uint8_t[], FreeDeleter> storage_;
  size_t storage_bytes_;
  size_t layer_region_bytes_;  // one layer's K (or V) region: num_blocks blocks
  std::vector<int32_t> ref_counts_;
  std::vector<BlockId> free_list_;  // a stack: back() is allocated next
};

}  // namespace mneme::kv
