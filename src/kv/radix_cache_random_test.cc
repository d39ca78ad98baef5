// RadixCache against a brute-force reference, on seeded random workloads.
//
// Simulated sequences do what the scheduler does: match a prompt (capped at
// its length - 1), take references on the matched blocks, lock the match,
// allocate the rest (evicting when the pool runs short), insert their blocks
// (all or a prefix), swap their duplicates for the tree's blocks, move their
// lock to the inserted node, and release everything when they end. Queries,
// peeks, explicit evictions and clears are mixed in. Tokens come from a
// 3-letter alphabet and shared prefixes cut at any token, so matches, splits
// inside edges and first-block collisions are frequent.
//
// The reference is a flat map of every cached (namespace, whole-block
// prefix) -> (the block holding its last block, the logical time it was last
// used). Matching is brute force over all entries. It learns evictions only
// from the pool: after each Evict/Clear, an entry whose block has no
// reference beyond the sequences' is gone. Then it checks that what went is
// consistent with LRU (nothing evicted was used after a surviving unlocked
// leaf), that no locked prefix went, that the count matches Evict's return,
// and after every step that the tree owns exactly the reference's blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <map>
#include <random>
#include <set>

#include "kv/radix_cache.h"

namespace mneme::kv {
namespace {

constexpr int kBs = 4;
constexpr int kPoolBlocks = 64;
constexpr int kMaxSeqBlocks = 8;  // so no node holds more than this
constexpr int kMaxSeqs = 6;
constexpr int kSteps = 4000;
const char* const kNamespaces[] = {"", "tenant-x"};

using Key = std::pair<std::string, std::vector<TokenId>>;  // (namespace, whole-block prefix)

struct Seq {
  std::string ns;
  std::vector<TokenId> tokens;  // whole blocks
  std::vector<BlockId> blocks;  // one reference each, held by the sequence
  RadixCache::Node* locked = nullptr;
  int locked_blocks = 0;  // the locked path covers tokens[0, locked_blocks * kBs)
};

class RadixCacheRandomTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  struct Entry {
    BlockId block;
    uint64_t stamp;
  };

  RadixCacheRandomTest() : rng_(GetParam()) {
    KvShape s;
    s.n_layers = 1;
    s.n_kv_heads = 1;
    s.head_dim = 2;
    s.block_size = kBs;
    pool_ = std::move(BlockPool::CreateWithBlocks(s, kPoolBlocks)).value();
    cache_ = std::make_unique<RadixCache>(pool_.get());
    for (int len : {4, 8, 12}) {
      std::vector<TokenId> p;
      for (int i = 0; i < len; ++i) p.push_back(Letter());
      system_prompts_.push_back(p);
    }
  }

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  TokenId Letter() { return Uniform(0, 2); }
  static Key KeyOf(const std::string& ns, const std::vector<TokenId>& t, int blocks) {
    return {ns, std::vector<TokenId>(t.begin(), t.begin() + blocks * kBs)};
  }

  // A prompt: a cut (at any token) of a cached prefix, a live sequence or a
  // system prompt, then random letters up to a whole number of blocks.
  std::vector<TokenId> Prompt() {
    std::vector<TokenId> base;
    const int r = Uniform(0, 9);
    if (r < 4 && !ref_.empty()) {
      base = std::next(ref_.begin(), Uniform(0, static_cast<int>(ref_.size()) - 1))->first.second;
    } else if (r < 6 && !seqs_.empty()) {
      base = seqs_[static_cast<size_t>(Uniform(0, static_cast<int>(seqs_.size()) - 1))].tokens;
    } else if (r < 9) {
      base = system_prompts_[static_cast<size_t>(Uniform(0, 2))];
    }
    const int keep =
        Chance(0.4) ? static_cast<int>(base.size()) : Uniform(0, static_cast<int>(base.size()));
    std::vector<TokenId> t(base.begin(), base.begin() + keep);
    const int blocks = Uniform(std::max(1, (keep + kBs - 1) / kBs), kMaxSeqBlocks);
    while (static_cast<int>(t.size()) < blocks * kBs) t.push_back(Letter());
    return t;
  }

