// BlockPool: sizing from a budget, allocation, reference counts, layout, copy.
#include "kv/block_pool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

namespace mneme::kv {
namespace {

KvShape SmallShape(KvDType dtype = KvDType::kF16) {
  KvShape s;
  s.n_layers = 3;
  s.n_kv_heads = 2;
  s.head_dim = 8;
  s.block_size = 4;
  s.dtype = dtype;
  return s;
}

TEST(KvShapeTest, BytesPerTokenIsLayersTimesHeadsTimesDimTimesTwoTimesElement) {
  KvShape s = SmallShape();
  EXPECT_EQ(s.BytesPerToken(), 3u * 2 * 8 * 2 * 2);
  s.dtype = KvDType::kF32;
  EXPECT_EQ(s.BytesPerToken(), 3u * 2 * 8 * 2 * 4);
  EXPECT_EQ(s.BytesPerBlock(), 4u * 3 * 2 * 8 * 2 * 4);
  EXPECT_EQ(s.BytesPerLayerBlock(), 4u * 2 * 8 * 4);
}

TEST(BlockPoolTest, SizedFromBudget) {
  const KvShape s = SmallShape();
  auto pool = BlockPool::Create(s, s.BytesPerBlock() * 10 + s.BytesPerBlock() / 2);
  ASSERT_TRUE(pool.ok()) << pool.status().ToString();
  EXPECT_EQ((*pool)->num_blocks(), 10);
  EXPECT_EQ((*pool)->num_free(), 10);
  EXPECT_EQ((*pool)->storage_bytes(), s.BytesPerBlock() * 10);
}

TEST(BlockPoolTest, BudgetTooSmallIsAnError) {
  const KvShape s = SmallShape();
  auto pool = BlockPool::Create(s, s.BytesPerBlock() - 1);
  ASSERT_FALSE(pool.ok());
  EXPECT_EQ(pool.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(pool.status().message().find("holds no block"), std::string::npos);
}

TEST(BlockPoolTest, BadShapeIsAnError) {
  KvShape s = SmallShape();
  s.head_dim = 0;
  EXPECT_EQ(BlockPool::Create(s, 1 << 20).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(BlockPool::CreateWithBlocks(SmallShape(), 0).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(BlockPoolTest, AllocateIsAllOrNothing) {
  auto pool = std::move(BlockPool::CreateWithBlocks(SmallShape(), 5)).value();
  auto a = pool->Allocate(3);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, (std::vector<BlockId>{0, 1, 2}));
  EXPECT_FALSE(pool->CanAllocate(3));
  EXPECT_TRUE(pool->CanAllocate(2));
  auto b = pool->Allocate(3);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(pool->num_free(), 2);  // nothing taken by the failed call
  EXPECT_TRUE(pool->CheckInvariants().ok());
}

TEST(BlockPoolTest, RefCountsFreeAtZero) {
  auto pool = std::move(BlockPool::CreateWithBlocks(SmallShape(), 4)).value();
  const BlockId b = (*pool->Allocate(1))[0];
  EXPECT_EQ(pool->RefCount(b), 1);
  pool->AddRef(b);
  pool->AddRef(b);
  EXPECT_EQ(pool->RefCount(b), 3);
  pool->Release(b);
  pool->Release(b);
  EXPECT_EQ(pool->num_free(), 3);
  pool->Release(b);
  EXPECT_EQ(pool->RefCount(b), 0);
  EXPECT_EQ(pool->num_free(), 4);
  // The most recently freed block is handed out next.
  EXPECT_EQ((*pool->Allocate(1))[0], b);
}

TEST(BlockPoolTest, VerifyOwnersCatchesMismatch) {
  auto pool = std::move(BlockPool::CreateWithBlocks(SmallShape(), 4)).value();
  std::vector<BlockId> a = *pool->Allocate(2);
  pool->AddRef(a[1]);
  std::vector<BlockId> b = {a[1]};
  std::vector<std::span<const BlockId>> owners = {a, b};
  EXPECT_TRUE(pool->VerifyOwners(owners).ok());
  std::vector<std::span<const BlockId>> missing = {a};
  EXPECT_FALSE(pool->VerifyOwners(missing).ok());
}

TEST(BlockPoolDeathTest, ReleasingAFreeBlockIsABug) {
  auto pool = std::move(BlockPool::CreateWithBlocks(SmallShape(), 2)).value();
  EXPECT_DEATH(pool->Release(1), "Release of free block 1");
  EXPECT_DEATH(pool->AddRef(7), "AddRef of block 7");
}

TEST(BlockPoolTest, LayoutIsLayerThenKvThenBlock) {
  const KvShape s = SmallShape(KvDType::kF32);
  auto pool = std::move(BlockPool::CreateWithBlocks(s, 6)).value();
  const size_t layer_block = s.BytesPerLayerBlock();
  uint8_t* base = pool->LayerK(0);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % 64, 0u);
  EXPECT_EQ(pool->K(0, 0), base);
  EXPECT_EQ(pool->K(0, 5), base + 5 * layer_block);
  EXPECT_EQ(pool->V(0, 0), base + 6 * layer_block);
  EXPECT_EQ(pool->K(1, 0), base + 12 * layer_block);
  EXPECT_EQ(pool->V(2, 3), base + (5 * 6 + 3) * layer_block);
  EXPECT_EQ(pool->V(2, 5) + layer_block, base + pool->storage_bytes());
  EXPECT_EQ(pool->LayerV(1), pool->V(1, 0));
  EXPECT_EQ(pool->block_stride(), layer_block);
  // Head-major within a block: [n_kv_heads][block_size][head_dim].
  EXPECT_EQ(pool->ElementOffset(0, 0), 0);
  EXPECT_EQ(pool->ElementOffset(0, 3), 3 * 8);
  EXPECT_EQ(pool->ElementOffset(1, 0), 4 * 8);
  EXPECT_EQ(pool->ElementOffset(1, 2), (4 + 2) * 8);
  EXPECT_EQ(static_cast<size_t>(pool->ElementOffset(1, 3) + 8) * 4, layer_block);
}

TEST(BlockPoolTest, CopyBlockCopiesEveryLayerKAndV) {
  const KvShape s = SmallShape(KvDType::kF32);
  auto pool = std::move(BlockPool::CreateWithBlocks(s, 4)).value();
  std::vector<BlockId> b = *pool->Allocate(3);
  const size_t n = s.BytesPerLayerBlock();
  for (int layer = 0; layer < s.n_layers; ++layer) {
    std::memset(pool->K(layer, b[0]), 10 + layer, n);
    std::memset(pool->V(layer, b[0]), 20 + layer, n);
    std::memset(pool->K(layer, b[1]), 0, n);
    std::memset(pool->V(layer, b[1]), 0, n);
    std::memset(pool->K(layer, b[2]), 99, n);
    std::memset(pool->V(layer, b[2]), 99, n);
  }
  pool->CopyBlock(b[0], b[1]);
  for (int layer = 0; layer < s.n_layers; ++layer) {
    EXPECT_EQ(std::memcmp(pool->K(layer, b[1]), pool->K(layer, b[0]), n), 0);
    EXPECT_EQ(std::memcmp(pool->V(layer, b[1]), pool->V(layer, b[0]), n), 0);
    EXPECT_EQ(pool->K(layer, b[2])[0], 99);  // neighbours untouched
    EXPECT_EQ(pool->V(layer, b[2])[n - 1], 99);
  }
}

}  // namespace
}  // namespace mneme::kv
