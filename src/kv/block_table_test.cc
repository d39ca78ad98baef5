// BlockTable: appending, slot mapping, sharing, copy on write, and a seeded
// random test of many sequences sharing, forking, appending, truncating and
// releasing, checked against a plain model (expected token contents and
// reference counts recomputed from the live tables).
#include "kv/block_table.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>

namespace mneme::kv {
namespace {

constexpr int kBlock = 4;

KvShape F32Shape() {
  KvShape s;
  s.n_layers = 2;
  s.n_kv_heads = 2;
  s.head_dim = 2;
  s.block_size = kBlock;
  s.dtype = KvDType::kF32;
  return s;
}

std::unique_ptr<BlockPool> MakePool(int blocks) {
  return std::move(BlockPool::CreateWithBlocks(F32Shape(), blocks)).value();
}

// Token "contents": in every layer and KV head, K element 0 holds the value
// (offset by layer and head) and V element 1 its negation, so a stale or
// shared-but-overwritten slot shows up.
float Tag(float value, int layer, int head) {
  return value + static_cast<float>(layer) + 0.5f * static_cast<float>(head);
}

void WriteToken(BlockPool* pool, const BlockTable& t, int p, float value) {
  const KvSlot s = t.Slot(p);
  for (int layer = 0; layer < pool->shape().n_layers; ++layer) {
    for (int h = 0; h < pool->shape().n_kv_heads; ++h) {
      float* k = reinterpret_cast<float*>(pool->K(layer, s.block)) + pool->ElementOffset(h, s.slot);
      float* v = reinterpret_cast<float*>(pool->V(layer, s.block)) + pool->ElementOffset(h, s.slot);
      k[0] = Tag(value, layer, h);
      v[1] = -Tag(value, layer, h);
    }
  }
}

bool TokenIs(const BlockPool* pool, const BlockTable& t, int p, float value) {
  const KvSlot s = t.Slot(p);
  for (int layer = 0; layer < pool->shape().n_layers; ++layer) {
    for (int h = 0; h < pool->shape().n_kv_heads; ++h) {
      const float* k =
          reinterpret_cast<const float*>(pool->K(layer, s.block)) + pool->ElementOffset(h, s.slot);
      const float* v =
          reinterpret_cast<const float*>(pool->V(layer, s.block)) + pool->ElementOffset(h, s.slot);
      if (k[0] != Tag(value, layer, h) || v[1] != -Tag(value, layer, h)) return false;
    }
  }
  return true;
}

TEST(BlockTableTest, AppendAllocatesBlocksAsNeeded) {
  auto pool = MakePool(8);
  BlockTable t(pool.get());
  EXPECT_EQ(t.BlocksNeededToAppend(1), 1);
  ASSERT_TRUE(t.Append(1).ok());
  EXPECT_EQ(t.num_blocks(), 1);
  EXPECT_EQ(t.free_slots_in_last_block(), 3);
  EXPECT_EQ(t.BlocksNeededToAppend(3), 0);
  EXPECT_EQ(t.BlocksNeededToAppend(4), 1);
  ASSERT_TRUE(t.Append(8).ok());  // 9 tokens: 3 blocks
  EXPECT_EQ(t.num_tokens(), 9);
  EXPECT_EQ(t.num_blocks(), 3);
  EXPECT_EQ(pool->num_free(), 5);
  EXPECT_EQ(t.Slot(0), (KvSlot{t.blocks()[0], 0}));
  EXPECT_EQ(t.Slot(5), (KvSlot{t.blocks()[1], 1}));
  EXPECT_EQ(t.Slot(8), (KvSlot{t.blocks()[2], 0}));
  std::vector<KvSlot> slots;
  t.AppendSlots(3, 3, &slots);
  EXPECT_EQ(slots, (std::vector<KvSlot>{{t.blocks()[0], 3}, {t.blocks()[1], 0}, {t.blocks()[1], 1}}));
  t.Release();
  EXPECT_EQ(pool->num_free(), 8);
  EXPECT_EQ(t.num_tokens(), 0);
}

TEST(BlockTableTest, FailedAppendChangesNothing) {
  auto pool = MakePool(3);
  BlockTable t(pool.get());
  ASSERT_TRUE(t.Append(6).ok());  // 2 blocks
  const std::vector<BlockId> before = t.blocks();
  EXPECT_FALSE(t.CanAppend(7));
  Status s = t.Append(7);  // needs 2 more, 1 free
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(t.blocks(), before);
  EXPECT_EQ(t.num_tokens(), 6);
  EXPECT_EQ(pool->num_free(), 1);
  EXPECT_TRUE(t.Append(6).ok());  // exactly fits
  EXPECT_EQ(pool->num_free(), 0);
}

TEST(BlockTableTest, DestructorAndMoveReleaseExactlyOnce) {
  auto pool = MakePool(4);
  {
    BlockTable a(pool.get());
    ASSERT_TRUE(a.Append(5).ok());
    BlockTable b = std::move(a);
    EXPECT_EQ(a.num_blocks(), 0);  // NOLINT(bugprone-use-after-move): moved-from is empty
    EXPECT_EQ(pool->num_free(), 2);
    BlockTable c(pool.get());
    ASSERT_TRUE(c.Append(1).ok());
    c = std::move(b);  // c's own block goes back
    EXPECT_EQ(pool->num_free(), 2);
  }
  EXPECT_EQ(pool->num_free(), 4);
  EXPECT_TRUE(pool->CheckInvariants().ok());
}

TEST(BlockTableTest, FromBlocksSharesAndValidates) {
  auto pool = MakePool(8);
  BlockTable a(pool.get());
  ASSERT_TRUE(a.Append(6).ok());
  auto bad = BlockTable::FromBlocks(pool.get(), a.blocks(), 9);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  auto bad2 = BlockTable::FromBlocks(pool.get(), std::vector<BlockId>{7}, 1);  // free block
  EXPECT_EQ(bad2.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(pool->RefCount(a.blocks()[0]), 1);

  auto b = BlockTable::FromBlocks(pool.get(), std::span(a.blocks()).first(1), 4);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(pool->RefCount(a.blocks()[0]), 2);
  EXPECT_EQ(pool->RefCount(a.blocks()[1]), 1);
  // b's last block is full: appending takes a fresh block, no copy.
  EXPECT_EQ(b->BlocksNeededToAppend(1), 1);
  ASSERT_TRUE(b->Append(1).ok());
  EXPECT_EQ(b->blocks()[0], a.blocks()[0]);
}

TEST(BlockTableTest, ReplaceFullBlockSwapsReferences) {
  auto pool = MakePool(8);
  BlockTable mine(pool.get()), cached(pool.get());
  ASSERT_TRUE(mine.Append(6).ok());    // blocks m0 (full), m1 (2 of 4)
  ASSERT_TRUE(cached.Append(4).ok());  // block c0 (full)
  const BlockId m0 = mine.blocks()[0], c0 = cached.blocks()[0];
  mine.ReplaceFullBlock(0, c0);
  EXPECT_EQ(mine.blocks()[0], c0);
  EXPECT_EQ(pool->RefCount(c0), 2);
  EXPECT_EQ(pool->RefCount(m0), 0);  // back on the free list
  EXPECT_EQ(pool->num_used(), 2);
  mine.ReplaceFullBlock(0, c0);  // same block: nothing changes
  EXPECT_EQ(pool->RefCount(c0), 2);
  // Only whole blocks may be swapped: block 1 holds 2 of 4 tokens.
  EXPECT_DEATH(mine.ReplaceFullBlock(1, c0), "ReplaceFullBlock");
  mine.Release();
  EXPECT_EQ(pool->RefCount(c0), 1);
}

TEST(BlockTableTest, CopyOnWriteOfSharedPartialBlock) {
  auto pool = MakePool(8);
  BlockTable a(pool.get());
  ASSERT_TRUE(a.Append(6).ok());
  for (int p = 0; p < 6; ++p) WriteToken(pool.get(), a, p, 100.f + p);
  BlockTable b = a.Fork();
  EXPECT_EQ(pool->RefCount(a.blocks()[1]), 2);
  // Appending into the shared, half-full last block copies it first.
  EXPECT_EQ(b.BlocksNeededToAppend(1), 1);
  ASSERT_TRUE(b.Append(1).ok());
  EXPECT_EQ(b.blocks()[0], a.blocks()[0]);  // full block stays shared
  EXPECT_NE(b.blocks()[1], a.blocks()[1]);
  EXPECT_EQ(pool->RefCount(a.blocks()[1]), 1);
  EXPECT_EQ(pool->RefCount(b.blocks()[1]), 1);
  WriteToken(pool.get(), b, 6, 999.f);
  for (int p = 0; p < 6; ++p) {
    EXPECT_TRUE(TokenIs(pool.get(), b, p, 100.f + p)) << p;  // copied
    EXPECT_TRUE(TokenIs(pool.get(), a, p, 100.f + p)) << p;
  }
  // a still owns its block alone: appending writes in place.
  EXPECT_EQ(a.BlocksNeededToAppend(2), 0);
  ASSERT_TRUE(a.Append(2).ok());
  WriteToken(pool.get(), a, 6, 7.f);
  EXPECT_TRUE(TokenIs(pool.get(), b, 6, 999.f));
}

TEST(BlockTableTest, CopyOnWriteNeedsABlockAndFailsCleanly) {
  auto pool = MakePool(2);
  BlockTable a(pool.get());
  ASSERT_TRUE(a.Append(6).ok());
  BlockTable b = a.Fork();
  EXPECT_FALSE(b.CanAppend(1));
  EXPECT_EQ(b.Append(1).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(b.blocks(), a.blocks());
  EXPECT_EQ(pool->RefCount(a.blocks()[1]), 2);
}

TEST(BlockTableTest, TruncateReleasesTrailingBlocks) {
  auto pool = MakePool(8);
  BlockTable a(pool.get());
  ASSERT_TRUE(a.Append(10).ok());
  a.Truncate(5);
  EXPECT_EQ(a.num_blocks(), 2);
  EXPECT_EQ(pool->num_free(), 6);
  a.Truncate(0);
  EXPECT_EQ(a.num_blocks(), 0);
  EXPECT_EQ(pool->num_free(), 8);
}

// The random test's model of one sequence: its table and the value of every
// token it holds.
struct ModelSeq {
  BlockTable table;
  std::vector<float> tokens;
};

void CheckAgainstModel(const BlockPool& pool, const std::map<int, ModelSeq>& seqs) {
  std::vector<std::span<const BlockId>> owners;
  for (const auto& [id, s] : seqs) {
    ASSERT_EQ(s.table.num_tokens(), static_cast<int>(s.tokens.size()));
    ASSERT_EQ(s.table.num_blocks(), (s.table.num_tokens() + kBlock - 1) / kBlock);
    owners.push_back(s.table.blocks());
    for (int p = 0; p < s.table.num_tokens(); ++p) {
      ASSERT_TRUE(TokenIs(&pool, s.table, p, s.tokens[static_cast<size_t>(p)]))
          << "sequence " << id << " position " << p;
    }
  }
  Status st = pool.VerifyOwners(owners);
  ASSERT_TRUE(st.ok()) << st.ToString();
}

TEST(BlockTableRandomTest, ManySequencesSharingForkingAppending) {
  for (uint32_t seed : {1u, 2u, 3u, 42u}) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    auto pool = MakePool(48);
    std::map<int, ModelSeq> seqs;
    int next_id = 0;
    float next_value = 1.f;
    int failed_appends = 0;
    int copies = 0;
    auto pick = [&]() -> std::map<int, ModelSeq>::iterator {
      auto it = seqs.begin();
      std::advance(it, std::uniform_int_distribution<int>(0, static_cast<int>(seqs.size()) - 1)(rng));
      return it;
    };
    for (int step = 0; step < 4000; ++step) {
      const int op = std::uniform_int_distribution<int>(0, 9)(rng);
      if (seqs.empty() || op == 0) {  // new sequence
        seqs.emplace(next_id++, ModelSeq{BlockTable(pool.get()), {}});
      } else if (op <= 4) {  // append n tokens and write them
        ModelSeq& s = pick()->second;
        const int n = std::uniform_int_distribution<int>(1, 7)(rng);
        const int needed = s.table.BlocksNeededToAppend(n);
        const bool cow = s.table.num_tokens() % kBlock != 0 &&
                         pool->RefCount(s.table.blocks().back()) > 1;
        const std::vector<BlockId> before = s.table.blocks();
        const int free_before = pool->num_free();
        Status st = s.table.Append(n);
        if (needed > free_before) {
          ASSERT_EQ(st.code(), StatusCode::kResourceExhausted);
          ASSERT_EQ(s.table.blocks(), before);
          ASSERT_EQ(pool->num_free(), free_before);
          ++failed_appends;
        } else {
          ASSERT_TRUE(st.ok()) << st.ToString();
          ASSERT_EQ(pool->num_free(), free_before - needed);
          copies += cow ? 1 : 0;
          for (int i = 0; i < n; ++i) {
            WriteToken(pool.get(), s.table, static_cast<int>(s.tokens.size()), next_value);
            s.tokens.push_back(next_value);
            next_value += 1.f;
          }
        }
      } else if (op == 5) {  // fork a whole sequence
        const ModelSeq& src = pick()->second;
        seqs.emplace(next_id++, ModelSeq{src.table.Fork(), src.tokens});
      } else if (op == 6) {  // start a new sequence from a prefix of another
        const ModelSeq& src = pick()->second;
        const int len =
            std::uniform_int_distribution<int>(0, src.table.num_tokens())(rng);
        const int nblocks = (len + kBlock - 1) / kBlock;
        auto t = BlockTable::FromBlocks(
            pool.get(), std::span(src.table.blocks()).first(static_cast<size_t>(nblocks)), len);
        ASSERT_TRUE(t.ok()) << t.status().ToString();
        seqs.emplace(next_id++,
                     ModelSeq{std::move(t).value(),
                              std::vector<float>(src.tokens.begin(), src.tokens.begin() + len)});
      } else if (op == 7) {  // truncate
        ModelSeq& s = pick()->second;
        const int len = std::uniform_int_distribution<int>(0, s.table.num_tokens())(rng);
        s.table.Truncate(len);
        s.tokens.resize(static_cast<size_t>(len));
      } else {  // finish: release everything
        seqs.erase(pick());
      }
      CheckAgainstModel(*pool, seqs);
      if (HasFatalFailure()) return;
    }
    // The run must have exercised the interesting paths.
    EXPECT_GT(failed_appends, 0);
    EXPECT_GT(copies, 0);
    seqs.clear();
    EXPECT_EQ(pool->num_free(), pool->num_blocks());
  }
}

}  // namespace
}  // namespace mneme::kv
