// Chunk hashes over libxxhash's XXH3-128 (see chunk_hasher.h for the format).
#include "kv/chunk_hasher.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>

namespace mneme::kv {

namespace {

void AppendLe64(uint64_t v, std::vector<uint8_t>* out) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void AppendLe32(uint32_t v, std::vector<uint8_t>* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// A length-prefixed field, so ("ab", "c") and ("a", "bc") differ.
void AppendField(std::string_view s, std::vector<uint8_t>* out) {
  AppendLe64(s.size(), out);
  out->insert(out->end(), s.begin(), s.end());
}

Hash128 Xxh3(const std::vector<uint8_t>& bytes) {
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  return Hash128{h.low64, h.high64};
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string Hash128::ToHex() const {
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(hi),
                static_cast<unsigned long long>(lo));
  return std::string(buf, 32);
}

Result<Hash128> Hash128::FromHex(std::string_view hex) {
  if (hex.size() != 32) return InvalidArgument("a 128-bit hash needs 32 hex digits");
  uint64_t words[2] = {0, 0};
  for (size_t i = 0; i < 32; ++i) {
    const int d = HexDigit(hex[i]);
    if (d < 0) return InvalidArgument("not a hex digit in a 128-bit hash");
    uint64_t& w = words[i / 16];
    w = (w << 4) | static_cast<uint64_t>(d);
  }
  return Hash128{words[1], words[0]};
}

std::string WeightsIdentity(uint64_t file_size, std::span<const uint8_t> header_bytes) {
  const XXH128_hash_t h = XXH3_128bits(header_bytes.data(), header_bytes.size());
  return "size=" + std::to_string(file_size) + ";xxh3=" + Hash128{h.low64, h.high64}.ToHex();
}

Hash128 ModelFingerprint(const FingerprintInputs& in) {
  std::vector<uint8_t> bytes;
  AppendField("mneme-kv-fingerprint-v1", &bytes);
  AppendField(in.weights_identity, &bytes);
  AppendField(in.arch, &bytes);
  AppendField(in.kv_dtype, &bytes);
  AppendLe32(static_cast<uint32_t>(in.chunk_tokens), &bytes);
  return Xxh3(bytes);
}

ChunkHasher::ChunkHasher(Hash128 root, int chunk_tokens)
    : root_(root), chunk_tokens_(chunk_tokens) {
  CHECK(chunk_tokens >= 1) << "chunk_tokens " << chunk_tokens;
  tail_.reserve(static_cast<size_t>(chunk_tokens));
}

ChunkHasher ChunkHasher::Resume(Hash128 root, int chunk_tokens, std::span<const int32_t> tokens,
                                std::span<const Hash128> known_hashes) {
  ChunkHasher h(root, chunk_tokens);
  const size_t chunk = static_cast<size_t>(chunk_tokens);
  const size_t reuse = std::min(known_hashes.size(), tokens.size() / chunk);
  h.hashes_.assign(known_hashes.begin(), known_hashes.begin() + static_cast<ptrdiff_t>(reuse));
  h.Extend(tokens.subspan(reuse * chunk));
  return h;
}

void ChunkHasher::Extend(std::span<const int32_t> tokens) {
  const size_t chunk = static_cast<size_t>(chunk_tokens_);
  while (!tokens.empty()) {
    // Whole chunks straight from the input when the tail is empty.
    if (tail_.empty() && tokens.size() >= chunk) {
      hashes_.push_back(Chain(hashes_.empty() ? root_ : hashes_.back(), tokens.first(chunk)));
      tokens = tokens.subspan(chunk);
      continue;
    }
    const size_t take = std::min(chunk - tail_.size(), tokens.size());
    tail_.insert(tail_.end(), tokens.begin(), tokens.begin() + static_cast<ptrdiff_t>(take));
    tokens = tokens.subspan(take);
    if (tail_.size() == chunk) {
      hashes_.push_back(Chain(hashes_.empty() ? root_ : hashes_.back(), tail_));
      tail_.clear();
    }
  }
}

size_t ChunkHasher::SharedChunks(std::span<const int32_t> a, std::span<const int32_t> b,
                                 int chunk_tokens) {
  CHECK(chunk_tokens >= 1) << "chunk_tokens " << chunk_tokens;
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return static_cast<size_t>(ia - a.begin()) / static_cast<size_t>(chunk_tokens);
}

Hash128 ChunkHasher::Chain(Hash128 prev, std::span<const int32_t> tokens) {
  std::vector<uint8_t> bytes;
  bytes.reserve(16 + 4 * tokens.size());
  AppendLe64(prev.lo, &bytes);
  AppendLe64(prev.hi, &bytes);
  for (int32_t t : tokens) AppendLe32(static_cast<uint32_t>(t), &bytes);
  return Xxh3(bytes);
}

}  // namespace mneme::kv
