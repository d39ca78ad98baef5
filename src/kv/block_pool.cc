// BlockPool: storage, reference counts and the free list (see block_pool.h).
#include "kv/block_pool.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace mneme::kv {
namespace {

constexpr size_t kStorageAlignment = 64;

Status ValidateShape(const KvShape& s) {
  if (s.n_layers <= 0 || s.n_kv_heads <= 0 || s.head_dim <= 0 || s.block_size <= 0) {
    return InvalidArgument("KV shape needs positive n_layers, n_kv_heads, head_dim, block_size (got " +
                           std::to_string(s.n_layers) + ", " + std::to_string(s.n_kv_heads) + ", " +
                           std::to_string(s.head_dim) + ", " + std::to_string(s.block_size) + ")");
  }
  return Status::Ok();
}

}  // namespace

size_t KvDTypeBytes(KvDType t) { return t == KvDType::kF16 ? 2 : 4; }

size_t KvShape::BytesPerToken() const {
  return static_cast<size_t>(n_layers) * static_cast<size_t>(TokenElements()) * 2 *
         KvDTypeBytes(dtype);
}

size_t KvShape::BytesPerLayerBlock() const {
  return static_cast<size_t>(block_size) * static_cast<size_t>(TokenElements()) *
         KvDTypeBytes(dtype);
}

void BlockPool::FreeDeleter::operator()(uint8_t* p) const { std::free(p); }

Result<std::unique_ptr<BlockPool>> BlockPool::Create(const KvShape& shape, size_t budget_bytes) {
  MNEME_RETURN_IF_ERROR(ValidateShape(shape));
  const size_t per_block = shape.BytesPerBlock();
  const size_t n = budget_bytes / per_block;
  if (n == 0) {
    return ResourceExhausted("KV memory budget of " + std::to_string(budget_bytes) +
                             " bytes holds no block (one block of " +
                             std::to_string(shape.block_size) + " tokens needs " +
                             std::to_string(per_block) + " bytes)");
  }
  if (n > static_cast<size_t>(INT32_MAX)) {
    return InvalidArgument("KV memory budget gives more than 2^31 blocks");
  }
  return CreateWithBlocks(shape, static_cast<int>(n));
}

Result<std::unique_ptr<BlockPool>> BlockPool::CreateWithBlocks(const KvShape& shape,
                                                               int num_blocks) {
  MNEME_RETURN_IF_ERROR(ValidateShape(shape));
  if (num_blocks <= 0) return InvalidArgument("KV pool needs at least one block");
  const size_t bytes = shape.BytesPerBlock() * static_cast<size_t>(num_blocks);
  const size_t rounded = (bytes + kStorageAlignment - 1) / kStorageAlignment * kStorageAlignment;
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(kStorageAlignment, rounded));
  if (p == nullptr) {
    return ResourceExhausted("cannot allocate " + std::to_string(rounded) +
                             " bytes for the KV pool");
  }
  // Touch every page now (as llama.cpp clears its KV buffer): the pool is
  // resident from the start, and serving never pays first-touch page faults
  // (measurable when the prefix cache keeps blocks and new ones keep coming
  // from untouched memory).
  std::memset(p, 0, rounded);
  std::unique_ptr<uint8_t[], FreeDeleter> storage(p);
  return std::unique_ptr<BlockPool>(new BlockPool(shape, num_blocks, std::move(storage), bytes));
}

BlockPool::BlockPool(const KvShape& shape, int num_blocks,
                     std::unique_ptr<uint8_t[], FreeDeleter> storage, size_t storage_bytes)
    : shape_(shape),
      storage_(std::move(storage)),
      storage_bytes_(storage_bytes),
      layer_region_bytes_(shape.BytesPerLayerBlock() * static_cast<size_t>(num_blocks)),
      ref_counts_(static_cast<size_t>(num_blocks), 0) {
  free_list_.reserve(static_cast<size_t>(num_blocks));
  for (BlockId b = num_blocks - 1; b >= 0; --b) free_list_.push_back(b);
  DebugCheck();
}

