// RadixCache: walk, split, insert, lock counts and LRU eviction of the prefix
// tree (see radix_cache.h for the design and the invariants).
//
// Every mutation keeps the three counters (num_blocks_, num_nodes_,
// evictable_blocks_) and the evictable leaf set in step as it goes, so the
// getters are O(1); CheckInvariants recounts all of it from the tree. Walks
// and teardown are iterative: a long conversation can make the tree deep.
#include "kv/radix_cache.h"

#include <limits>
#include <string>

namespace mneme::kv {
namespace {

// The whole-block length a walk may cover: min(size, max_tokens) rounded
// down to a multiple of block_size (0 for max_tokens < block_size).
size_t Limit(size_t size, int max_tokens, int block_size) {
  const size_t cap = max_tokens > 0 ? static_cast<size_t>(max_tokens) : 0;
  const size_t n = std::min(size, cap);
  return n / static_cast<size_t>(block_size) * static_cast<size_t>(block_size);
}

std::string Describe(const RadixCache::Node& n) {
  return "node #" + std::to_string(n.serial) + " (" + std::to_string(n.blocks.size()) + " blocks)";
}

}  // namespace

RadixCache::RadixCache(BlockPool* pool) : pool_(pool) {
  CHECK(pool != nullptr);
}

RadixCache::~RadixCache() {
  std::vector<std::unique_ptr<Node>> stack;
  for (auto& [ns, root] : roots_) stack.push_back(std::move(root));
  while (!stack.empty()) {
    std::unique_ptr<Node> n = std::move(stack.back());
    stack.pop_back();
    pool_->Release(n->blocks);
    for (auto& [key, child] : n->children) stack.push_back(std::move(child));
  }
}

RadixCache::Node* RadixCache::Root(const std::string& ns) {
  std::unique_ptr<Node>& root = roots_[ns];
  if (root == nullptr) {
    root = std::make_unique<Node>();
    root->serial = next_serial_++;
  }
  return root.get();
}

const RadixCache::Node* RadixCache::FindRoot(const std::string& ns) const {
  auto it = roots_.find(ns);
  return it == roots_.end() ? nullptr : it->second.get();
}

int RadixCache::MatchingBlocks(const Node& node, std::span<const TokenId> tokens, size_t pos,
                               size_t max_blocks) const {
  const size_t bs = static_cast<size_t>(block_size());
  size_t k = 0;
  while (k < node.blocks.size() && k < max_blocks) {
    const auto edge = node.tokens.begin() + static_cast<std::ptrdiff_t>(k * bs);
    if (!std::equal(edge, edge + static_cast<std::ptrdiff_t>(bs),
                    tokens.begin() + static_cast<std::ptrdiff_t>(pos + k * bs))) {
      break;
    }
    ++k;
  }
  return static_cast<int>(k);
}

RadixCache::Match RadixCache::MatchPrefix(const std::string& ns, std::span<const TokenId> tokens,
                                          int max_tokens) {
  const size_t bs = static_cast<size_t>(block_size());
  const size_t limit = Limit(tokens.size(), max_tokens, block_size());
  Match m;
  Node* n = Root(ns);
  size_t pos = 0;
  while (pos < limit) {
    auto it = n->children.find(tokens.subspan(pos, bs));
    if (it == n->children.end()) break;
    Node* c = it->second.get();
    const size_t k = static_cast<size_t>(MatchingBlocks(*c, tokens, pos, (limit - pos) / bs));
    const bool inside_edge = k < c->blocks.size();
    if (inside_edge) c = Split(c, k);  // the match ends at a block boundary inside c
    m.blocks.insert(m.blocks.end(), c->blocks.begin(), c->blocks.end());
    pos += c->tokens.size();
    n = c;
    if (inside_edge) break;
  }
  m.num_tokens = static_cast<int>(pos);
  m.node = n;
  if (pos > 0) Stamp(n);
  DebugCheck();
  return m;
}

int RadixCache::PeekPrefixLength(const std::string& ns, std::span<const TokenId> tokens,
                                 int max_tokens) const {
  const Node* n = FindRoot(ns);
  if (n == nullptr) return 0;
  const size_t bs = static_cast<size_t>(block_size());
  const size_t limit = Limit(tokens.size(), max_tokens, block_size());
  size_t pos = 0;
  while (pos < limit) {
    auto it = n->children.find(tokens.subspan(pos, bs));
    if (it == n->children.end()) break;
    const Node* c = it->second.get();
    const size_t k = static_cast<size_t>(MatchingBlocks(*c, tokens, pos, (limit - pos) / bs));
    pos += k * bs;
    if (k < c->blocks.size()) break;
    n = c;
  }
  return static_cast<int>(pos);
}

RadixCache::InsertResult RadixCache::Insert(const std::string& ns, std::span<const TokenId> tokens,
                                            std::span<const BlockId> blocks) {
  const size_t bs = static_cast<size_t>(block_size());
  CHECK(tokens.size() == blocks.size() * bs)
      << "Insert of " << tokens.size() << " tokens with " << blocks.size() << " blocks of " << bs;
  InsertResult r;
  Node* n = Root(ns);
  size_t pos = 0;
  while (pos < tokens.size()) {
    auto it = n->children.find(tokens.subspan(pos, bs));
    if (it == n->children.end()) {
      n = AddLeaf(n, tokens.subspan(pos), blocks.subspan(pos / bs));
      r.num_new_blocks = static_cast<int>(n->blocks.size());
      r.blocks.insert(r.blocks.end(), n->blocks.begin(), n->blocks.end());
      break;
    }
    Node* c = it->second.get();
    const size_t k =
        static_cast<size_t>(MatchingBlocks(*c, tokens, pos, (tokens.size() - pos) / bs));
    if (k < c->blocks.size()) c = Split(c, k);
    r.blocks.insert(r.blocks.end(), c->blocks.begin(), c->blocks.end());
    pos += c->tokens.size();
    n = c;
  }
  r.node = n;
  if (!tokens.empty()) Stamp(n);
  DebugCheck();
  return r;
}

void RadixCache::Lock(Node* node) {
  CHECK(node != nullptr) << "Lock(nullptr)";
  if (node->parent == nullptr) return;  // a root: nothing to pin
  ++node->own_locks;
  for (Node* m = node; m->parent != nullptr; m = m->parent) {
    if (m->lock++ == 0) {
      evictable_blocks_ -= static_cast<int>(m->blocks.size());
      Unlist(m);
    }
  }
  DebugCheck();
}

void RadixCache::Unlock(Node* node) {
  CHECK(node != nullptr) << "Unlock(nullptr)";
  if (node->parent == nullptr) return;
  CHECK(node->own_locks > 0) << "Unlock of " << Describe(*node) << " without a matching Lock";
  --node->own_locks;
  for (Node* m = node; m->parent != nullptr; m = m->parent) {
    CHECK(m->lock > 0) << "lock count of " << Describe(*m) << " below zero";
    if (--m->lock == 0) {
      evictable_blocks_ += static_cast<int>(m->blocks.size());
      Relist(m);
    }
  }
  DebugCheck();
}

int RadixCache::Evict(int num_blocks) {
  int released = 0;
  while (released < num_blocks && !evictable_.empty()) {
    Node* leaf = evictable_.begin()->second;
    Unlist(leaf);
    released += RemoveLeaf(leaf);
  }
  DebugCheck();
  return released;
}

void RadixCache::Clear() {
  // Unlocked nodes have only unlocked descendants, so evicting leaves until
  // none is left removes exactly the unlocked nodes.
  Evict(std::numeric_limits<int>::max());
  DCHECK(evictable_blocks_ == 0 && evictable_.empty());
}

std::vector<BlockId> RadixCache::OwnedBlocks() const {
  std::vector<BlockId> out;
  out.reserve(static_cast<size_t>(num_blocks_));
  std::vector<const Node*> stack;
  for (const auto& [ns, root] : roots_) stack.push_back(root.get());
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    out.insert(out.end(), n->blocks.begin(), n->blocks.end());
    for (const auto& [key, child] : n->children) stack.push_back(child.get());
  }
  return out;
}