  // Reference match: the longest cached prefix (whole blocks, within the
  // cap) over all entries, by brute force. Returns its length in blocks.
  int RefMatch(const std::string& ns, const std::vector<TokenId>& t, int max_tokens) const {
    const int cap = std::min(static_cast<int>(t.size()), std::max(max_tokens, 0)) / kBs;
    int best = 0;
    for (const auto& [key, e] : ref_) {
      const int n = static_cast<int>(key.second.size()) / kBs;
      if (key.first == ns && n <= cap && n > best &&
          std::equal(key.second.begin(), key.second.end(), t.begin())) {
        best = n;
      }
    }
    return best;
  }
  std::vector<BlockId> RefBlocks(const std::string& ns, const std::vector<TokenId>& t,
                                 int n) const {
    std::vector<BlockId> out;
    for (int i = 1; i <= n; ++i) out.push_back(ref_.at(KeyOf(ns, t, i)).block);
    return out;
  }
  void RefTouch(const std::string& ns, const std::vector<TokenId>& t, int n) {
    if (n == 0) return;
    ++clock_;
    for (int i = 1; i <= n; ++i) ref_.at(KeyOf(ns, t, i)).stamp = clock_;
  }

  std::map<BlockId, int> SequenceRefs() const {
    std::map<BlockId, int> refs;
    for (const Seq& s : seqs_) {
      for (BlockId b : s.blocks) ++refs[b];
    }
    return refs;
  }
  std::set<Key> LockedKeys() const {
    std::set<Key> keys;
    for (const Seq& s : seqs_) {
      for (int i = 1; s.locked != nullptr && i <= s.locked_blocks; ++i)
        keys.insert(KeyOf(s.ns, s.tokens, i));
    }
    return keys;
  }

  // After an Evict/Clear that reported `released` blocks: drop the entries
  // whose block the tree no longer references and check what went.
  void Reconcile(int released) {
    const std::map<BlockId, int> seq_refs = SequenceRefs();
    uint64_t newest_evicted = 0;
    int evicted = 0;
    for (auto it = ref_.begin(); it != ref_.end();) {
      auto s = seq_refs.find(it->second.block);
      const int tree_refs =
          pool_->RefCount(it->second.block) - (s == seq_refs.end() ? 0 : s->second);
      ASSERT_TRUE(tree_refs == 0 || tree_refs == 1) << "block " << it->second.block;
      if (tree_refs == 0) {
        newest_evicted = std::max(newest_evicted, it->second.stamp);
        ++evicted;
        it = ref_.erase(it);
      } else {
        ++it;
      }
    }
    ASSERT_EQ(evicted, released);
    const std::set<Key> locked = LockedKeys();
    for (const Key& k : locked) ASSERT_TRUE(ref_.count(k)) << "a locked prefix was evicted";
    std::set<Key> inner;  // prefixes with a cached extension
    for (const auto& [key, e] : ref_) {
      if (key.second.size() > static_cast<size_t>(kBs)) {
        Key parent{key.first, std::vector<TokenId>(key.second.begin(), key.second.end() - kBs)};
        ASSERT_TRUE(ref_.count(parent)) << "a cached prefix lost its parent";
        inner.insert(parent);
      }
    }
    if (evicted == 0) return;
    for (const auto& [key, e] : ref_) {
      if (!inner.count(key) && !locked.count(key)) {
        ASSERT_LE(newest_evicted, e.stamp) << "evicted something used after a surviving leaf";
      }
    }
  }

  int EvictAndCheck(int n) {
    const int evictable = cache_->evictable_blocks();
    const int released = cache_->Evict(n);
    EXPECT_LE(released, evictable);
    if (released < n) {
      EXPECT_EQ(cache_->evictable_blocks(), 0);
    }
    EXPECT_LT(released, n + kMaxSeqBlocks);  // whole leaves, but no more than needed
    Reconcile(released);
    return released;
  }

  void NewSequence() {
    seqs_.emplace_back();  // listed at once: its references and lock count as a sequence's
    Seq& s = seqs_.back();
    s.ns = kNamespaces[Chance(0.8) ? 0 : 1];
    s.tokens = Prompt();
    const int size = static_cast<int>(s.tokens.size());
    const int k = RefMatch(s.ns, s.tokens, size - 1);
    RadixCache::Match m = cache_->MatchPrefix(s.ns, s.tokens, size - 1);
    ASSERT_EQ(m.num_tokens, k * kBs);
    ASSERT_EQ(m.blocks, RefBlocks(s.ns, s.tokens, k));
    ASSERT_NE(m.node, nullptr);
    ASSERT_EQ(m.node->parent == nullptr, k == 0);
    RefTouch(s.ns, s.tokens, k);
    hits_ += k > 0;
    s.blocks = m.blocks;
    for (BlockId b : s.blocks) pool_->AddRef(b);
    if (Chance(0.8)) {
      cache_->Lock(m.node);
      s.locked = m.node;
      s.locked_blocks = k;
    }
    const int need = size / kBs - k;
    if (!pool_->CanAllocate(need)) {
      ASSERT_NO_FATAL_FAILURE(EvictAndCheck(need - pool_->num_free()));
      ++pressure_evictions_;
    }
    if (!pool_->CanAllocate(need)) {  // not enough even so: give up
      EndSequence(seqs_.size() - 1);
      return;
    }
    const std::vector<BlockId> fresh = std::move(pool_->Allocate(need)).value();
    s.blocks.insert(s.blocks.end(), fresh.begin(), fresh.end());
  }

