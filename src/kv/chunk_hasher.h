// ChunkHasher: rolling 128-bit hashes of fixed-size token chunks, the keys of
// the KV tiers below the radix cache (LMCache's TokenHasher / Session idea).
//
// A token sequence is cut into chunks of `chunk_tokens` tokens (default 256).
// Chunk i's hash is chained on chunk i-1's, so one hash names a whole prefix:
//
//   h_root = ModelFingerprint(weights identity, arch, KV dtype, chunk size)
//   h_0    = Chain(h_root, tokens[0, C))
//   h_i    = Chain(h_{i-1}, tokens[i*C, (i+1)*C))
//
//   Chain(prev, t) = XXH3-128(prev.lo as 8 bytes LE ‖ prev.hi as 8 bytes LE ‖
//                             t[0] as int32 LE ‖ t[1] ‖ ...), seed 0
//
// (libxxhash from Debian, XXH3_128bits). The root carries the model
// fingerprint, so KV of different weights, KV dtypes or chunk sizes never
// shares a key. Only whole chunks are hashed: the partial tail (fewer than
// chunk_tokens tokens) has no hash until it fills up. A session keeps its
// tokens and the hashes computed so far; each turn resumes the hasher and
// hashes only the newly completed chunks (each chunk is hashed once).
//
// Hash128 prints as 32 lowercase hex digits, hi word first (like xxHash's
// canonical big-endian form), e.g. for Redis or disk keys.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace mneme::kv {

struct Hash128 {
  uint64_t lo = 0;
  uint64_t hi = 0;

  bool operator==(const Hash128&) const = default;
  // 32 lowercase hex digits: hi then lo, each most significant digit first.
  std::string ToHex() const;
  // Inverse of ToHex (either case); INVALID_ARGUMENT on anything else.
  static Result<Hash128> FromHex(std::string_view hex);
};

// What makes KV bytes incompatible between two runs. Every field is explicit
// so the fingerprint is a pure function of its inputs.
struct FingerprintInputs {
  std::string weights_identity;  // e.g. WeightsIdentity(file size, header bytes)
  std::string arch;              // general.architecture, e.g. "llama"
  std::string kv_dtype;          // e.g. "f16"
  int chunk_tokens = 256;
};

// "size=<bytes>;xxh3=<hex of XXH3-128 of header_bytes>": names a weights file
// by its size and a hash of its GGUF header + metadata bytes (cheap: no need
// to read the tensors).
std::string WeightsIdentity(uint64_t file_size, std::span<const uint8_t> header_bytes);

// XXH3-128 of a versioned tag and the length-prefixed fields of `in`.
Hash128 ModelFingerprint(const FingerprintInputs& in);

class ChunkHasher {
 public:
  // chunk_tokens >= 1 (CHECKed: a configuration bug, validated at startup).
  ChunkHasher(Hash128 root, int chunk_tokens);

  // The state after hashing `tokens` from the root, reusing `known_hashes`
  // for its leading chunks (e.g. a session's stored hashes) and hashing only
  // the remaining whole chunks. known_hashes must be the hashes of the first
  // known_hashes.size() chunks of `tokens` (not re-verified: that is the
  // point); extra entries past the whole chunks of `tokens` are ignored.
  // When a re-render changed the history, pass only the hashes of the chunks
  // that lie inside the common prefix of the old and new tokens.
  static ChunkHasher Resume(Hash128 root, int chunk_tokens, std::span<const int32_t> tokens,
                            std::span<const Hash128> known_hashes);

  // Appends tokens; hashes each chunk that becomes complete, once.
  void Extend(std::span<const int32_t> tokens);

  // Hashes of the complete chunks so far: hashes()[i] names tokens [0, (i+1)*C).
  const std::vector<Hash128>& hashes() const { return hashes_; }
  // Tokens seen so far (complete chunks + tail).
  int64_t num_tokens() const {
    return static_cast<int64_t>(hashes_.size()) * chunk_tokens_ +
           static_cast<int64_t>(tail_.size());
  }
  // The tokens of the incomplete last chunk (size < chunk_tokens).
  std::span<const int32_t> tail() const { return tail_; }
  Hash128 root() const { return root_; }
  int chunk_tokens() const { return chunk_tokens_; }

  // How many leading whole chunks `a` and `b` share (the chunks inside
  // their common prefix): the stored hashes still valid after a re-render
  // replaced the tokens `a` by `b`.
  static size_t SharedChunks(std::span<const int32_t> a, std::span<const int32_t> b,
                             int chunk_tokens);

  // One link of the chain (see the top of this file).
  static Hash128 Chain(Hash128 prev, std::span<const int32_t> tokens);

 private:
  Hash128 root_;
  int chunk_tokens_;
  std::vector<Hash128> hashes_;
  std::vector<int32_t> tail_;
};

}  // namespace mneme::kv