RadixCache::Node* RadixCache::Split(Node* node, size_t k) {
  const size_t bs = static_cast<size_t>(block_size());
  DCHECK(k > 0 && k < node->blocks.size());
  Node* parent = node->parent;
  auto it = parent->children.find(std::span<const TokenId>(node->tokens).first(bs));
  DCHECK(it != parent->children.end() && it->second.get() == node);
  std::unique_ptr<Node> lower = std::move(it->second);

  auto upper = std::make_unique<Node>();
  const auto cut = static_cast<std::ptrdiff_t>(k * bs);
  upper->tokens.assign(node->tokens.begin(), node->tokens.begin() + cut);
  upper->blocks.assign(node->blocks.begin(), node->blocks.begin() + static_cast<std::ptrdiff_t>(k));
  upper->parent = parent;
  upper->lock = node->lock;  // every lock below (or on) node pins the upper part too
  upper->last_access = node->last_access;
  upper->serial = next_serial_++;
  node->tokens.erase(node->tokens.begin(), node->tokens.begin() + cut);
  node->blocks.erase(node->blocks.begin(), node->blocks.begin() + static_cast<std::ptrdiff_t>(k));
  node->parent = upper.get();
  // node keeps its (last_access, serial), so its evictable_ entry stays valid.
  std::vector<TokenId> key(node->tokens.begin(),
                           node->tokens.begin() + static_cast<std::ptrdiff_t>(bs));
  upper->children.emplace(std::move(key), std::move(lower));
  Node* u = upper.get();
  it->second = std::move(upper);  // same key: the upper part starts with the same block
  ++num_nodes_;
  return u;
}

