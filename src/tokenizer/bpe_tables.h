// Flat open-addressing hash tables for the BPE hot loop: text -> token id
// and (left id, right id) -> merge. std::unordered_map allocates a node per
// entry and hashes std::string keys; these keep everything in one array and
// look up by string_view without building a std::string.
//
// StringIdMap and MergeMap are built once (BpeEncoder::Create) and only read
// afterwards. WordCache lives for one Encode call (no sharing, no locks).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "tokenizer/vocab.h"

namespace mneme {

inline uint64_t HashBytes(std::string_view s) {
  // 8 bytes at a time, multiply-xorshift mixing. Not cryptographic; inputs
  // are vocab strings, and a collision only costs a probe.
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t h = s.size() * kMul;
  const char* p = s.data();
  size_t n = s.size();
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    uint64_t w = 0;
    std::memcpy(&w, p, n);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  h *= kMul;
  return h ^ (h >> 32);
}

// text -> id. The texts live elsewhere (`texts[id]`); slots hold ids only.
class StringIdMap {
 public:
  void Reserve(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    if (size_ == 0 && cap > slots_.size()) {
      slots_.assign(cap, kNoToken);
      mask_ = cap - 1;
    }
  }

  TokenId Find(std::string_view text, const std::vector<std::string_view>& texts) const {
    if (slots_.empty()) return kNoToken;
    for (size_t i = HashBytes(text) & mask_;; i = (i + 1) & mask_) {
      const TokenId id = slots_[i];
      if (id == kNoToken) return kNoToken;
      if (texts[id] == text) return id;
    }
  }

  // `text` must not be present yet; `texts[id]` must equal `text`.
  void Insert(std::string_view text, TokenId id, const std::vector<std::string_view>& texts) {
    if (2 * (size_ + 1) > slots_.size()) Rehash(slots_.empty() ? 16 : 2 * slots_.size(), texts);
    size_t i = HashBytes(text) & mask_;
    while (slots_[i] != kNoToken) i = (i + 1) & mask_;
    slots_[i] = id;
    ++size_;
  }

 private:
  void Rehash(size_t cap, const std::vector<std::string_view>& texts) {
    std::vector<TokenId> old = std::move(slots_);
    slots_.assign(cap, kNoToken);
    mask_ = cap - 1;
    for (TokenId id : old) {
      if (id == kNoToken) continue;
      size_t i = HashBytes(texts[id]) & mask_;
      while (slots_[i] != kNoToken) i = (i + 1) & mask_;
      slots_[i] = id;
    }
  }

  std::vector<TokenId> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

// (left id, right id) -> {rank, merged id}.
class MergeMap {
 public:
  struct Entry {
    uint64_t key;
    int32_t rank;
    TokenId result;
  };

  void Reserve(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    slots_.assign(cap, Entry{kEmpty, 0, kNoToken});
    mask_ = cap - 1;
    size_ = 0;
  }

  const Entry* Find(TokenId left, TokenId right) const {
    const uint64_t key = Key(left, right);
    for (size_t i = Slot(key);; i = (i + 1) & mask_) {
      const Entry& e = slots_[i];
      if (e.key == key) return &e;
      if (e.key == kEmpty) return nullptr;
    }
  }

  // Keeps the existing entry if the pair is already present. Reserve first.
  void InsertIfAbsent(TokenId left, TokenId right, int32_t rank, TokenId result) {
    const uint64_t key = Key(left, right);
    size_t i = Slot(key);
    while (slots_[i].key != kEmpty) {
      if (slots_[i].key == key) return;
      i = (i + 1) & mask_;
    }
    slots_[i] = {key, rank, result};
    ++size_;
  }

 private:
  static constexpr uint64_t kEmpty = ~0ull;  // ids are >= 0, so never a key
  static uint64_t Key(TokenId l, TokenId r) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
  }
  size_t Slot(uint64_t key) const {
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return (h ^ (h >> 31)) & mask_;
  }

  std::vector<Entry> slots_{Entry{kEmpty, 0, kNoToken}};  // never empty: Find needs a slot
  size_t mask_ = 0;
  size_t size_ = 0;
};

// word -> its token ids, for the words of one Encode call: running text
// repeats its words (Zipf), and a hit skips the merges. Keys are views into
// the text being encoded, so the cache must not outlive that text. It stops
// growing at kMaxSlots / 2 entries.
class WordCache {
 public:
  // Appends the ids of `word` to `out` and returns true on a hit.
  bool Find(std::string_view word, uint64_t hash, std::vector<TokenId>* out) const {
    if (slots_.empty()) return false;
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.data == nullptr) return false;
      if (s.hash == hash && std::string_view(s.data, s.size) == word) {
        out->insert(out->end(), ids_.begin() + s.offset, ids_.begin() + s.offset + s.count);
        return true;
      }
    }
  }

  // `word` must not be present (Find missed).
  void Insert(std::string_view word, uint64_t hash, const TokenId* ids, size_t count) {
    if (2 * (used_ + 1) > slots_.size()) {
      if (slots_.size() >= kMaxSlots) return;
      Grow();
    }
    size_t i = hash & mask_;
    while (slots_[i].data != nullptr) i = (i + 1) & mask_;
    slots_[i] = {hash, word.data(), static_cast<uint32_t>(word.size()),
                 static_cast<uint32_t>(ids_.size()), static_cast<uint32_t>(count)};
    ids_.insert(ids_.end(), ids, ids + count);
    ++used_;
  }

 private:
  static constexpr size_t kMaxSlots = size_t{1} << 17;
  struct Slot {
    uint64_t hash;
    const char* data;  // nullptr: empty slot
    uint32_t size;
    uint32_t offset;  // into ids_
    uint32_t count;
  };

  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    const size_t cap = old.empty() ? 64 : 2 * old.size();
    slots_.assign(cap, Slot{0, nullptr, 0, 0, 0});
    mask_ = cap - 1;
    for (const Slot& s : old) {
      if (s.data == nullptr) continue;
      size_t i = s.hash & mask_;
      while (slots_[i].data != nullptr) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  std::vector<TokenId> ids_;
  size_t mask_ = 0;
  size_t used_ = 0;
};

}  // namespace mneme
