// RadixCache: the prefix cache over the paged KV (SGLang's RadixAttention).
//
// Conversation history is a prompt prefix whose K/V already exists from the
// previous turn. The cache keeps the blocks of finished (and in-flight)
// sequences in a radix tree keyed by token ids, so the next request that
// starts with the same tokens takes those blocks instead of recomputing them.
//
// The tree is block-granular: every edge holds a whole number of blocks (its
// token count is a multiple of block_size) and exactly the pool blocks that
// store those tokens' K/V. Children are keyed by the tokens of their first
// block, so two children may share up to block_size - 1 leading tokens.
//
//   namespace "" ─▶ root
//                    ├─[sys prompt: 4 blocks]─▶ A  lock 2, t=90
//                    │      ├─[user 1 ...: 2 blocks]─▶ B  lock 1, t=90
//                    │      └─[user 2 ...: 3 blocks]─▶ C  lock 0, t=40  ◀ evict first
//                    └─[other: 1 block]─▶ D  lock 0, t=70
//   namespace "tenant-x" ─▶ root'  (a separate tree: no sharing across salts)
//
// Invariants (CheckInvariants, after every mutation in debug builds):
//   - every non-root node has >= 1 block and tokens == blocks * block_size;
//     its key in the parent's child map equals its first block's tokens;
//   - the tree owns exactly one pool reference on each of its blocks, and a
//     block appears at most once in the whole cache (all namespaces)
//     (CheckInvariants sees that each is allocated; the exact counts need
//     the other owners: BlockPool::VerifyOwners with OwnedBlocks());
//   - lock(n) == own locks of n + sum of lock(child): locking a node pins
//     its whole path to the root;
//   - last_access(parent) >= last_access(child): every touch stamps the
//     whole path, so leaves are always the least recently used;
//   - the evictable set is exactly the unlocked leaves, ordered by
//     (last_access, creation order); evictable_blocks() is the number of
//     blocks in unlocked nodes (all reclaimable by repeated leaf eviction).
//
// Partial blocks: a match never ends inside a block, and Insert takes only
// whole blocks. The tail of a prompt past its last whole cached block (at most
// block_size - 1 tokens) is recomputed rather than copied on write: with
// blocks of 16 tokens that is a few rows of a prefill chunk, while a
// copy-on-write would copy a whole block across every layer and make cached
// blocks mutable. Cached blocks are therefore never written again.
//
// Locks: a running sequence that took blocks from the cache (or inserted its
// own) holds a lock on its deepest node, so none of its path is evicted while
// it runs. Splitting a node keeps the existing Node object as the lower part
// (the new upper node inherits its lock count and last_access), so handles
// stay valid. Each Unlock must undo a Lock of the same node (a node counts
// its own locks apart from its children's); anything else CHECK-fails. A
// handle to an unlocked node may dangle after Evict or Clear; roots (one per
// namespace, made on first use) live as long as the cache.
//
// Eviction is whole leaves, least recently used first, with ties broken by
// creation order (not by address), so a run is deterministic. The logical
// clock ticks once per MatchPrefix / Insert that touches a block.
//
// Cost: MatchPrefix, PeekPrefixLength and Insert are O(tokens + depth *
// log(fan-out)); Lock/Unlock O(depth); Evict O(log leaves) per leaf. The
// getters are O(1). CheckInvariants is O(tree + pool).
//
// Not thread-safe: the scheduler (engine thread) owns it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kv/block_pool.h"
#include "util/status.h"

namespace mneme::kv {

using TokenId = int32_t;

class RadixCache {
 public:
  struct Node;

  // A match: the longest cached prefix (whole blocks), and its deepest node
  // (lock it before using the blocks beyond this step).
  struct Match {
    int num_tokens = 0;           // == blocks.size() * block_size
    std::vector<BlockId> blocks;  // the tree's blocks, in order
    Node* node = nullptr;         // deepest matched node (the root if none)
  };

  // The result of an Insert: the tree's blocks for the inserted tokens (some
  // may be blocks the tree already had instead of the caller's duplicates)
  // and the deepest node covering them.
  struct InsertResult {
    std::vector<BlockId> blocks;
    Node* node = nullptr;
    int num_new_blocks = 0;  // caller blocks adopted by the tree
  };

  // The pool must outlive the cache. The cache holds pool references and
  // releases them all when destroyed.
  explicit RadixCache(BlockPool* pool);
  ~RadixCache();
  RadixCache(const RadixCache&) = delete;
  RadixCache& operator=(const RadixCache&) = delete;

  // Longest prefix of `tokens` cached in namespace `ns`, in whole blocks and
  // at most `max_tokens` tokens rounded down to whole blocks (below
  // block_size: nothing, and the root). Callers pass prompt length - 1 so
  // that at least one token is computed and yields logits. Stamps the
  // matched path as just used. May split a node where the match ends inside
  // an edge (at a block boundary). Does not lock.
  Match MatchPrefix(const std::string& ns, std::span<const TokenId> tokens, int max_tokens);
  // The same length without touching anything (no stamp, no split): for
  // ordering a waiting queue by cached prefix.
  int PeekPrefixLength(const std::string& ns, std::span<const TokenId> tokens,
                       int max_tokens) const;