RadixCache::Node* RadixCache::AddLeaf(Node* parent, std::span<const TokenId> tokens,
                                      std::span<const BlockId> blocks) {
  const size_t bs = static_cast<size_t>(block_size());
  for (BlockId b : blocks) pool_->AddRef(b);
  Unlist(parent);  // no longer a leaf
  auto leaf = std::make_unique<Node>();
  leaf->tokens.assign(tokens.begin(), tokens.end());
  leaf->blocks.assign(blocks.begin(), blocks.end());
  leaf->parent = parent;
  leaf->last_access = parent->last_access;  // stamped by the caller
  leaf->serial = next_serial_++;
  Node* n = leaf.get();
  parent->children.emplace(
      std::vector<TokenId>(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(bs)),
      std::move(leaf));
  const int nb = static_cast<int>(blocks.size());
  num_blocks_ += nb;
  evictable_blocks_ += nb;
  ++num_nodes_;
  Relist(n);
  return n;
}

int RadixCache::RemoveLeaf(Node* leaf) {
  DCHECK(leaf->children.empty() && leaf->lock == 0 && leaf->parent != nullptr && !leaf->listed);
  const int nb = static_cast<int>(leaf->blocks.size());
  pool_->Release(leaf->blocks);
  num_blocks_ -= nb;
  evictable_blocks_ -= nb;
  --num_nodes_;
  Node* parent = leaf->parent;
  auto it = parent->children.find(
      std::span<const TokenId>(leaf->tokens).first(static_cast<size_t>(block_size())));
  DCHECK(it != parent->children.end() && it->second.get() == leaf);
  // Erasing deletes the leaf; the parent may have become an unlocked leaf.
  parent->children.erase(it);
  Relist(parent);
  return nb;
}

void RadixCache::Stamp(Node* node) {
  const uint64_t t = ++clock_;
  for (Node* m = node; m != nullptr; m = m->parent) {
    const bool listed = m->listed;
    if (listed) Unlist(m);
    m->last_access = t;
    if (listed) Relist(m);
  }
}

void RadixCache::Relist(Node* node) {
  if (node->listed || node->parent == nullptr || node->lock != 0 || !node->children.empty()) return;
  evictable_.emplace(LruKey{node->last_access, node->serial}, node);
  node->listed = true;
}

void RadixCache::Unlist(Node* node) {
  if (!node->listed) return;
  evictable_.erase(LruKey{node->last_access, node->serial});
  node->listed = false;
}

