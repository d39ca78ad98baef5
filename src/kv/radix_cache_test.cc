// RadixCache: one test per operation and edge case (match, peek, insert,
// split, lock, evict, clear, namespaces), the header's diagram scenario, and
// CheckInvariants catching a corrupted tree. The randomized comparison with a
// brute-force reference is in radix_cache_random_test.cc.
#include "kv/radix_cache.h"

#include <gtest/gtest.h>

#include <numeric>

namespace mneme::kv {
namespace {

constexpr int kBs = 4;  // tokens per block

std::unique_ptr<BlockPool> MakePool(int blocks) {
  KvShape s;
  s.n_layers = 1;
  s.n_kv_heads = 1;
  s.head_dim = 2;
  s.block_size = kBs;
  return std::move(BlockPool::CreateWithBlocks(s, blocks)).value();
}

// n consecutive token ids starting at `first`.
std::vector<TokenId> Range(TokenId first, int n) {
  std::vector<TokenId> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

std::vector<TokenId> Cat(std::vector<TokenId> a, const std::vector<TokenId>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<TokenId> Head(const std::vector<TokenId>& t, int n) {
  return {t.begin(), t.begin() + n};
}

class RadixCacheTest : public ::testing::Test {
 protected:
  RadixCacheTest() : pool_(MakePool(64)), cache_(pool_.get()) {}

  std::vector<BlockId> Alloc(int n) { return std::move(pool_->Allocate(n)).value(); }

  // A finished sequence: its own blocks go into the tree, then the sequence
  // releases its references (duplicates of cached blocks are freed).
  RadixCache::InsertResult Put(const std::string& ns, const std::vector<TokenId>& tokens) {
    const std::vector<BlockId> mine = Alloc(static_cast<int>(tokens.size()) / kBs);
    RadixCache::InsertResult r = cache_.Insert(ns, tokens, mine);
    pool_->Release(mine);
    return r;
  }

  void ExpectConsistent() {
    EXPECT_TRUE(cache_.CheckInvariants().ok()) << cache_.CheckInvariants().ToString();
    const std::vector<BlockId> owned = cache_.OwnedBlocks();
    const std::span<const BlockId> owners[] = {owned};
    EXPECT_TRUE(pool_->VerifyOwners(owners).ok()) << pool_->VerifyOwners(owners).ToString();
  }

  std::unique_ptr<BlockPool> pool_;
  RadixCache cache_;
};

TEST_F(RadixCacheTest, EmptyCacheMatchesNothing) {
  const std::vector<TokenId> t = Range(0, 12);
  RadixCache::Match m = cache_.MatchPrefix("", t, 100);
  EXPECT_EQ(m.num_tokens, 0);
  EXPECT_TRUE(m.blocks.empty());
  ASSERT_NE(m.node, nullptr);
  EXPECT_EQ(m.node->parent, nullptr);
  EXPECT_EQ(cache_.PeekPrefixLength("never-seen", t, 100), 0);
  EXPECT_EQ(cache_.num_blocks(), 0);
  EXPECT_EQ(cache_.num_nodes(), 0);
  EXPECT_EQ(cache_.evictable_blocks(), 0);
  EXPECT_EQ(cache_.Evict(10), 0);
}

TEST_F(RadixCacheTest, InsertThenMatchWholeBlocksOnly) {
  const std::vector<TokenId> t = Range(100, 12);
  const std::vector<BlockId> b = Alloc(3);
  RadixCache::InsertResult r = cache_.Insert("", t, b);
  EXPECT_EQ(r.blocks, b);
  EXPECT_EQ(r.num_new_blocks, 3);
  ASSERT_NE(r.node, nullptr);
  EXPECT_EQ(r.node->blocks, b);
  for (BlockId id : b) EXPECT_EQ(pool_->RefCount(id), 2);  // ours and the tree's
  pool_->Release(b);
  EXPECT_EQ(cache_.num_blocks(), 3);
  EXPECT_EQ(cache_.evictable_blocks(), 3);
  EXPECT_EQ(pool_->num_used(), 3);

  RadixCache::Match m = cache_.MatchPrefix("", Cat(t, {7, 7}), 100);  // longer query
  EXPECT_EQ(m.num_tokens, 12);
  EXPECT_EQ(m.blocks, b);
  EXPECT_EQ(m.node, r.node);

  std::vector<TokenId> diverges = t;
  diverges[9] = -1;  // inside the third block
  EXPECT_EQ(cache_.PeekPrefixLength("", diverges, 100), 8);
  EXPECT_EQ(cache_.PeekPrefixLength("", Head(t, 10), 100), 8);  // a partial block never matches
  // Diverging inside the first block: nothing.
  diverges[1] = -1;
  m = cache_.MatchPrefix("", diverges, 100);
  EXPECT_EQ(m.num_tokens, 0);
  EXPECT_EQ(m.node->parent, nullptr);
  EXPECT_EQ(cache_.num_nodes(), 1);
  ExpectConsistent();
}

TEST_F(RadixCacheTest, MaxTokensIsRoundedDownToWholeBlocks) {
  const std::vector<TokenId> t = Range(0, 12);
  Put("", t);
  EXPECT_EQ(cache_.PeekPrefixLength("", t, 11), 8);
  EXPECT_EQ(cache_.PeekPrefixLength("", t, 12), 12);
  EXPECT_EQ(cache_.PeekPrefixLength("", t, kBs - 1), 0);
  EXPECT_EQ(cache_.PeekPrefixLength("", t, -3), 0);
  RadixCache::Match m = cache_.MatchPrefix("", t, kBs - 1);
  EXPECT_EQ(m.num_tokens, 0);
  EXPECT_TRUE(m.blocks.empty());
  EXPECT_EQ(m.node->parent, nullptr);
  EXPECT_EQ(cache_.num_nodes(), 1);  // nothing split
  // The scheduler's cap: prompt length - 1.
  m = cache_.MatchPrefix("", t, static_cast<int>(t.size()) - 1);
  EXPECT_EQ(m.num_tokens, 8);
  EXPECT_EQ(m.blocks.size(), 2u);
  ExpectConsistent();
}

TEST_F(RadixCacheTest, MatchInsideAnEdgeSplitsAndKeepsTheLowerNode) {
  const std::vector<TokenId> t = Range(0, 16);
  RadixCache::InsertResult r = Put("", t);
  RadixCache::Node* low = r.node;
  const std::vector<BlockId> all = low->blocks;
  cache_.Lock(low);
  EXPECT_EQ(cache_.evictable_blocks(), 0);

  RadixCache::Match m = cache_.MatchPrefix("", t, 9);  // 2 blocks
  ASSERT_EQ(m.num_tokens, 8);
  EXPECT_EQ(cache_.num_nodes(), 2);
  RadixCache::Node* up = m.node;
  EXPECT_NE(up, low);
  EXPECT_EQ(up->blocks, std::vector<BlockId>(all.begin(), all.begin() + 2));
  EXPECT_EQ(low->blocks, std::vector<BlockId>(all.begin() + 2, all.end()));
  EXPECT_EQ(low->tokens, Range(8, 8));
  EXPECT_EQ(low->parent, up);
  EXPECT_EQ(up->lock, 1);  // inherited: the lock on low pins the upper part too
  EXPECT_GE(up->last_access, low->last_access);
  EXPECT_EQ(cache_.Evict(100), 0);

  cache_.Unlock(low);  // the handle from before the split is still the one to unlock
  EXPECT_EQ(cache_.evictable_blocks(), 4);
  EXPECT_EQ(cache_.Evict(1), 2);  // the leaf (low) goes first
  EXPECT_EQ(cache_.PeekPrefixLength("", t, 100), 8);
  EXPECT_EQ(cache_.Evict(1), 2);
  EXPECT_EQ(cache_.num_nodes(), 0);
  EXPECT_EQ(pool_->num_free(), pool_->num_blocks());
}

TEST_F(RadixCacheTest, MatchEndingAtANodeBoundaryDoesNotSplit) {
  const std::vector<TokenId> a = Range(0, 8);
  RadixCache::InsertResult ra = Put("", a);
  Put("", Cat(a, Range(50, 8)));
  EXPECT_EQ(cache_.num_nodes(), 2);
  RadixCache::Match m = cache_.MatchPrefix("", Cat(a, {1, 2, 3, 4}), 100);
  EXPECT_EQ(m.num_tokens, 8);
  EXPECT_EQ(m.node, ra.node);
  EXPECT_EQ(cache_.num_nodes(), 2);
}

TEST_F(RadixCacheTest, PeekNeitherSplitsNorStamps) {
  const std::vector<TokenId> a = Range(0, 8);
  const std::vector<TokenId> b = Range(100, 8);
  Put("", a);
  Put("", b);  // b is the most recently used
  EXPECT_EQ(cache_.PeekPrefixLength("", a, 4), 4);
  EXPECT_EQ(cache_.num_nodes(), 2);  // no split
  EXPECT_EQ(cache_.Evict(1), 2);     // a is still the least recently used
  EXPECT_EQ(cache_.PeekPrefixLength("", a, 100), 0);
  EXPECT_EQ(cache_.PeekPrefixLength("", b, 100), 8);

  Put("", a);  // now a is the most recent; a match on b makes b the most recent
  EXPECT_EQ(cache_.MatchPrefix("", b, 100).num_tokens, 8);
  EXPECT_EQ(cache_.Evict(1), 2);
  EXPECT_EQ(cache_.PeekPrefixLength("", a, 100), 0);
  EXPECT_EQ(cache_.PeekPrefixLength("", b, 100), 8);
}

TEST_F(RadixCacheTest, InsertKeepsCachedBlocksAndAdoptsTheRest) {
  const std::vector<TokenId> t1 = Range(0, 12);
  const std::vector<BlockId> b1 = Put("", t1).blocks;
  const std::vector<TokenId> t2 = Cat(Head(t1, 8), Range(50, 8));
  const std::vector<BlockId> b2 = Alloc(4);  // the sequence computed all 4 itself
  RadixCache::InsertResult r = cache_.Insert("", t2, b2);
  EXPECT_EQ(r.blocks, (std::vector<BlockId>{b1[0], b1[1], b2[2], b2[3]}));
  EXPECT_EQ(r.num_new_blocks, 2);
  EXPECT_EQ(pool_->RefCount(b2[0]), 1);  // duplicates: not taken
  EXPECT_EQ(pool_->RefCount(b2[1]), 1);
  EXPECT_EQ(pool_->RefCount(b2[2]), 2);  // adopted
  EXPECT_EQ(cache_.num_nodes(), 3);      // split [0,8) | [8,12) and the new [8,16)
  EXPECT_EQ(cache_.num_blocks(), 5);
  pool_->Release(b2);  // the sequence ends
  EXPECT_EQ(pool_->num_used(), 5);
  EXPECT_EQ(cache_.PeekPrefixLength("", t1, 100), 12);
  EXPECT_EQ(cache_.PeekPrefixLength("", t2, 100), 16);
  ExpectConsistent();
}

TEST_F(RadixCacheTest, InsertEndingInsideAnEdgeSplits) {
  const std::vector<TokenId> t = Range(0, 16);
  RadixCache::InsertResult whole = Put("", t);
  RadixCache::Node* low = whole.node;
  const std::vector<BlockId> dup = Alloc(2);
  RadixCache::InsertResult r = cache_.Insert("", Head(t, 8), dup);
  EXPECT_EQ(r.num_new_blocks, 0);
  EXPECT_EQ(r.blocks, Head(whole.blocks, 2));
  EXPECT_NE(r.node, low);
  EXPECT_EQ(low->parent, r.node);
  EXPECT_EQ(r.node->blocks, Head(whole.blocks, 2));
  EXPECT_EQ(cache_.num_nodes(), 2);
  EXPECT_EQ(cache_.num_blocks(), 4);
  EXPECT_EQ(pool_->RefCount(dup[0]), 1);
  pool_->Release(dup);
  ExpectConsistent();
}

TEST_F(RadixCacheTest, InsertOfNothingReturnsTheRootAndChangesNothing) {
  Put("", Range(0, 8));
  const int used = pool_->num_used();
  RadixCache::InsertResult r = cache_.Insert("", {}, {});
  ASSERT_NE(r.node, nullptr);
  EXPECT_EQ(r.node->parent, nullptr);
  EXPECT_TRUE(r.blocks.empty());
  EXPECT_EQ(r.num_new_blocks, 0);
  EXPECT_EQ(r.node, cache_.MatchPrefix("", Range(500, 4), 100).node);  // the same root
  EXPECT_NE(r.node, cache_.Insert("other", {}, {}).node);
  EXPECT_EQ(cache_.num_nodes(), 1);
  EXPECT_EQ(cache_.num_blocks(), 2);
  EXPECT_EQ(pool_->num_used(), used);
}

TEST_F(RadixCacheTest, ChildrenMayShareLeadingTokensOfTheirFirstBlock) {
  Put("", {1, 2, 3, 4, 5, 6, 7, 8});
  const std::vector<BlockId> b2 = Put("", {1, 2, 3, 4, 5, 6, 7, 9}).blocks;
  Put("", {1, 2, 3, 5, 5, 6, 7, 8});
  EXPECT_EQ(cache_.num_nodes(), 4);  // {1,2,3,4} -> {5,6,7,8} | {5,6,7,9}; {1,2,3,5 ...}
  RadixCache::Match m =
      cache_.MatchPrefix("", std::vector<TokenId>{1, 2, 3, 4, 5, 6, 7, 9, 0}, 100);
  EXPECT_EQ(m.num_tokens, 8);
  EXPECT_EQ(m.blocks, b2);
  EXPECT_EQ(cache_.PeekPrefixLength("", std::vector<TokenId>{1, 2, 3, 4, 5, 6, 7, 0}, 100), 4);
  EXPECT_EQ(cache_.PeekPrefixLength("", std::vector<TokenId>{1, 2, 3, 5, 5, 6, 7, 8}, 100), 8);
  EXPECT_EQ(cache_.PeekPrefixLength("", std::vector<TokenId>{1, 2, 3, 6, 5, 6, 7, 8}, 100), 0);
  ExpectConsistent();
}

// The header's diagram: a shared system prompt A (4 blocks) with user turns
// B (2) and C (3) under it, and D (1) beside it.
TEST_F(RadixCacheTest, DiagramScenarioSystemPromptOutlivesLeaves) {
  const std::vector<TokenId> sys = Range(1000, 16);
  const std::vector<TokenId> u1 = Cat(sys, Range(2000, 8));
  const std::vector<TokenId> u2 = Cat(sys, Range(3000, 12));
  Put("", u1);
  RadixCache::Node* c = Put("", u2).node;  // splits u1 into A + B
  RadixCache::Node* d = Put("", Range(4000, 4)).node;
  RadixCache::Match mb = cache_.MatchPrefix("", Cat(u1, {1}), 100);  // stamps A and B
  RadixCache::Node* b = mb.node;
  RadixCache::Node* a = b->parent;
  ASSERT_EQ(mb.num_tokens, 24);
  EXPECT_EQ(a->blocks.size(), 4u);
  EXPECT_EQ(c->parent, a);
  cache_.Lock(b);  // a sequence continuing turn 1
  RadixCache::Match ma = cache_.MatchPrefix("", Cat(sys, {9, 9, 9, 9}), 100);
  EXPECT_EQ(ma.node, a);
  cache_.Lock(a);  // a new conversation sharing only the system prompt
  EXPECT_EQ(a->lock, 2);
  EXPECT_EQ(b->lock, 1);
  EXPECT_EQ(c->lock, 0);
  EXPECT_EQ(d->lock, 0);
  EXPECT_LT(c->last_access, d->last_access);
  EXPECT_EQ(cache_.num_blocks(), 10);
  EXPECT_EQ(cache_.num_nodes(), 4);
  EXPECT_EQ(cache_.evictable_blocks(), 4);  // C and D

  const int free_before = pool_->num_free();
  EXPECT_EQ(cache_.Evict(1), 3);  // C, the least recently used (whole node)
  EXPECT_EQ(pool_->num_free(), free_before + 3);
  EXPECT_EQ(cache_.PeekPrefixLength("", u2, 100), 16);  // the system prompt stays
  EXPECT_EQ(cache_.Evict(1), 1);                        // D
  EXPECT_EQ(cache_.Evict(100), 0);                      // the rest is locked
  EXPECT_EQ(cache_.num_blocks(), 6);

  cache_.Unlock(b);
  EXPECT_EQ(cache_.evictable_blocks(), 2);
  EXPECT_EQ(cache_.Evict(100), 2);  // B; A is still locked by the second sequence
  EXPECT_EQ(cache_.PeekPrefixLength("", u1, 100), 16);
  cache_.Unlock(a);
  EXPECT_EQ(cache_.Evict(100), 4);
  EXPECT_EQ(cache_.num_nodes(), 0);
  EXPECT_EQ(pool_->num_free(), pool_->num_blocks());
}

TEST_F(RadixCacheTest, WithoutLocksTheSharedPrefixIsEvictedLast) {
  const std::vector<TokenId> sys = Range(1000, 16);
  const std::vector<TokenId> u1 = Cat(sys, Range(2000, 8));
  const std::vector<TokenId> u2 = Cat(sys, Range(3000, 12));
  Put("", u1);
  Put("", u2);
  Put("", Range(4000, 4));
  // The system prompt and turn 2 are the most recent.
  cache_.MatchPrefix("", u2, 100);
  const int order[] = {2, 1, 3, 4};  // B, D, C, then A once it is a leaf
  for (int blocks : order) {
    EXPECT_EQ(cache_.PeekPrefixLength("", sys, 100), 16);
    EXPECT_EQ(cache_.Evict(1), blocks);
  }
  EXPECT_EQ(cache_.PeekPrefixLength("", sys, 100), 0);
  EXPECT_EQ(cache_.num_nodes(), 0);
}

TEST_F(RadixCacheTest, EvictReleasesWholeLeavesUntilEnough) {
  Put("", Range(0, 8));
  Put("", Range(100, 8));
  Put("", Range(200, 8));
  EXPECT_EQ(cache_.Evict(0), 0);
  EXPECT_EQ(cache_.num_blocks(), 6);
  EXPECT_EQ(cache_.Evict(3), 4);  // two leaves of 2: at least 3
  EXPECT_EQ(cache_.PeekPrefixLength("", Range(200, 8), 100), 8);
  EXPECT_EQ(cache_.Evict(100), 2);  // all there is
  EXPECT_EQ(cache_.Evict(100), 0);
}

TEST_F(RadixCacheTest, EvictedBlockStillHeldBySequenceStaysAllocated) {
  const std::vector<TokenId> t = Range(0, 8);
  const std::vector<BlockId> mine = Alloc(2);
  cache_.Insert("", t, mine);  // the sequence keeps running, unlocked
  const int free_before = pool_->num_free();
  EXPECT_EQ(cache_.Evict(100), 2);
  EXPECT_EQ(pool_->num_free(), free_before);
  EXPECT_EQ(pool_->RefCount(mine[0]), 1);
  pool_->Release(mine);
  EXPECT_EQ(pool_->num_free(), pool_->num_blocks());
}

TEST_F(RadixCacheTest, LockAndUnlockOnARootAreNoOps) {
  Put("", Range(0, 8));
  RadixCache::Node* root = cache_.MatchPrefix("", Range(500, 8), 100).node;
  ASSERT_EQ(root->parent, nullptr);
  cache_.Lock(root);
  cache_.Unlock(root);
  cache_.Unlock(root);
  EXPECT_EQ(root->lock, 0);
  EXPECT_EQ(cache_.evictable_blocks(), 2);
  EXPECT_EQ(cache_.Evict(100), 2);
}

TEST_F(RadixCacheTest, LocksAreCountedAlongThePath) {
  const std::vector<TokenId> t = Range(0, 8);
  RadixCache::Node* top = Put("", t).node;
  RadixCache::Node* leaf = Put("", Cat(t, Range(50, 4))).node;
  cache_.Lock(leaf);
  cache_.Lock(leaf);
  cache_.Lock(top);
  EXPECT_EQ(leaf->lock, 2);
  EXPECT_EQ(top->lock, 3);
  cache_.Unlock(leaf);
  cache_.Unlock(top);
  EXPECT_EQ(cache_.Evict(100), 0);  // one lock on leaf still pins both
  cache_.Unlock(leaf);
  EXPECT_EQ(cache_.evictable_blocks(), 3);
}

TEST_F(RadixCacheTest, UnbalancedUnlockIsABug) {
  RadixCache::Node* top = Put("", Range(0, 8)).node;
  RadixCache::Node* leaf = Put("", Cat(Range(0, 8), Range(50, 4))).node;
  EXPECT_DEATH(cache_.Unlock(leaf), "without a matching Lock");
  cache_.Lock(leaf);
  EXPECT_DEATH(cache_.Unlock(top), "without a matching Lock");  // pinned only via leaf
  cache_.Unlock(leaf);
}

TEST_F(RadixCacheTest, NamespacesAreSeparateTrees) {
  const std::vector<TokenId> t = Range(0, 8);
  const std::vector<BlockId> in_default = Put("", t).blocks;
  EXPECT_EQ(cache_.PeekPrefixLength("tenant-x", t, 100), 0);
  const std::vector<BlockId> in_x = Put("tenant-x", t).blocks;
  EXPECT_EQ(cache_.num_blocks(), 4);  // nothing shared across namespaces
  EXPECT_EQ(cache_.MatchPrefix("tenant-x", t, 100).blocks, in_x);
  EXPECT_EQ(cache_.MatchPrefix("", t, 100).blocks, in_default);  // now the most recent
  RadixCache::Node* x = cache_.MatchPrefix("tenant-x", t, 100).node;
  cache_.Lock(x);
  EXPECT_EQ(cache_.evictable_blocks(), 2);
  EXPECT_EQ(cache_.Evict(100), 2);  // one LRU over all namespaces; x is locked
  EXPECT_EQ(cache_.PeekPrefixLength("", t, 100), 0);
  EXPECT_EQ(cache_.PeekPrefixLength("tenant-x", t, 100), 8);
  cache_.Unlock(x);
  ExpectConsistent();
}

TEST_F(RadixCacheTest, ClearDropsUnlockedNodesOnly) {
  const std::vector<TokenId> sys = Range(0, 8);
  RadixCache::Node* keep = Put("", Cat(sys, Range(100, 4))).node;
  Put("", Cat(sys, Range(200, 8)));
  Put("other", Range(300, 4));
  cache_.Lock(keep);
  cache_.Clear();
  EXPECT_EQ(cache_.num_blocks(), 3);  // the locked path: sys + its turn
  EXPECT_EQ(cache_.evictable_blocks(), 0);
  EXPECT_EQ(cache_.PeekPrefixLength("", Cat(sys, Range(100, 4)), 100), 12);
  EXPECT_EQ(cache_.PeekPrefixLength("", Cat(sys, Range(200, 8)), 100), 8);
  EXPECT_EQ(cache_.PeekPrefixLength("other", Range(300, 4), 100), 0);
  cache_.Unlock(keep);
  cache_.Clear();
  EXPECT_EQ(cache_.num_nodes(), 0);
  EXPECT_EQ(pool_->num_free(), pool_->num_blocks());
}

TEST(RadixCacheLifetimeTest, DestructorReleasesEveryReference) {
  std::unique_ptr<BlockPool> pool = MakePool(16);
  {
    RadixCache cache(pool.get());
    const std::vector<BlockId> b = std::move(pool->Allocate(3)).value();
    RadixCache::InsertResult r = cache.Insert("", Range(0, 12), b);
    pool->Release(b);
    cache.Lock(r.node);  // even locked nodes
    EXPECT_EQ(pool->num_used(), 3);
  }
  EXPECT_EQ(pool->num_free(), 16);
}

TEST_F(RadixCacheTest, CheckInvariantsNamesWhatIsBroken) {
  RadixCache::Node* a = Put("", Range(0, 8)).node;
  RadixCache::Node* b = Put("", Cat(Range(0, 8), Range(50, 4))).node;
  ASSERT_TRUE(cache_.CheckInvariants().ok());
  // Corrupt one field at a time (no mutation runs in between) and restore it.
  ++a->lock;
  EXPECT_NE(cache_.CheckInvariants().message().find("lock"), std::string::npos);
  --a->lock;
  b->last_access = a->last_access + 1;
  EXPECT_NE(cache_.CheckInvariants().message().find("last_access"), std::string::npos);
  b->last_access = a->last_access;
  const BlockId saved = b->blocks[0];
  b->blocks[0] = a->blocks[0];
  EXPECT_NE(cache_.CheckInvariants().message().find("twice"), std::string::npos);
  b->blocks[0] = saved;
  b->tokens[0] = -7;
  EXPECT_NE(cache_.CheckInvariants().message().find("key"), std::string::npos);
  b->tokens[0] = 50;
  b->tokens.push_back(1);
  EXPECT_NE(cache_.CheckInvariants().message().find("tokens"), std::string::npos);
  b->tokens.pop_back();
  EXPECT_TRUE(cache_.CheckInvariants().ok()) << cache_.CheckInvariants().ToString();
}

}  // namespace
}  // namespace mneme::kv