  // Adds `tokens` (whole blocks: tokens.size() == blocks.size() * block_size)
  // whose K/V live in `blocks` to namespace `ns`. Where the tree already
  // holds some leading blocks' tokens it keeps its own blocks (returned, so
  // the caller can swap its duplicates for them); for the rest it takes one
  // pool reference on each of the caller's blocks (which must not be in the
  // tree already). May split a node where the tokens end inside its edge.
  // Stamps the path. An empty span returns ns's root and changes nothing.
  InsertResult Insert(const std::string& ns, std::span<const TokenId> tokens,
                      std::span<const BlockId> blocks);

  // Pins node and its ancestors against eviction (counted; root is a no-op).
  void Lock(Node* node);
  // Undoes one Lock(node); CHECK-fails if node holds none of its own.
  void Unlock(Node* node);

  // Evicts least recently used unlocked leaves (a leaf whose parent becomes
  // an unlocked leaf is a candidate next) until at least `num_blocks` blocks
  // have been released by the tree or nothing is evictable. Returns the
  // number of blocks released (whole leaves, so possibly a few more than
  // asked). A released block returns to the pool's free list only if no
  // sequence still holds it.
  int Evict(int num_blocks);

  // Drops every unlocked node (tests, shutdown, "cache off").
  void Clear();

  // Blocks in unlocked nodes: what Evict could release at most.
  int evictable_blocks() const { return evictable_blocks_; }
  // Blocks the tree holds (locked or not).
  int num_blocks() const { return num_blocks_; }
  int num_nodes() const { return num_nodes_; }  // excluding roots
  int block_size() const { return pool_->block_size(); }
  BlockPool* pool() const { return pool_; }

  // Every block the tree owns (one entry per block), for
  // BlockPool::VerifyOwners together with the sequences' tables.
  std::vector<BlockId> OwnedBlocks() const;

  // The structural invariants listed above.
  Status CheckInvariants() const;

  // Orders child keys (a block of tokens) lexicographically; transparent so
  // a lookup can use a span of the query without copying it.
  struct BlockKeyLess {
    using is_transparent = void;
    bool operator()(std::span<const TokenId> a, std::span<const TokenId> b) const {
      return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
    }
  };

  // A tree node. Read-only outside the cache (tests may read the fields);
  // a root (one per namespace) has no parent, no tokens and no blocks.
  struct Node {
    std::vector<TokenId> tokens;  // [blocks.size() * block_size]
    std::vector<BlockId> blocks;
    Node* parent = nullptr;
    std::map<std::vector<TokenId>, std::unique_ptr<Node>, BlockKeyLess> children;  // by first block
    int lock = 0;              // own locks + children's locks
    int own_locks = 0;         // Lock() calls on this very node not yet undone
    uint64_t last_access = 0;  // logical clock
    uint64_t serial = 0;       // creation order (LRU tie-break)
    bool listed = false;       // in evictable_ (an unlocked non-root leaf)
  };

 private:
  using LruKey = std::pair<uint64_t, uint64_t>;  // (last_access, serial)

  Node* Root(const std::string& ns);
  const Node* FindRoot(const std::string& ns) const;
  // Whole blocks of `node`'s edge equal to tokens[pos, ...), at most max_blocks.
  int MatchingBlocks(const Node& node, std::span<const TokenId> tokens, size_t pos,
                     size_t max_blocks) const;
  // Cuts `node`'s edge after k blocks (0 < k < blocks): a new upper node takes
  // the first k blocks and node's place under the parent; `node` stays as the
  // lower part. Returns the upper node.
  Node* Split(Node* node, size_t k);
  // A new unlocked leaf under parent taking one reference on each block.
  Node* AddLeaf(Node* parent, std::span<const TokenId> tokens, std::span<const BlockId> blocks);
  // Releases an evictable leaf's blocks and deletes it. Returns its blocks.
  int RemoveLeaf(Node* leaf);
  // Sets last_access of node and its ancestors to a new clock value.
  void Stamp(Node* node);
  // Keep evictable_ in step: Relist adds node if it is an unlocked non-root
  // leaf and not listed yet; Unlist removes it if listed.
  void Relist(Node* node);
  void Unlist(Node* node);
  void DebugCheck() const;

  BlockPool* pool_;
  std::map<std::string, std::unique_ptr<Node>, std::less<>> roots_;  // by namespace
  std::map<LruKey, Node*> evictable_;  // unlocked leaves, least recently used first
  uint64_t clock_ = 0;
  uint64_t next_serial_ = 0;
  int evictable_blocks_ = 0;
  int num_blocks_ = 0;
  int num_nodes_ = 0;
};

}  // namespace mneme::kv
