// RadixCache cost per scheduler call on a realistic tree: 4,096 cached
// conversations (16-token blocks) behind 64 system prompts of 8 blocks, each
// with a 16-block tail (66,048 blocks). Admission does one MatchPrefix (or a
// PeekPrefixLength to order the queue), completion one Insert; both should
// stay in microseconds, far below a forward pass. Build in Release: debug
// builds check every invariant after each of the 4,096 setup inserts.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "kv/radix_cache.h"

namespace mneme::kv {
namespace {

constexpr int kBlock = 16;
constexpr int kPrompts = 64;
constexpr int kPromptBlocks = 8;
constexpr int kSeqs = 4096;
constexpr int kTailBlocks = 16;
constexpr int kSpare = 1024;  // free blocks for inserts of new sequences

struct Tree {
  std::unique_ptr<BlockPool> pool;
  std::unique_ptr<RadixCache> cache;
  std::vector<std::vector<TokenId>> seqs;  // every cached conversation's tokens

  Tree() {
    KvShape s;
    s.n_layers = 1;
    s.n_kv_heads = 1;
    s.head_dim = 1;
    s.block_size = kBlock;
    pool = std::move(BlockPool::CreateWithBlocks(
                         s, kPrompts * kPromptBlocks + kSeqs * kTailBlocks + kSpare))
               .value();
    cache = std::make_unique<RadixCache>(pool.get());
    std::mt19937 rng(7);
    std::uniform_int_distribution<TokenId> vocab(0, 31999);
    std::vector<std::vector<TokenId>> prompts(kPrompts);
    for (auto& p : prompts) {
      for (int i = 0; i < kPromptBlocks * kBlock; ++i) p.push_back(vocab(rng));
    }
    for (int i = 0; i < kSeqs; ++i) {
      std::vector<TokenId> t = prompts[static_cast<size_t>(i % kPrompts)];
      for (int j = 0; j < kTailBlocks * kBlock; ++j) t.push_back(vocab(rng));
      Insert(t);
      seqs.push_back(std::move(t));
    }
  }

  // A finished sequence that computed every block itself.
  void Insert(const std::vector<TokenId>& t) {
    const std::vector<BlockId> b =
        std::move(pool->Allocate(static_cast<int>(t.size()) / kBlock)).value();
    cache->Insert("", t, b);
    pool->Release(b);
  }
};

Tree& SharedTree() {
  static Tree* tree = new Tree();  // built once for all benchmarks (read-mostly)
  return *tree;
}

// The next turn of a cached conversation: its whole history plus new tokens.
void BM_MatchPrefixHit(benchmark::State& state) {
  Tree& tree = SharedTree();
  size_t i = 0;
  for (auto _ : state) {
    const std::vector<TokenId>& t = tree.seqs[i++ % tree.seqs.size()];
    RadixCache::Match m = tree.cache->MatchPrefix("", t, static_cast<int>(t.size()));
    benchmark::DoNotOptimize(m.num_tokens);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_MatchPrefixHit);

void BM_PeekPrefixLength(benchmark::State& state) {
  Tree& tree = SharedTree();
  size_t i = 0;
  for (auto _ : state) {
    const std::vector<TokenId>& t = tree.seqs[i++ % tree.seqs.size()];
    benchmark::DoNotOptimize(tree.cache->PeekPrefixLength("", t, static_cast<int>(t.size())));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_PeekPrefixLength);

// Completion of a turn whose blocks are all cached already (the common case
// after a hit): walk, keep the tree's blocks, stamp.
void BM_InsertCached(benchmark::State& state) {
  Tree& tree = SharedTree();
  size_t i = 0;
  for (auto _ : state) {
    const std::vector<TokenId>& t = tree.seqs[i++ % tree.seqs.size()];
    const RadixCache::Match m = tree.cache->MatchPrefix("", t, static_cast<int>(t.size()));
    RadixCache::InsertResult r = tree.cache->Insert("", t, m.blocks);
    benchmark::DoNotOptimize(r.node);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_InsertCached);

// A new conversation under a cached system prompt (a new 16-block leaf),
// then an eviction of as many blocks to keep the tree's size steady.
void BM_InsertNewThenEvict(benchmark::State& state) {
  Tree& tree = SharedTree();
  size_t i = 0;
  TokenId unique = 1 << 20;  // outside the vocabulary: a new first tail block
  for (auto _ : state) {
    std::vector<TokenId> t = tree.seqs[i++ % tree.seqs.size()];
    t[kPromptBlocks * kBlock] = unique++;
    tree.Insert(t);
    benchmark::DoNotOptimize(tree.cache->Evict(kTailBlocks));
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}
BENCHMARK(BM_InsertNewThenEvict);

}  // namespace
}  // namespace mneme::kv

BENCHMARK_MAIN();