  void InsertSequence(Seq& s) {
    const int total = static_cast<int>(s.blocks.size());
    const int j = Chance(0.7) ? total : Uniform(1, total);
    std::vector<BlockId> expected;
    int expected_new = 0;
    for (int i = 1; i <= j; ++i) {
      auto it = ref_.find(KeyOf(s.ns, s.tokens, i));
      expected.push_back(it != ref_.end() ? it->second.block
                                          : s.blocks[static_cast<size_t>(i - 1)]);
      expected_new += it == ref_.end();
    }
    RadixCache::InsertResult r =
        cache_->Insert(s.ns, std::span<const TokenId>(s.tokens).first(static_cast<size_t>(j * kBs)),
                       std::span<const BlockId>(s.blocks).first(static_cast<size_t>(j)));
    ASSERT_EQ(r.blocks, expected);
    ASSERT_EQ(r.num_new_blocks, expected_new);
    dedups_ += !std::equal(expected.begin(), expected.end(), s.blocks.begin());
    ASSERT_NE(r.node, nullptr);
    ASSERT_TRUE(std::equal(r.node->blocks.rbegin(), r.node->blocks.rend(), r.blocks.rbegin()));
    for (int i = 1; i <= j; ++i)
      ref_[KeyOf(s.ns, s.tokens, i)].block = r.blocks[static_cast<size_t>(i - 1)];
    RefTouch(s.ns, s.tokens, j);
    for (size_t i = 0; i < r.blocks.size(); ++i) {  // swap duplicates for the tree's blocks
      if (r.blocks[i] == s.blocks[i]) continue;
      pool_->AddRef(r.blocks[i]);
      pool_->Release(s.blocks[i]);
      s.blocks[i] = r.blocks[i];
    }
    RadixCache::Node* old = s.locked;
    s.locked = nullptr;
    if (Chance(0.85)) {
      cache_->Lock(r.node);
      s.locked = r.node;
      s.locked_blocks = j;
    }
    if (old != nullptr) cache_->Unlock(old);
  }

  void EndSequence(size_t i) {
    Seq& s = seqs_[i];
    if (s.locked != nullptr) cache_->Unlock(s.locked);
    pool_->Release(s.blocks);
    seqs_.erase(seqs_.begin() + static_cast<std::ptrdiff_t>(i));
  }

  void Query() {
    const std::string ns = kNamespaces[Chance(0.8) ? 0 : 1];
    const std::vector<TokenId> t = Prompt();
    const int size = static_cast<int>(t.size());
    const int caps[] = {size, size - 1, Uniform(-2, size + 3), Uniform(0, kBs - 1), INT_MAX};
    const int cap = caps[Uniform(0, 4)];
    const int k = RefMatch(ns, t, cap);
    const int nodes = cache_->num_nodes();
    ASSERT_EQ(cache_->PeekPrefixLength(ns, t, cap), k * kBs);
    ASSERT_EQ(cache_->num_nodes(), nodes);
    if (Chance(0.5)) return;
    RadixCache::Match m = cache_->MatchPrefix(ns, t, cap);
    ASSERT_EQ(m.num_tokens, k * kBs);
    ASSERT_EQ(m.blocks, RefBlocks(ns, t, k));
    RefTouch(ns, t, k);
  }