Result<std::vector<BlockId>> BlockPool::Allocate(int n) {
  CHECK(n >= 0) << "Allocate(" << n << ")";
  if (!CanAllocate(n)) {
    return ResourceExhausted("KV pool has " + std::to_string(num_free()) + " free blocks, " +
                             std::to_string(n) + " needed");
  }
  std::vector<BlockId> out;
  out.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const BlockId b = free_list_.back();
    free_list_.pop_back();
    ref_counts_[static_cast<size_t>(b)] = 1;
    out.push_back(b);
  }
  DebugCheck();
  return out;
}

void BlockPool::AddRef(BlockId b) {
  CHECK(IsValid(b)) << "AddRef of block " << b;
  CHECK(ref_counts_[static_cast<size_t>(b)] > 0) << "AddRef of free block " << b;
  ++ref_counts_[static_cast<size_t>(b)];
  DebugCheck();
}

void BlockPool::Release(BlockId b) {
  CHECK(IsValid(b)) << "Release of block " << b;
  int32_t& rc = ref_counts_[static_cast<size_t>(b)];
  CHECK(rc > 0) << "Release of free block " << b;
  if (--rc == 0) free_list_.push_back(b);
  DebugCheck();
}

void BlockPool::Release(std::span<const BlockId> blocks) {
  for (BlockId b : blocks) Release(b);
}

int BlockPool::RefCount(BlockId b) const {
  CHECK(IsValid(b)) << "RefCount of block " << b;
  return ref_counts_[static_cast<size_t>(b)];
}

void BlockPool::CopyBlock(BlockId src, BlockId dst) {
  CHECK(IsValid(src) && IsValid(dst) && src != dst) << "CopyBlock " << src << " -> " << dst;
  CHECK(RefCount(src) > 0 && RefCount(dst) > 0) << "CopyBlock of a free block";
  const size_t n = shape_.BytesPerLayerBlock();
  for (int layer = 0; layer < shape_.n_layers; ++layer) {
    std::memcpy(K(layer, dst), K(layer, src), n);
    std::memcpy(V(layer, dst), V(layer, src), n);
  }
}

uint8_t* BlockPool::BlockPtr(int layer, int kv, BlockId b) const {
  DCHECK(layer >= 0 && layer < shape_.n_layers && b >= 0 && b < num_blocks());
  const size_t offset = (static_cast<size_t>(layer) * 2 + static_cast<size_t>(kv)) *
                            layer_region_bytes_ +
                        static_cast<size_t>(b) * shape_.BytesPerLayerBlock();
  return storage_.get() + offset;
}

Status BlockPool::CheckInvariants() const {
  std::vector<bool> seen(ref_counts_.size(), false);
  for (BlockId b : free_list_) {
    if (!IsValid(b)) return Internal("free list holds invalid block " + std::to_string(b));
    if (seen[static_cast<size_t>(b)]) {
      return Internal("block " + std::to_string(b) + " is twice on the free list");
    }
    seen[static_cast<size_t>(b)] = true;
    if (ref_counts_[static_cast<size_t>(b)] != 0) {
      return Internal("free block " + std::to_string(b) + " has reference count " +
                      std::to_string(ref_counts_[static_cast<size_t>(b)]));
    }
  }
  int used = 0;
  for (size_t b = 0; b < ref_counts_.size(); ++b) {
    if (seen[b]) continue;
    if (ref_counts_[b] <= 0) {
      return Internal("block " + std::to_string(b) + " is neither free nor referenced");
    }
    ++used;
  }
  if (used + num_free() != num_blocks()) return Internal("free + used != total");
  return Status::Ok();
}

Status BlockPool::VerifyOwners(std::span<const std::span<const BlockId>> owners) const {
  std::vector<int32_t> expected(ref_counts_.size(), 0);
  for (std::span<const BlockId> list : owners) {
    for (BlockId b : list) {
      if (!IsValid(b)) return Internal("owner holds invalid block " + std::to_string(b));
      ++expected[static_cast<size_t>(b)];
    }
  }
  for (size_t b = 0; b < ref_counts_.size(); ++b) {
    if (expected[b] != ref_counts_[b]) {
      return Internal("block " + std::to_string(b) + " has reference count " +
                      std::to_string(ref_counts_[b]) + " but " + std::to_string(expected[b]) +
                      " owners");
    }
  }
  return CheckInvariants();
}

void BlockPool::DebugCheck() const {
#ifndef NDEBUG
  Status s = CheckInvariants();
  CHECK(s.ok()) << s.ToString();
#endif
}

}  // namespace mneme::kv
