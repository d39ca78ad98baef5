// ChunkHasher: goldens computed independently (the chain bytes assembled here
// by hand and hashed with XXH3_128bits directly), incremental == one-shot for
// random split points, Resume, roots/chunk sizes/fingerprints that must
// differ, the unhashed partial tail, and hex round trips.
#include "kv/chunk_hasher.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <bit>
#include <cstring>
#include <random>

namespace mneme::kv {
namespace {

static_assert(std::endian::native == std::endian::little, "the goldens below memcpy LE words");

// The documented chain format, written out with memcpy instead of the
// library's byte-by-byte encoder.
Hash128 IndependentChain(Hash128 prev, const std::vector<int32_t>& tokens) {
  std::vector<unsigned char> bytes(16 + 4 * tokens.size());
  std::memcpy(bytes.data(), &prev.lo, 8);
  std::memcpy(bytes.data() + 8, &prev.hi, 8);
  if (!tokens.empty()) std::memcpy(bytes.data() + 16, tokens.data(), 4 * tokens.size());
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  return Hash128{h.low64, h.high64};
}

std::vector<int32_t> RandomTokens(std::mt19937* rng, size_t n) {
  std::uniform_int_distribution<int32_t> dist(-5, 200000);  // negatives test the LE encoding
  std::vector<int32_t> t(n);
  for (auto& x : t) x = dist(*rng);
  return t;
}

std::vector<Hash128> OneShot(Hash128 root, int chunk, const std::vector<int32_t>& tokens) {
  ChunkHasher h(root, chunk);
  h.Extend(tokens);
  return h.hashes();
}

TEST(ChunkHasherTest, LibraryIsXxh3) {
  // xxHash's published XXH3-128 of the empty input with seed 0.
  const XXH128_hash_t h = XXH3_128bits(nullptr, 0);
  EXPECT_EQ(h.high64, 0x99aa06d3014798d8ULL);
  EXPECT_EQ(h.low64, 0x6001c324468d497fULL);
}

TEST(ChunkHasherTest, GoldenChainComputedIndependently) {
  std::mt19937 rng(7);
  const Hash128 root{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  const int chunk = 4;
  const std::vector<int32_t> tokens = RandomTokens(&rng, 4 * chunk + 3);
  ChunkHasher h(root, chunk);
  h.Extend(tokens);
  ASSERT_EQ(h.hashes().size(), 4u);
  Hash128 prev = root;
  for (size_t i = 0; i < 4; ++i) {
    std::vector<int32_t> c(tokens.begin() + static_cast<ptrdiff_t>(i * chunk),
                           tokens.begin() + static_cast<ptrdiff_t>((i + 1) * chunk));
    prev = IndependentChain(prev, c);
    EXPECT_EQ(h.hashes()[i], prev) << "chunk " << i;
  }
  EXPECT_EQ(ChunkHasher::Chain(root, std::span<const int32_t>(tokens).first(4)),
            IndependentChain(root, {tokens[0], tokens[1], tokens[2], tokens[3]}));
}

TEST(ChunkHasherTest, IncrementalEqualsOneShotForRandomSplits) {
  std::mt19937 rng(42);
  const Hash128 root = ModelFingerprint({"w", "llama", "f16", 8});
  for (int chunk : {1, 3, 8, 256}) {
    const std::vector<int32_t> tokens = RandomTokens(&rng, 1000);
    const std::vector<Hash128> expected = OneShot(root, chunk, tokens);
    ASSERT_EQ(expected.size(), tokens.size() / static_cast<size_t>(chunk));
    for (int trial = 0; trial < 20; ++trial) {
      ChunkHasher h(root, chunk);
      size_t pos = 0;
      while (pos < tokens.size()) {
        const size_t n = std::min<size_t>(tokens.size() - pos, rng() % 300);
        h.Extend(std::span<const int32_t>(tokens).subspan(pos, n));
        pos += n;
        // Hashes only ever cover whole chunks of what has been seen.
        ASSERT_EQ(h.hashes().size(), pos / static_cast<size_t>(chunk));
        ASSERT_EQ(h.num_tokens(), static_cast<int64_t>(pos));
      }
      EXPECT_EQ(h.hashes(), expected) << "chunk " << chunk << " trial " << trial;
    }
  }
}

TEST(ChunkHasherTest, PartialTailIsNotHashed) {
  const Hash128 root{1, 2};
  ChunkHasher h(root, 4);
  h.Extend(std::vector<int32_t>{1, 2, 3});
  EXPECT_TRUE(h.hashes().empty());
  EXPECT_EQ(h.tail().size(), 3u);
  h.Extend(std::vector<int32_t>{4, 5});
  ASSERT_EQ(h.hashes().size(), 1u);
  EXPECT_EQ(h.hashes()[0], IndependentChain(root, {1, 2, 3, 4}));
  ASSERT_EQ(h.tail().size(), 1u);
  EXPECT_EQ(h.tail()[0], 5);
  // Changing the tail changes no hash.
  ChunkHasher other(root, 4);
  other.Extend(std::vector<int32_t>{1, 2, 3, 4, 99, 98});
  EXPECT_EQ(other.hashes(), h.hashes());
}

TEST(ChunkHasherTest, ResumeReusesKnownHashesAndHashesTheRest) {
  std::mt19937 rng(3);
  const Hash128 root{5, 6};
  const std::vector<int32_t> tokens = RandomTokens(&rng, 50);
  const std::vector<Hash128> all = OneShot(root, 8, tokens);  // 6 chunks, tail 2
  for (size_t known = 0; known <= all.size(); ++known) {
    ChunkHasher h = ChunkHasher::Resume(root, 8, tokens, std::span(all).first(known));
    EXPECT_EQ(h.hashes(), all) << known;
    EXPECT_EQ(h.tail().size(), 2u);
    EXPECT_EQ(h.num_tokens(), 50);
  }
  // Resume uses the given hashes as they are (no rehash of history): a bogus
  // known hash propagates, which shows the history was not hashed again.
  std::vector<Hash128> bogus = {Hash128{9, 9}};
  ChunkHasher h = ChunkHasher::Resume(root, 8, tokens, bogus);
  ASSERT_EQ(h.hashes().size(), all.size());
  EXPECT_EQ(h.hashes()[0], (Hash128{9, 9}));
  std::vector<int32_t> chunk1(tokens.begin() + 8, tokens.begin() + 16);
  EXPECT_EQ(h.hashes()[1], IndependentChain(Hash128{9, 9}, chunk1));
  // Then Extend continues from the tail.
  const std::vector<int32_t> more = RandomTokens(&rng, 30);
  std::vector<int32_t> joined = tokens;
  joined.insert(joined.end(), more.begin(), more.end());
  ChunkHasher r = ChunkHasher::Resume(root, 8, tokens, all);
  r.Extend(more);
  EXPECT_EQ(r.hashes(), OneShot(root, 8, joined));
}

TEST(ChunkHasherTest, ReRenderKeepsOnlyTheSharedChunks) {
  const std::vector<int32_t> old_tokens = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<int32_t> new_tokens = {1, 2, 3, 4, 5, 6, 70, 8, 9, 10, 11, 12};
  EXPECT_EQ(ChunkHasher::SharedChunks(old_tokens, new_tokens, 3), 2u);  // differ at 6
  EXPECT_EQ(ChunkHasher::SharedChunks(old_tokens, new_tokens, 4), 1u);
  EXPECT_EQ(ChunkHasher::SharedChunks(old_tokens, new_tokens, 7), 0u);
  EXPECT_EQ(ChunkHasher::SharedChunks(old_tokens, old_tokens, 3), 3u);  // tail excluded
  EXPECT_EQ(ChunkHasher::SharedChunks({}, old_tokens, 1), 0u);
  // Resuming with the shared chunks' hashes gives the hashes of the new tokens.
  const Hash128 root{3, 4};
  const std::vector<Hash128> old_hashes = OneShot(root, 3, old_tokens);
  const size_t keep = ChunkHasher::SharedChunks(old_tokens, new_tokens, 3);
  ChunkHasher h = ChunkHasher::Resume(root, 3, new_tokens, std::span(old_hashes).first(keep));
  EXPECT_EQ(h.hashes(), OneShot(root, 3, new_tokens));
  EXPECT_EQ(h.hashes()[0], old_hashes[0]);
  EXPECT_NE(h.hashes()[2], old_hashes[2]);
}

TEST(ChunkHasherTest, RootsAndChunkSizesSeparateKeys) {
  std::mt19937 rng(11);
  const std::vector<int32_t> tokens = RandomTokens(&rng, 64);
  const auto a = OneShot(Hash128{1, 0}, 16, tokens);
  const auto b = OneShot(Hash128{2, 0}, 16, tokens);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NE(a[i], b[i]);
  const auto c = OneShot(Hash128{1, 0}, 32, tokens);
  EXPECT_NE(a[1], c[0]);  // both cover tokens [0, 32)
  // A changed token changes its chunk's hash and every later one.
  std::vector<int32_t> t2 = tokens;
  t2[20] ^= 1;
  const auto d = OneShot(Hash128{1, 0}, 16, t2);
  EXPECT_EQ(a[0], d[0]);
  for (size_t i = 1; i < a.size(); ++i) EXPECT_NE(a[i], d[i]);
}

TEST(ChunkHasherTest, FingerprintCoversEveryInput) {
  const FingerprintInputs base{"size=10;xxh3=00", "llama", "f16", 256};
  const Hash128 f = ModelFingerprint(base);
  EXPECT_EQ(f, ModelFingerprint(base));
  FingerprintInputs x = base;
  x.weights_identity = "size=11;xxh3=00";
  EXPECT_NE(ModelFingerprint(x), f);
  x = base;
  x.arch = "qwen2";
  EXPECT_NE(ModelFingerprint(x), f);
  x = base;
  x.kv_dtype = "f32";
  EXPECT_NE(ModelFingerprint(x), f);
  x = base;
  x.chunk_tokens = 128;
  EXPECT_NE(ModelFingerprint(x), f);
  // Field boundaries matter: "ab"+"c" vs "a"+"bc".
  EXPECT_NE(ModelFingerprint({"ab", "c", "f16", 256}), ModelFingerprint({"a", "bc", "f16", 256}));
}

TEST(ChunkHasherTest, WeightsIdentityNamesSizeAndHeader) {
  const std::vector<uint8_t> header = {'G', 'G', 'U', 'F', 3, 0, 0, 0};
  const XXH128_hash_t h = XXH3_128bits(header.data(), header.size());
  char hex[40];
  std::snprintf(hex, sizeof(hex), "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  EXPECT_EQ(WeightsIdentity(1234, header), std::string("size=1234;xxh3=") + hex);
}

TEST(ChunkHasherTest, HexRoundTrip) {
  const Hash128 h{0x0011223344556677ULL, 0x8899aabbccddeeffULL};
  EXPECT_EQ(h.ToHex(), "8899aabbccddeeff0011223344556677");
  auto back = Hash128::FromHex("8899AABBCCDDEEFF0011223344556677");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, h);
  EXPECT_FALSE(Hash128::FromHex("8899aabbccddeeff001122334455667").ok());
  EXPECT_FALSE(Hash128::FromHex("8899aabbccddeeff001122334455667g").ok());
  EXPECT_FALSE(Hash128::FromHex("").ok());
}

}  // namespace
}  // namespace mneme::kv