  void Verify(int step) {
    ASSERT_TRUE(cache_->CheckInvariants().ok()) << cache_->CheckInvariants().ToString();
    ASSERT_TRUE(pool_->CheckInvariants().ok());
    std::vector<BlockId> owned = cache_->OwnedBlocks();
    std::vector<std::span<const BlockId>> owners{owned};
    for (const Seq& s : seqs_) owners.push_back(s.blocks);
    const Status v = pool_->VerifyOwners(owners);
    ASSERT_TRUE(v.ok()) << v.ToString();
    ASSERT_EQ(pool_->num_free() + pool_->num_used(), kPoolBlocks);
    std::vector<BlockId> expected;
    int unlocked = 0;
    const std::set<Key> locked = LockedKeys();
    for (const auto& [key, e] : ref_) {
      expected.push_back(e.block);
      unlocked += !locked.count(key);
    }
    std::sort(owned.begin(), owned.end());
    std::sort(expected.begin(), expected.end());
    ASSERT_EQ(owned, expected) << "the tree's blocks are not the cached prefixes' blocks";
    ASSERT_EQ(cache_->num_blocks(), static_cast<int>(ref_.size()));
    ASSERT_EQ(cache_->evictable_blocks(), unlocked);
    for (const Seq& s : seqs_) {  // a lock keeps the sequence's own path cached
      for (int i = 1; s.locked != nullptr && i <= s.locked_blocks; ++i) {
        ASSERT_EQ(ref_.at(KeyOf(s.ns, s.tokens, i)).block, s.blocks[static_cast<size_t>(i - 1)]);
      }
    }
    if (step % 25 == 0) {  // every cached prefix is found, whole
      for (const auto& [key, e] : ref_) {
        ASSERT_EQ(cache_->PeekPrefixLength(key.first, key.second, INT_MAX),
                  static_cast<int>(key.second.size()));
      }
    }
  }

  std::mt19937 rng_;
  std::unique_ptr<BlockPool> pool_;
  std::unique_ptr<RadixCache> cache_;
  std::vector<std::vector<TokenId>> system_prompts_;
  std::vector<Seq> seqs_;
  std::map<Key, Entry> ref_;
  uint64_t clock_ = 0;
  int pressure_evictions_ = 0;  // evictions to make room for a new sequence
  int hits_ = 0;                // new sequences that found a cached prefix
  int dedups_ = 0;              // inserts that kept some of the tree's blocks over the caller's
};

TEST_P(RadixCacheRandomTest, MatchesBruteForceReference) {
  int splits = 0;
  int evictions = 0;
  int max_cached = 0;
  for (int step = 0; step < kSteps; ++step) {
    const int op = Uniform(0, 999);  // per mille
    const int nodes = cache_->num_nodes();
    const bool live = !seqs_.empty();
    const size_t pick =
        live ? static_cast<size_t>(Uniform(0, static_cast<int>(seqs_.size()) - 1)) : 0;
    if (op < 280 && static_cast<int>(seqs_.size()) < kMaxSeqs) {
      ASSERT_NO_FATAL_FAILURE(NewSequence());
    } else if (op < 500 && live) {
      ASSERT_NO_FATAL_FAILURE(InsertSequence(seqs_[pick]));
    } else if (op < 640 && live) {
      EndSequence(pick);
    } else if (op < 660 && live && seqs_[pick].locked != nullptr) {
      cache_->Unlock(seqs_[pick].locked);  // e.g. preempted: keeps its blocks, unpinned
      seqs_[pick].locked = nullptr;
    } else if (op < 690) {
      ASSERT_NO_FATAL_FAILURE(evictions += EvictAndCheck(Uniform(1, 8)) > 0);
    } else if (op >= 996) {
      const int before = cache_->num_blocks();
      cache_->Clear();
      ASSERT_NO_FATAL_FAILURE(Reconcile(before - cache_->num_blocks()));
      ASSERT_EQ(cache_->evictable_blocks(), 0);
    } else {
      ASSERT_NO_FATAL_FAILURE(Query());
      splits += cache_->num_nodes() > nodes;  // a match split an edge
    }
    max_cached = std::max(max_cached, cache_->num_blocks());
    ASSERT_NO_FATAL_FAILURE(Verify(step)) << "step " << step;
  }
  // The workload exercised what it is meant to.
  EXPECT_GT(hits_, kSteps / 30);
  EXPECT_GT(dedups_, 10);
  EXPECT_GT(splits, 20);
  EXPECT_GT(evictions, 50);
  EXPECT_GT(pressure_evictions_, 10);
  EXPECT_GT(max_cached, kPoolBlocks / 2);
  while (!seqs_.empty()) EndSequence(seqs_.size() - 1);
  cache_->Clear();
  EXPECT_EQ(cache_->num_blocks(), 0);
  EXPECT_EQ(pool_->num_free(), kPoolBlocks);
}

INSTANTIATE_TEST_SUITE_P(Seeds, RadixCacheRandomTest, ::testing::Values(1u, 2u, 3u, 4u, 5u));

}  // namespace
}  // namespace mneme::kv