Status RadixCache::CheckInvariants() const {
  const size_t bs = static_cast<size_t>(block_size());
  std::vector<bool> seen(static_cast<size_t>(pool_->num_blocks()), false);
  int blocks = 0;
  int nodes = 0;
  int evictable_blocks = 0;
  size_t evictable_leaves = 0;
  std::vector<const Node*> stack;
  for (const auto& [ns, root] : roots_) {
    const Node* r = root.get();
    if (r->parent != nullptr || !r->tokens.empty() || !r->blocks.empty() || r->lock != 0 ||
        r->own_locks != 0 || r->listed) {
      return Internal("root of namespace '" + ns +
                      "' has a parent, tokens, blocks, a lock or a listing");
    }
    stack.push_back(r);
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    int child_locks = 0;
    for (const auto& [key, child] : n->children) {
      const Node* c = child.get();
      if (c == nullptr) return Internal(Describe(*n) + " has a null child");
      if (c->parent != n) return Internal(Describe(*c) + ": parent pointer is not its holder");
      if (c->blocks.empty()) return Internal(Describe(*c) + " holds no block");
      if (c->tokens.size() != c->blocks.size() * bs) {
        return Internal(Describe(*c) + " has " + std::to_string(c->tokens.size()) +
                        " tokens, not blocks * block_size");
      }
      if (key.size() != bs || !std::equal(key.begin(), key.end(), c->tokens.begin())) {
        return Internal(Describe(*c) + ": its key in the parent's children is not its first block");
      }
      if (c->last_access > n->last_access) {
        return Internal(Describe(*c) + ": last_access " + std::to_string(c->last_access) +
                        " is after its parent's " + std::to_string(n->last_access));
      }
      child_locks += c->lock;
      stack.push_back(c);
    }
    if (n->parent == nullptr) continue;  // a root (checked above)
    const int nb = static_cast<int>(n->blocks.size());
    ++nodes;
    blocks += nb;
    for (BlockId b : n->blocks) {
      if (!pool_->IsValid(b))
        return Internal(Describe(*n) + " holds invalid block " + std::to_string(b));
      if (seen[static_cast<size_t>(b)]) {
        return Internal("block " + std::to_string(b) + " appears twice in the cache");
      }
      seen[static_cast<size_t>(b)] = true;
      if (pool_->RefCount(b) < 1) {
        return Internal(Describe(*n) + " holds block " + std::to_string(b) + ", free in the pool");
      }
    }
    if (n->own_locks < 0 || n->lock != n->own_locks + child_locks) {
      return Internal(Describe(*n) + ": lock " + std::to_string(n->lock) + " != own locks " +
                      std::to_string(n->own_locks) + " + children's " +
                      std::to_string(child_locks));
    }
    if (n->lock == 0) evictable_blocks += nb;
    const bool evictable = n->lock == 0 && n->children.empty();
    if (evictable != n->listed) {
      return Internal(Describe(*n) + (evictable
                                          ? " is an unlocked leaf but not listed as evictable"
                                          : " is listed as evictable but is locked or inner"));
    }
    if (evictable) {
      ++evictable_leaves;
      auto it = evictable_.find(LruKey{n->last_access, n->serial});
      if (it == evictable_.end() || it->second != n) {
        return Internal(Describe(*n) + " is not in the evictable set under (last_access, serial)");
      }
    }
  }
  // Every unlocked leaf found its own entry (keys are unique by serial), so
  // equal sizes mean the set holds nothing else.
  if (evictable_leaves != evictable_.size()) {
    return Internal("evictable set has " + std::to_string(evictable_.size()) + " entries for " +
                    std::to_string(evictable_leaves) + " unlocked leaves");
  }
  if (blocks != num_blocks_ || nodes != num_nodes_ || evictable_blocks != evictable_blocks_) {
    return Internal("counters (blocks " + std::to_string(num_blocks_) + ", nodes " +
                    std::to_string(num_nodes_) + ", evictable blocks " +
                    std::to_string(evictable_blocks_) + ") != recount (" + std::to_string(blocks) +
                    ", " + std::to_string(nodes) + ", " + std::to_string(evictable_blocks) + ")");
  }
  return Status::Ok();
}

void RadixCache::DebugCheck() const {
#ifndef NDEBUG
  Status s = CheckInvariants();
  CHECK(s.ok()) << s.ToString();
#endif
}

}  // namespace mneme::kv
